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
from compiler.runtime.dequantize import dequantize_2d
from passes.base.errors import QmlirError
from passes.host.call import IMPORT_ALIGNMENT, aligned_empty, call, host_copies, imported
from passes.host.evaluate import compile_host_module, compile_host_vmfb, load_host_module
from passes.ir.dialect import NamedOp, Quantize, ScaleFormat
from passes.ir.named_ops import NamedOpBuilder, callee_name, symbol_name
from passes.ir.types import builtin_tensor_type
from passes.lowering.declarations import lower_declarations, named_op_declarations
from passes.recipes import Recipe, Role, ScalingRecipe, Usage, get_recipe

ENTRY = "quantize"


@dataclass(frozen=True)
class QuantizedTensor:
    """A quantized tensor, as the compiled quantize core wrote it.

    ``data``: uint8 element codes, the input's shape; nvfp4: E2M1 codes packed two per byte
    (low nibble = even element), ``[..., ceil(K/16) * 8]`` (a 0-d input: ``[8]``).
    ``dequantize()`` returns the input's shape for every recipe and rank, empty tensors included.
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

    # how the codes decode: element format, scale format (fp32 | e8m0 | e4m3), the block shape
    # over the quantized 2-D array (None: one scale per tensor) and that array's shape
    element_format: str = "e4m3"
    scale_format: str = "fp32"
    block: tuple[int, int] | None = None
    quantized_shape: tuple[int, int] = (0, 0)
    # what dequantize() returns: the input's shape (nvfp4's columnwise usage: the transpose of
    # the input flattened to 2-D)
    shape: tuple[int, ...] = ()

    def dequantize(self) -> np.ndarray:
        """float32 values ``decode(data) * scale`` in ``data``'s frame (nvfp4's columnwise usage:
        the transpose); needs the compact scales (``swizzle=False``)."""
        if self.swizzled:
            raise QmlirError("dequantize() reads compact scales: quantize with swizzle=False")
        values = dequantize_2d(
            self.data,
            self.scale,
            self.element_format,
            self.scale_format,
            self.block,
            self.quantized_shape,
            self.global_scale,
        )
        return values.reshape(self.shape)


def quantize(
    x: Any,
    recipe: str | Recipe = "fp8-current",
    *,
    role: str = "activation",
    usage: str = "rowwise",
    swizzle: bool = False,
    **options: Any,
) -> QuantizedTensor:
    chosen = _scaling_recipe(recipe, options)
    role_, usage_ = _choice(Role, role, "role"), _choice(Usage, usage, "usage")
    if chosen.has_scaling_state(role_):
        raise QmlirError(
            f"{chosen.name} scales {role}s from state carried across calls: run a compiled "
            "module (CompiledModule.scaling_state()), or quantize it as a weight (--role weight; "
            "role='weight' in Python)"
        )
    if swizzle and not chosen.two_dimensional:
        raise QmlirError(f"recipe '{chosen.name}' has one scale per tensor: nothing to swizzle")
    array = _as_f32(to_numpy(x))
    shape = _quantize_shape(array, chosen.two_dimensional)
    program = quantize_program(chosen, shape, role_, usage_, swizzle)
    context = compile_host_module(program.text)
    function = context.modules.module[ENTRY]
    operand = array.reshape(shape)  # kept alive through the call: IREE reads it in place
    outputs = host_copies(call(function, imported(context.config.device, operand)))
    return _quantized(outputs, array, shape, chosen, program, usage, swizzle)


def quantize_steady_state(x: Any, recipe: ScalingRecipe) -> QuantizedTensor:
    """An activation quantized by a recipe with scaling state (fp8-delayed) once that state has
    seen ``x``: the compiled core, in a fresh module, called twice on ``x``; the first call
    records x's amax in the history of zeros, the second quantizes with the scale it leaves."""
    array = _as_f32(to_numpy(x))
    shape = _quantize_shape(array, recipe.two_dimensional)
    program = quantize_program(recipe, shape, Role.ACTIVATION, Usage.ROWWISE)
    context = load_host_module(compile_host_vmfb(program.text))
    function = context.modules.module[ENTRY]
    operand = array.reshape(shape)  # kept alive through the calls: IREE reads it in place
    argument = imported(context.config.device, operand)
    call(function, argument)
    outputs = host_copies(call(function, argument))
    return _quantized(outputs, array, shape, recipe, program, "rowwise", False)


def _quantized(
    outputs: list[np.ndarray],
    array: np.ndarray,
    shape: tuple[int, ...],
    recipe: ScalingRecipe,
    program: QuantizeProgram,
    usage: str,
    swizzle: bool,
) -> QuantizedTensor:
    data, scale, *rest = outputs
    codes = data.view(np.uint8)
    scale = scale.view(np.uint8) if scale.dtype == np.int8 else scale
    flat = (int(np.prod(shape[:-1])), shape[-1]) if len(shape) > 1 else (1, shape[0])
    packed = program.element_format == "e2m1"
    if program.transposed:  # nvfp4 columnwise: codes of the flattened input's transpose
        values_shape: tuple[int, ...] = flat[::-1]
    else:  # the input's shape; packed FP4 codes: its leading dims, then the packed K
        values_shape = array.shape
        packed_shape = (*array.shape[:-1], codes.shape[-1]) if array.ndim else (codes.size,)
        codes = codes.reshape(packed_shape if packed else array.shape)
    global_scale = rest[0].astype(np.float32) if rest else None
    return QuantizedTensor(
        codes,
        scale,
        recipe.to_dict(),
        usage,
        swizzle,
        global_scale,
        element_format=program.element_format,
        scale_format=program.scale_format,
        block=program.block,
        quantized_shape=flat[::-1] if program.transposed else flat,
        shape=tuple(values_shape),
    )


def _quantize_shape(array: np.ndarray, blocked: bool) -> tuple[int, ...]:
    if not blocked:
        return array.shape if array.ndim else (1,)
    if array.ndim == 0:
        return (1, 1)
    if array.ndim == 1:
        return (1, array.shape[0])
    rows = int(np.prod(array.shape[:-1]))
    return (rows, array.shape[-1])


@dataclass(frozen=True)
class QuantizeProgram:
    """The lowered module ``@quantize(x: f32) -> (codes, scale[, global_scale])`` and how its
    outputs decode (``block`` None: one scale per tensor; ``transposed``: codes of x's T)."""

    text: str
    element_format: str
    scale_format: str
    block: tuple[int, int] | None
    transposed: bool


def _scaling_recipe(recipe: str | Recipe, options: dict[str, Any]) -> ScalingRecipe:
    chosen = recipe if isinstance(recipe, Recipe) else get_recipe(recipe, options)
    if not isinstance(chosen, ScalingRecipe):
        raise QmlirError(f"recipe '{chosen.name}' does not quantize tensors")
    return chosen


def _choice(kind: type[Role] | type[Usage], value: Any, what: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(m.value for m in kind)
        raise QmlirError(f"{what} must be one of {choices}, not '{value}'") from None


def quantize_program(
    recipe: ScalingRecipe,
    shape: tuple[int, ...],
    role: Role = Role.ACTIVATION,
    usage: Usage = Usage.ROWWISE,
    swizzle: bool = False,
) -> QuantizeProgram:
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        x_type = builtin_tensor_type(shape, "f32")
        with ir.InsertionPoint(module.body):
            entry = func.FuncOp(ENTRY, ir.FunctionType.get([x_type], []))
        block = entry.add_entry_block()
        ops = NamedOpBuilder(module)
        with ir.InsertionPoint(block):
            q = recipe.emit_quantize(ops, block.arguments[0], role, usage)
            scale = recipe.emit_swizzle(ops, q) if swizzle else q.scale_inv
            results = [q.data, scale] + ([q.global_scale] if q.global_scale is not None else [])
            func.ReturnOp(results)
        entry.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([x_type], [r.type for r in results])
        )
        quantize = _quantize_record(module, q.data)
        lower_declarations(module, named_op_declarations(module))
        return QuantizeProgram(
            text=str(module),
            element_format=quantize.format.name,
            scale_format=(quantize.scale_format or ScaleFormat.FP32).value,
            block=quantize.block,
            transposed=q.transposed,
        )


def _quantize_record(module: ir.Module, data: ir.Value) -> Quantize:
    """The record of the ``quantize`` that wrote ``data``: how its codes and scales decode."""
    callee = callee_name(ir.OpResult(data).owner.operation)
    decl = next(
        op.operation
        for op in module.body.operations
        if "sym_name" in op.operation.attributes and symbol_name(op.operation) == callee
    )
    return NamedOp(decl).record(Quantize)


def quantize_module_text(
    recipe: ScalingRecipe,
    shape: tuple[int, ...],
    role: str = "activation",
    usage: str = "rowwise",
    swizzle: bool = False,
) -> str:
    """The lowered module ``@quantize(x: f32) -> (codes, scale)`` for ``recipe``."""
    return quantize_program(recipe, shape, Role(role), Usage(usage), swizzle).text


def _as_f32(array: np.ndarray) -> np.ndarray:
    """``array`` as a C-contiguous, 64-byte-aligned float32 array, so that IREE reads it in
    place rather than copying it at the call (``passes/host/call.imported``; a 4096 x 4096
    tensor's quantize spent most of its time in that copy, benchmarks/RESULTS.md): the array
    itself where it is one already (a torch tensor's memory is; the call only reads it), else a
    copy."""
    if array.dtype not in (np.float32, np.float16, np.dtype(ml_dtypes.bfloat16)):
        raise QmlirError(f"quantize takes a float32, float16 or bfloat16 tensor, not {array.dtype}")
    flags = array.flags
    aligned = array.ctypes.data % IMPORT_ALIGNMENT == 0
    if array.dtype == np.float32 and flags.c_contiguous and flags.writeable and aligned:
        return array
    out = aligned_empty(array.size * 4).view(np.float32).reshape(array.shape)
    out[...] = array  # a 0-d input stays 0-d
    return out
