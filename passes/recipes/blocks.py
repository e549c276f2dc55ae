"""What the block-scaled recipes share: the amax → compute_scale → quantize chain per block and
the swizzle into a GEMM-ready layout. Operands are 2-D ``[rows, K]``; ``columnwise`` operands
(``[K, N]``) have blocks running down dim 0.
"""

from __future__ import annotations

from iree.compiler import ir

from passes.base.numbers import ceil_div
from passes.ir.dialect import (
    Amax,
    ComputeScale,
    Quantize,
    ScaledMatmul,
    ScaleFormat,
    ScaleRule,
    Scaling,
    Swizzle,
)
from passes.ir.formats import FloatFormat
from passes.ir.layouts import ScaleLayout, swizzled_shape
from passes.ir.named_ops import NamedOpBuilder, variant_suffix
from passes.ir.types import DYNAMIC, TensorInfo, builtin_tensor_type, tensor_info
from passes.recipes.base import QuantizedOperand


def block_count(size: int, block: int) -> int:
    """Blocks along a dim of ``size`` (:data:`DYNAMIC` stays dynamic: 1-element blocks)."""
    return DYNAMIC if size == DYNAMIC else ceil_div(size, block)


def emit_block_quantize(
    ops: NamedOpBuilder,
    x: ir.Value,
    block: tuple[int, int],
    fmt: FloatFormat,
    rule: ComputeScale,
    scale_format: ScaleFormat,
    columnwise: bool,
    layer: str | None,
) -> QuantizedOperand:
    """amax per block → ``rule`` (a compute_scale) → quantize; the scale grid is compact (rows
    dynamic with 1 x bk blocks: the grid has the same dynamic rows)."""
    info = tensor_info(x.type, dynamic=True)
    assert info is not None and info.rank == 2 and info.dtype == "f32", x.type
    assert info.shape[1] != DYNAMIC and (info.is_static or block[0] == 1), (x.type, block)
    grid = (block_count(info.shape[0], block[0]), ceil_div(info.shape[1], block[1]))
    block_name = f"block{block[0]}x{block[1]}"
    scale_elem = "f32" if scale_format is ScaleFormat.FP32 else "i8"
    (amax,) = ops.call(
        Amax(block=block),
        variant_suffix(block_name, info.shape),
        [x],
        [builtin_tensor_type(grid, "f32")],
        layer=layer,
    )
    (scale,) = ops.call(
        rule,
        variant_suffix(rule.rule.value, fmt.name, grid),
        [amax],
        [builtin_tensor_type(grid, scale_elem)],
        layer=layer,
    )
    quantize = Quantize(format=fmt, scaling=Scaling.BLOCK, block=block, scale_format=scale_format)
    data, stored = ops.call(
        quantize,
        variant_suffix(fmt.name, block_name, scale_format.value, info.shape),
        [x, scale],
        [builtin_tensor_type(info.shape, "i8"), builtin_tensor_type(grid, scale_elem)],
        layer=layer,
    )
    return QuantizedOperand(data, stored, fmt, columnwise=columnwise, block=block)


def emit_swizzle(
    ops: NamedOpBuilder,
    scale: ir.Value,
    layout: ScaleLayout,
    transpose: bool,
    out_shape: tuple[int, ...],
    layer: str | None = None,
) -> ir.Value:
    """Compact scales → ``layout`` (``transpose``: S[row, k_block] is the compact grid's T)."""
    grid = tensor_info(scale.type, dynamic=True)
    assert grid is not None
    (swizzled,) = ops.call(
        Swizzle(layout=layout, transpose=transpose),
        variant_suffix(layout.value, "t" if transpose else "n", grid.shape),
        [scale],
        [builtin_tensor_type(out_shape, grid.dtype)],
        layer=layer,
    )
    return swizzled


def emit_block_scaled_matmul(
    ops: NamedOpBuilder,
    a: QuantizedOperand,
    b: QuantizedOperand,
    scales: tuple[ir.Value, ir.Value],
    b_transposed: bool,
    out: TensorInfo,
    scale_format: ScaleFormat,
    layouts: tuple[ScaleLayout, ScaleLayout],
    layer: str | None = None,
) -> ir.Value:
    """``scaled_matmul`` of two block-quantized operands with GEMM-ready (swizzled) scales.

    Operands: ``a, scale_a, [global_a], b, scale_b, [global_b]`` (globals for NVFP4).
    """
    a_info = tensor_info(a.data.type, dynamic=True)
    b_info = tensor_info(b.data.type, dynamic=True)
    assert a_info is not None and b_info is not None
    a_layout, b_layout = layouts
    ga = [a.global_scale] if a.global_scale is not None else []
    gb = [b.global_scale] if b.global_scale is not None else []
    gemm = ScaledMatmul(
        a_format=a.fmt,
        b_format=b.fmt,
        scaling=Scaling.BLOCK,
        scale_format=scale_format,
        a_layout=a_layout,
        b_layout=b_layout,
        a_block=(a.block[0], a.block[1]),
        b_block=(b.block[0], b.block[1]),
        b_transposed=b_transposed,
    )
    layout_name = a_layout.value if a_layout == b_layout else f"{a_layout.value}x{b_layout.value}"
    (result,) = ops.call(
        gemm,
        variant_suffix(
            f"{a.fmt.name}x{b.fmt.name}",
            layout_name,
            "nt" if b_transposed else "nn",
            a_info.shape,
            b_info.shape,
        ),
        [a.data, scales[0], *ga, b.data, scales[1], *gb],
        [out.with_dtype("f32").builtin()],
        layer=layer,
    )
    return result


def emit_fp8_block_quantize(
    ops: NamedOpBuilder,
    x: ir.Value,
    block: tuple[int, int],
    fmt: FloatFormat,
    epsilon: float,
    pow2: bool,
    columnwise: bool,
    layer: str | None,
) -> QuantizedOperand:
    """:func:`emit_block_quantize` with TE's FP8 block rule and FP32 ``scale_inv`` (fp8-block's
    1x128 / 128x128 blocks, fp8-rowwise's rows)."""
    rule = ComputeScale(
        rule=ScaleRule.FP8_BLOCK, fp8_max=fmt.max_finite, epsilon=epsilon, pow2=pow2
    )
    return emit_block_quantize(ops, x, block, fmt, rule, ScaleFormat.FP32, columnwise, layer)


def emit_fp32_swizzle(
    ops: NamedOpBuilder, q: QuantizedOperand, layout: ScaleLayout, layer: str | None
) -> ir.Value:
    """Compact FP32 scales → GEMM-ready: 1D [k_blocks, pad4(rows)], 2D [rows/128, pad4(.)]."""
    grid = tensor_info(q.scale_inv.type, dynamic=True)
    assert grid is not None
    rows, k_blocks = (grid.shape[1], grid.shape[0]) if q.columnwise else grid.shape
    shape = swizzled_shape(layout, rows, k_blocks)
    return emit_swizzle(ops, q.scale_inv, layout, q.columnwise, shape, layer)


def emit_fp32_block_gemm(
    ops: NamedOpBuilder,
    a: QuantizedOperand,
    b: QuantizedOperand,
    layouts: tuple[ScaleLayout, ScaleLayout],
    b_transposed: bool,
    out: TensorInfo,
    layer: str | None,
) -> ir.Value:
    """Both operands' FP32 scales swizzled to ``layouts``, then the block-scaled GEMM."""
    scales = (
        emit_fp32_swizzle(ops, a, layouts[0], layer),
        emit_fp32_swizzle(ops, b, layouts[1], layer),
    )
    return emit_block_scaled_matmul(
        ops, a, b, scales, b_transposed, out, ScaleFormat.FP32, layouts, layer
    )


def emit_mx_row_swizzle(
    ops: NamedOpBuilder, q: QuantizedOperand, layer: str | None = None
) -> ir.Value:
    """FP4 operands' compact ``[rows, K blocks]`` scales (rowwise: a ``[K, N]`` weight was
    transposed first) → the 128x4 GEMM layout."""
    grid = tensor_info(q.scale_inv.type, dynamic=True)
    assert grid is not None
    layout = ScaleLayout.MX
    return emit_swizzle(ops, q.scale_inv, layout, False, swizzled_shape(layout, *grid.shape), layer)


def emit_fp4_scaled_matmul(
    ops: NamedOpBuilder,
    a: QuantizedOperand,
    b: QuantizedOperand,
    out: TensorInfo,
    scale_format: ScaleFormat,
    layer: str | None = None,
) -> ir.Value:
    """The GEMM of two FP4 operands (``[rows, K]`` both, B "nt"), their scales swizzled."""
    scales = (emit_mx_row_swizzle(ops, a, layer), emit_mx_row_swizzle(ops, b, layer))
    layouts = (ScaleLayout.MX,) * 2
    return emit_block_scaled_matmul(ops, a, b, scales, True, out, scale_format, layouts, layer)
