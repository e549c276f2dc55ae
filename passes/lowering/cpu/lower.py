"""Which llvm-cpu lowering a named op takes, by its kind and typed attributes."""

from __future__ import annotations

from collections.abc import Callable

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.attributes import NamedOp, ScaleFormat, ScaleRule, Scaling
from passes.ir.formats import E2M1
from passes.lowering.cpu import (
    block_matmul,
    block_quantize,
    block_scales,
    cudnn,
    nvfp4,
    per_tensor,
    swizzle,
)
from passes.lowering.cpu.block_amax import lower_block_amax

Lowering = Callable[[NamedOp], str]

_COMPUTE_SCALE: dict[ScaleRule, Lowering] = {
    ScaleRule.FP8_PER_TENSOR: per_tensor.lower_compute_scale,
    ScaleRule.FP8_BLOCK: per_tensor.lower_compute_scale,
    ScaleRule.E8M0_CEIL: block_scales.lower_compute_scale_e8m0,
    ScaleRule.E8M0_FLOOR: block_scales.lower_compute_scale_e8m0,
    ScaleRule.E8M0_RNE: block_scales.lower_compute_scale_e8m0,
    ScaleRule.NVFP4_GLOBAL: block_scales.lower_compute_scale_nvfp4,
    ScaleRule.NVFP4_GLOBAL_TORCHAO: block_scales.lower_compute_scale_nvfp4,
    ScaleRule.NVFP4_BLOCK: block_scales.lower_compute_scale_nvfp4,
    ScaleRule.NVFP4_BLOCK_TORCHAO: block_scales.lower_compute_scale_nvfp4,
    ScaleRule.CUDNN_ROUND_UP: block_scales.lower_compute_scale_cudnn,
}

_BLOCK_QUANTIZE: dict[ScaleFormat, Lowering] = {
    ScaleFormat.FP32: block_quantize.lower_quantize_fp32_scales,
    ScaleFormat.E8M0: block_quantize.lower_quantize_e8m0_scales,
}


def lower_cpu(decl: ir.Operation) -> str:
    """The text of ``decl``'s ``func.func private`` definition for llvm-cpu."""
    op = NamedOp(decl)
    return lowering(op)(op)


def lowering(op: NamedOp) -> Lowering:
    kind = op.kind
    block = op.scaling is Scaling.BLOCK
    if kind == "amax":
        return lower_block_amax if block else per_tensor.lower_amax
    if kind == "compute_scale":
        found = _COMPUTE_SCALE.get(op.rule)
        if found is not None:
            return found
    elif kind == "quantize":
        if not block:
            return per_tensor.lower_quantize
        if op.has("divide"):
            return cudnn.lower_divide_quantize
        if op.format() == E2M1:
            return nvfp4.lower_nvfp4_quantize
        found = _BLOCK_QUANTIZE.get(op.scale_format)
        if found is not None:
            return found
    elif kind == "scaled_matmul":
        if not block:
            return per_tensor.lower_scaled_matmul
        if op.scale_format is ScaleFormat.NVFP4:
            return nvfp4.lower_nvfp4_scaled_matmul
        return block_matmul.lower_block_scaled_matmul
    elif kind == "swizzle":
        return swizzle.lower_swizzle
    elif kind == "amax_history_update":
        return per_tensor.lower_amax_history_update
    elif kind == "block_scale_dequantize":
        return cudnn.lower_block_scale_dequantize
    raise QmlirError(f"no CPU lowering for named op '{kind}' (@{op.name})")
