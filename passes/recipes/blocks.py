"""What the block-scaled recipes share: the amax → compute_scale → quantize chain per block and
the swizzle into a GEMM-ready layout. Operands are 2-D ``[rows, K]``; ``columnwise`` operands
(``[K, N]``) have blocks running down dim 0.
"""

from __future__ import annotations

from iree.compiler import ir

from passes.formats import FloatFormat
from passes.ir_types import builtin_tensor_type, tensor_info
from passes.named_ops import NamedOpBuilder, bool_attr, i64_array_attr, str_attr, variant_suffix
from passes.recipes.fp8_current import QuantizedOperand


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def emit_block_quantize(
    ops: NamedOpBuilder,
    x: ir.Value,
    block: tuple[int, int],
    fmt: FloatFormat,
    rule: str,
    rule_attrs: dict[str, ir.Attribute],
    scale_format: str,
    columnwise: bool,
    layer: str | None,
) -> QuantizedOperand:
    """amax per block → compute_scale (``rule``) → quantize; the scale grid is compact."""
    info = tensor_info(x.type)
    assert info is not None and info.rank == 2 and info.dtype == "f32", x.type
    grid = (ceil_div(info.shape[0], block[0]), ceil_div(info.shape[1], block[1]))
    block_name = f"block{block[0]}x{block[1]}"
    scale_elem = "f32" if scale_format == "fp32" else "i8"
    (amax,) = ops.call(
        "amax",
        variant_suffix(block_name, info.shape),
        [x],
        [builtin_tensor_type(grid, "f32")],
        {"block": i64_array_attr(block)},
        layer=layer,
    )
    (scale,) = ops.call(
        "compute_scale",
        variant_suffix(rule, fmt.name, grid),
        [amax],
        [builtin_tensor_type(grid, scale_elem)],
        {"rule": str_attr(rule), **rule_attrs},
        layer=layer,
    )
    data, stored = ops.call(
        "quantize",
        variant_suffix(fmt.name, block_name, scale_format, info.shape),
        [x, scale],
        [builtin_tensor_type(info.shape, "i8"), builtin_tensor_type(grid, scale_elem)],
        {
            "format": str_attr(fmt.name),
            "scaling": str_attr("block"),
            "block": i64_array_attr(block),
            "scale_format": str_attr(scale_format),
        },
        layer=layer,
    )
    return QuantizedOperand(data, stored, fmt, columnwise=columnwise, block=block)


def emit_swizzle(
    ops: NamedOpBuilder,
    scale: ir.Value,
    layout: str,
    transpose: bool,
    out_shape: tuple[int, ...],
    layer: str | None = None,
) -> ir.Value:
    """Compact scales → ``layout`` (``transpose``: S[row, k_block] is the compact grid's T)."""
    grid = tensor_info(scale.type)
    assert grid is not None
    (swizzled,) = ops.call(
        "swizzle",
        variant_suffix(layout, "t" if transpose else "n", grid.shape),
        [scale],
        [builtin_tensor_type(out_shape, grid.dtype)],
        {"layout": str_attr(layout), "transpose": bool_attr(transpose)},
        layer=layer,
    )
    return swizzled
