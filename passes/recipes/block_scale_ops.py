"""cuDNN's block_scale_quantize / block_scale_dequantize as named ops (see spec/).

``scale = round_up_into(scale_format, amax(block) / vmax)``, ``y = round_to_even(x / scale)``;
dequantize ``y * scale``. Blocks of ``block_size`` run along the last dim (axis 1) or down dim 0
(axis 0) of a 2-D tensor; codes are one per element (E2M1 unpacked).
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import linalg, tensor

from passes.base.numbers import ceil_div
from passes.ir.dialect import (
    Amax,
    BlockScaleDequantize,
    ComputeScale,
    Quantize,
    ScaleFormat,
    ScaleRule,
    Scaling,
)
from passes.ir.formats import FORMATS
from passes.ir.named_ops import NamedOpBuilder, variant_suffix
from passes.ir.types import builtin_tensor_type, tensor_info

OUT_FORMATS = ("e4m3", "e2m1")
SCALE_FORMATS = ("e8m0", "e4m3")


def _block(axis: int, block_size: int) -> tuple[int, int]:
    return (block_size, 1) if axis == 0 else (1, block_size)


def emit_block_scale_quantize(
    ops: NamedOpBuilder,
    x: ir.Value,
    block_size: int,
    axis: int,
    transpose: bool,
    out_format: str,
    scale_format: str,
) -> tuple[ir.Value, ir.Value]:
    info = tensor_info(x.type)
    assert info is not None and info.rank == 2
    block = _block(axis, block_size)
    grid = (ceil_div(info.shape[0], block[0]), ceil_div(info.shape[1], block[1]))
    name = f"block{block[0]}x{block[1]}"
    (amax,) = ops.call(
        Amax(block=block),
        variant_suffix(name, info.shape),
        [x],
        [builtin_tensor_type(grid, "f32")],
    )
    rule = ComputeScale(
        rule=ScaleRule.CUDNN_ROUND_UP,
        scale_format=ScaleFormat(scale_format),
        fp8_max=FORMATS[out_format].max_finite,
    )
    (scale,) = ops.call(
        rule,
        variant_suffix(rule.rule.value, scale_format, out_format, grid),
        [amax],
        [builtin_tensor_type(grid, "i8")],
    )
    quantize = Quantize(
        format=FORMATS[out_format],
        scaling=Scaling.BLOCK,
        block=block,
        scale_format=ScaleFormat(scale_format),
        divide=True,
    )
    y, scale = ops.call(
        quantize,
        variant_suffix(out_format, name, scale_format, "divide", info.shape),
        [x, scale],
        [builtin_tensor_type(info.shape, "i8"), builtin_tensor_type(grid, "i8")],
    )
    if transpose:
        y, scale = transpose_2d(y), transpose_2d(scale)
    return y, scale


def emit_block_scale_dequantize(
    ops: NamedOpBuilder,
    y: ir.Value,
    scale: ir.Value,
    block_size: int,
    axis: int,
    out_format: str,
    scale_format: str,
) -> ir.Value:
    info = tensor_info(y.type)
    assert info is not None and info.rank == 2
    block = _block(axis, block_size)
    dequantize = BlockScaleDequantize(
        format=FORMATS[out_format], scale_format=ScaleFormat(scale_format), block=block
    )
    (out,) = ops.call(
        dequantize,
        variant_suffix(out_format, f"block{block[0]}x{block[1]}", scale_format, info.shape),
        [y, scale],
        [builtin_tensor_type(info.shape, "f32")],
    )
    return out


def transpose_2d(x: ir.Value) -> ir.Value:
    info = tensor_info(x.type)
    assert info is not None and info.rank == 2
    empty = tensor.EmptyOp([info.shape[1], info.shape[0]], ir.Type.parse(info.dtype))
    return linalg.transpose(x, outs=[empty.result], permutation=[1, 0]).results[0]
