"""cuDNN's block-scale ops: ``block_scale_quantize`` and ``block_scale_dequantize``.

    y, scale = compiler.block_scale_quantize(x, 32, axis=-1)                 # MXFP8
    y, scale = compiler.block_scale_quantize(x, 16, out_dtype="e2m1", scale_dtype="e4m3")  # NVFP4
    x_hat = compiler.block_scale_dequantize(y, scale, 32, axis=-1)

``scale = round_up_into(scale format, amax(block) / vmax)``, ``y = round_to_even(x / scale)``
(spec/block_scale_quantize_cudnn.txt). Codes come back as uint8 numpy arrays, one per element
(E2M1 unpacked). Like ``compiler.quantize``, each call compiles (cached by shape) and runs the
named ops' CPU lowering.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import func

from compiler.runtime import to_numpy
from passes.base.errors import QmlirError
from passes.base.numbers import ceil_div
from passes.host.call import call, host_copies
from passes.host.evaluate import compile_host_module
from passes.ir.named_ops import NamedOpBuilder
from passes.ir.types import builtin_tensor_type
from passes.lowering.declarations import lower_declarations, named_op_declarations
from passes.recipes.block_scale_ops import (
    OUT_FORMATS,
    SCALE_FORMATS,
    emit_block_scale_dequantize,
    emit_block_scale_quantize,
)

_DTYPES = {
    "e4m3": "e4m3",
    "float8_e4m3fn": "e4m3",
    "torch.float8_e4m3fn": "e4m3",
    "e2m1": "e2m1",
    "float4_e2m1fn": "e2m1",
    "float4_e2m1fn_x2": "e2m1",
    "torch.float4_e2m1fn_x2": "e2m1",
    "e8m0": "e8m0",
    "float8_e8m0fnu": "e8m0",
    "torch.float8_e8m0fnu": "e8m0",
}
_DEFAULT_FORMATS = {32: ("e4m3", "e8m0"), 16: ("e2m1", "e4m3")}


def _format(value: Any, allowed: tuple[str, ...], what: str) -> str:
    name = _DTYPES.get(str(value).lower().removeprefix("ml_dtypes."))
    if name not in allowed:
        raise QmlirError(f"{what} must be one of {', '.join(allowed)}, not {value}")
    return name


def _resolve(block_size: int, axis: int, out_dtype: Any, scale_dtype: Any) -> tuple[int, str, str]:
    if not isinstance(block_size, int) or block_size < 1:
        raise QmlirError(f"block_size must be a positive integer, not {block_size!r}")
    if axis not in (-1, 1, 0, -2):
        raise QmlirError(f"axis must be -1 (the last dim) or 0 for a 2-D tensor, not {axis}")
    default_out, default_scale = _DEFAULT_FORMATS.get(block_size, ("e4m3", "e8m0"))
    out = _format(out_dtype or default_out, OUT_FORMATS, "out_dtype")
    scale = _format(scale_dtype or default_scale, SCALE_FORMATS, "scale_dtype")
    return (0 if axis in (0, -2) else 1), out, scale


def _as_2d(array: np.ndarray, what: str) -> np.ndarray:
    if array.ndim == 1:
        return array.reshape(1, -1)
    if array.ndim != 2:
        raise QmlirError(f"{what} must be 1-D or 2-D, not {array.ndim}-D")
    return array


def _module(build: Any, args: list[tuple[tuple[int, ...], str]]) -> str:
    """A lowered module ``@main(args...)`` whose body ``build(ops, block_args)`` emits."""
    with ir.Context(), ir.Location.unknown():
        arg_types = [builtin_tensor_type(shape, dtype) for shape, dtype in args]
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            entry = func.FuncOp("main", ir.FunctionType.get(arg_types, []))
        block = entry.add_entry_block()
        with ir.InsertionPoint(block):
            results = build(NamedOpBuilder(module), list(block.arguments))
            func.ReturnOp(results)
        entry.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(arg_types, [r.type for r in results])
        )
        lower_declarations(module, named_op_declarations(module))
        return str(module)


def _run(text: str, *args: np.ndarray) -> list[np.ndarray]:
    return host_copies(call(compile_host_module(text).modules.module["main"], *args))


def block_scale_quantize(
    x: Any,
    block_size: int = 32,
    axis: int = -1,
    transpose: bool = False,
    out_dtype: Any = None,
    scale_dtype: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(y codes uint8, scale codes uint8); ``transpose`` returns both transposed.

    Defaults by block size: 32 → E4M3 data, E8M0 scales (MXFP8); 16 → E2M1 data, E4M3 scales
    (NVFP4).
    """
    ax, out, scale = _resolve(block_size, axis, out_dtype, scale_dtype)
    array = _as_2d(np.asarray(to_numpy(x), dtype=np.float32), "x")
    text = _module(
        lambda ops, args: list(
            emit_block_scale_quantize(ops, args[0], block_size, ax, transpose, out, scale)
        ),
        [(array.shape, "f32")],
    )
    y, s = _run(text, np.ascontiguousarray(array))
    return y.view(np.uint8), s.view(np.uint8)


def block_scale_dequantize(
    y: Any,
    scale: Any,
    block_size: int = 32,
    axis: int = -1,
    out_dtype: Any = None,
    scale_dtype: Any = None,
) -> np.ndarray:
    """float32 ``decode(y) * decode(scale)``, each scale broadcast over its block."""
    ax, out, scale_format = _resolve(block_size, axis, out_dtype, scale_dtype)
    codes = _as_2d(np.asarray(y, dtype=np.uint8), "y")
    scales = _as_2d(np.asarray(scale, dtype=np.uint8), "scale")
    block = (block_size, 1) if ax == 0 else (1, block_size)
    expected = (ceil_div(codes.shape[0], block[0]), ceil_div(codes.shape[1], block[1]))
    if scales.shape != expected:
        raise QmlirError(f"scale has shape {list(scales.shape)}, y needs {list(expected)}")
    text = _module(
        lambda ops, args: [
            emit_block_scale_dequantize(ops, args[0], args[1], block_size, ax, out, scale_format)
        ],
        [(codes.shape, "i8"), (scales.shape, "i8")],
    )
    (result,) = _run(text, codes.view(np.int8), scales.view(np.int8))
    return result
