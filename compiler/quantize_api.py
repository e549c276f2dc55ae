"""``compiler.quantize``: one tensor through a recipe's compiled quantize core.

It builds a module whose body is exactly what the recipe pass emits for an operand
(``recipe.emit_quantize``, then ``emit_swizzle`` when asked), lowers it with the same CPU
lowering, compiles and runs it. Nothing here re-implements the numerics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import func

from compiler.runtime import to_numpy
from passes.errors import QmlirError
from passes.evaluate import compile_host_module
from passes.ir_types import builtin_tensor_type
from passes.lower_named_ops import lower_declarations, named_op_declarations
from passes.named_ops import NamedOpBuilder
from passes.recipes import Recipe, get_recipe

ENTRY = "quantize"
ROLES = ("activation", "weight")
USAGES = ("rowwise", "columnwise")


@dataclass(frozen=True)
class QuantizedTensor:
    """A quantized tensor, as the compiled quantize core wrote it.

    ``data``: uint8 element codes, the input's shape; nvfp4: E2M1 codes packed two per byte
    (low nibble = even element), ``[..., ceil(K/16) * 8]``.
    ``scale``: fp8-current/-delayed: float32 ``scale_inv`` (``x ≈ decode(data) * scale``);
    fp8-block: float32 ``scale_inv`` per block; mxfp8: uint8 E8M0 codes; nvfp4: uint8 E4M3 block
    decode scales. Compact (``[M, blocks of K]`` rowwise, ``[blocks of M, K]`` columnwise) unless
    ``swizzled`` (the GEMM-ready layout). nvfp4's columnwise usage quantizes the transpose.
    ``global_scale``: nvfp4's float32 per-tensor decode scale ``S_dec``.
    """

    data: np.ndarray
    scale: np.ndarray
    recipe: dict[str, Any]
    usage: str = "rowwise"
    swizzled: bool = False
    global_scale: np.ndarray | None = None

    def dequantize(self) -> np.ndarray:
        if self.recipe["name"] in ("nvfp4", "fp8-block"):
            raise QmlirError(f"dequantize() is not provided for {self.recipe['name']}")
        values = self.data.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
        if self.recipe["name"] in ("fp8-current", "fp8-delayed"):
            return values * self.scale
        if self.swizzled:
            raise QmlirError("dequantize() reads compact scales: quantize with swizzle=False")
        exponents = self.scale.astype(np.int32) - 127
        axis = 0 if self.usage == "columnwise" else 1
        expanded = np.repeat(exponents, 32, axis=axis)[: values.shape[0], : values.shape[1]]
        result = np.ldexp(values, expanded).astype(np.float32)
        result[expanded == 0xFF - 127] = np.nan  # a NaN scale
        return result


def quantize(
    x: Any,
    recipe: str | Recipe = "fp8-current",
    *,
    role: str = "activation",
    usage: str = "rowwise",
    swizzle: bool = False,
    **options: Any,
) -> QuantizedTensor:
    chosen = recipe if isinstance(recipe, Recipe) else get_recipe(recipe, options)
    if not hasattr(chosen, "emit_quantize"):
        raise QmlirError(f"recipe '{chosen.name}' does not quantize tensors")
    if role not in ROLES:
        raise QmlirError(f"role must be one of {', '.join(ROLES)}, not '{role}'")
    if usage not in USAGES:
        raise QmlirError(f"usage must be one of {', '.join(USAGES)}, not '{usage}'")
    if chosen.name == "fp8-delayed" and role == "activation":
        raise QmlirError(
            "fp8-delayed scales activations from state carried across calls: run a compiled "
            "module (CompiledModule.scaling_state()), or quantize with role='weight'"
        )
    blocked = chosen.two_dimensional
    if swizzle and not blocked:
        raise QmlirError(f"recipe '{chosen.name}' has one scale per tensor: nothing to swizzle")
    array = _as_f32(to_numpy(x))
    shape = _quantize_shape(array, blocked)
    text = quantize_module_text(chosen, shape, role, usage, swizzle)
    outputs = compile_host_module(text).modules.module[ENTRY](array.reshape(shape))
    data, scale, *rest = (np.array(o.to_host(), copy=True) for o in outputs)
    codes = data.view(np.uint8)
    scale = scale.view(np.uint8) if scale.dtype == np.int8 else scale
    if codes.size == array.size:  # unpacked codes: the input's shape
        codes = codes.reshape(array.shape)
    elif array.ndim > 2:  # packed FP4: the input's leading dims, packed K
        codes = codes.reshape(*array.shape[:-1], codes.shape[-1])
    global_scale = rest[0].astype(np.float32) if rest else None
    return QuantizedTensor(codes, scale, chosen.to_dict(), usage, swizzle, global_scale)


def _quantize_shape(array: np.ndarray, blocked: bool) -> tuple[int, ...]:
    if not blocked:
        return array.shape if array.ndim else (1,)
    if array.ndim == 0:
        return (1, 1)
    if array.ndim == 1:
        return (1, array.shape[0])
    rows = int(np.prod(array.shape[:-1]))
    return (rows, array.shape[-1])


def quantize_module_text(
    recipe: Recipe,
    shape: tuple[int, ...],
    role: str = "activation",
    usage: str = "rowwise",
    swizzle: bool = False,
) -> str:
    """The lowered module ``@quantize(x: f32) -> (codes, scale)`` for ``recipe``."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        x_type = builtin_tensor_type(shape, "f32")
        with ir.InsertionPoint(module.body):
            entry = func.FuncOp(ENTRY, ir.FunctionType.get([x_type], []))
        block = entry.add_entry_block()
        ops = NamedOpBuilder(module)
        extra = {"columnwise": usage == "columnwise"} if recipe.two_dimensional else {}
        with ir.InsertionPoint(block):
            q = recipe.emit_quantize(  # type: ignore[attr-defined]
                ops, block.arguments[0], constant=role == "weight", **extra
            )
            scale = recipe.emit_swizzle(ops, q) if swizzle else q.scale_inv  # type: ignore[attr-defined]
            results = [q.data, scale] + ([q.global_scale] if q.global_scale is not None else [])
            func.ReturnOp(results)
        entry.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([x_type], [r.type for r in results])
        )
        lower_declarations(module, named_op_declarations(module))
        return str(module)


def _as_f32(array: np.ndarray) -> np.ndarray:
    if array.dtype in (np.float32, np.float16, np.dtype(ml_dtypes.bfloat16)):
        return np.ascontiguousarray(array.astype(np.float32))
    raise QmlirError(f"quantize takes a float32, float16 or bfloat16 tensor, not {array.dtype}")
