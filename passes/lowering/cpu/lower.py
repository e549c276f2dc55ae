"""Which llvm-cpu lowering a named op takes: :data:`LOWERINGS`, one selector per op kind.

A selector reads the op's record and returns the function that writes its definition, or None
where no template takes those attributes (an error). ``passes/lowering/cuda/lower.py`` has a
table of the same shape.
"""

from __future__ import annotations

from collections.abc import Callable

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.dialect import GemvIsa, NamedOp, OpKind, ScaleFormat, ScaleRule, Scaling
from passes.ir.formats import E2M1
from passes.lowering.cpu import (
    block_matmul,
    block_quantize,
    block_scales,
    cudnn,
    gemm,
    gemv,
    int_gemm,
    mxfp4,
    nvfp4,
    per_tensor,
    swizzle,
)
from passes.lowering.cpu.block_amax import lower_block_amax

Lowering = Callable[[NamedOp], str]
Selector = Callable[[NamedOp], Lowering | None]

# Each rule's lowering, from the modules that lower them (one table each; tests/unit/
# test_lowering_tables.py: every rule in exactly one).
_COMPUTE_SCALE: dict[ScaleRule, Lowering] = {
    **per_tensor.COMPUTE_SCALE,
    **block_scales.COMPUTE_SCALE,
}


def compute_scale_lowering(rule: ScaleRule) -> Lowering | None:
    """The llvm-cpu lowering of ``compute_scale`` by ``rule`` (None: only cuda has one)."""
    return _COMPUTE_SCALE.get(rule)


_BLOCK_QUANTIZE: dict[ScaleFormat, Lowering] = {
    ScaleFormat.FP32: block_quantize.lower_quantize_fp32_scales,
    ScaleFormat.E8M0: block_quantize.lower_quantize_e8m0_scales,
}


def _amax(op: NamedOp) -> Lowering:
    return lower_block_amax if op.attrs.scaling is Scaling.BLOCK else per_tensor.lower_amax


def _quantize(op: NamedOp) -> Lowering | None:
    if op.attrs.scaling is not Scaling.BLOCK:
        return per_tensor.lower_quantize
    if op.attrs.divide:
        return cudnn.lower_divide_quantize
    if op.attrs.format == E2M1:
        if op.attrs.scale_format is ScaleFormat.E8M0:
            return mxfp4.lower_mxfp4_quantize
        return nvfp4.lower_nvfp4_quantize
    return _BLOCK_QUANTIZE.get(op.attrs.scale_format)


def _scaled_matmul(op: NamedOp) -> Lowering:
    if op.attrs.rounded and not op.attrs.codes_gemm:
        raise QmlirError(f"@{op.name}: only a codes GEMM (prefill-gemm's) rounds its result")
    if op.attrs.gemv:
        return gemv.lower_gemv
    if op.attrs.codes_gemm is GemvIsa.AVX2:
        return int_gemm.lower_int_gemm
    if op.attrs.codes_gemm:
        return gemm.lower_gemm
    if op.attrs.scaling is not Scaling.BLOCK:
        return per_tensor.lower_scaled_matmul
    if op.attrs.scale_format is ScaleFormat.NVFP4:
        return nvfp4.lower_nvfp4_scaled_matmul
    if op.attrs.a_format == E2M1:
        return mxfp4.lower_mxfp4_scaled_matmul
    return block_matmul.lower_block_scaled_matmul


LOWERINGS: dict[OpKind, Selector] = {
    OpKind.AMAX: _amax,
    OpKind.COMPUTE_SCALE: lambda op: compute_scale_lowering(op.attrs.rule),
    OpKind.QUANTIZE: _quantize,
    OpKind.SCALED_MATMUL: _scaled_matmul,
    OpKind.SWIZZLE: lambda op: swizzle.lower_swizzle,
    OpKind.AMAX_HISTORY_UPDATE: lambda op: per_tensor.lower_amax_history_update,
    OpKind.BLOCK_SCALE_DEQUANTIZE: lambda op: cudnn.lower_block_scale_dequantize,
    # fused_quantize: none (only the cuda pipeline fuses, onto its kernels)
}


def lower_cpu(decl: ir.Operation) -> str:
    """The text of ``decl``'s ``func.func private`` definition for llvm-cpu."""
    op = NamedOp(decl)
    return lowering(op)(op)


def lowering(op: NamedOp) -> Lowering:
    select = LOWERINGS.get(op.kind)
    found = select(op) if select is not None else None
    if found is None:
        raise QmlirError(f"no CPU lowering for named op '{op.kind.value}' (@{op.name})")
    return found
