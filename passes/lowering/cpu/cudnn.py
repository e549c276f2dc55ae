"""llvm-cpu lowerings of cuDNN's block_scale_quantize / block_scale_dequantize named ops.

``compute_scale`` rule ``cudnn_round_up`` (E8M0 or E4M3 scale, ``v = amax / vmax``) lives with
the other block rules in ``block_scales.py``; here are the data quantize (``vals / scale``) and
the dequantize (``vals * scale``).
"""

from __future__ import annotations

from passes.ir.dialect import NamedOp
from passes.ir.formats import E4M3
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import block_params, definition


def lower_divide_quantize(op: NamedOp) -> str:
    (x, scale), _ = op.signature()
    out_format = op.attrs.format
    scale_format = op.attrs.scale_format.value
    return definition(
        "quantize_block_divide.mlir",
        block_params(op, x, scale),
        scale_format=scale_format,
        out_format=out_format.name,
        decode_scale=snippets.decode_scale_f64(scale_format),
        x_f64=snippets.f64_from_f32("xd_", "%xv"),
        q_f32=snippets.f32_from_f64("q_", "%q_abs"),
        encode=snippets.encode(out_format, x="%qv", s="%one"),
    )


def lower_block_scale_dequantize(op: NamedOp) -> str:
    (y, scale), _ = op.signature()
    out_format = op.attrs.format
    scale_format = op.attrs.scale_format.value
    bm, bk = op.attrs.block
    if out_format == E4M3 and scale_format == "e8m0" and bm == 1 and y.shape[1] % bk == 0:
        # an FP8 KV cache's layout (MXFP8's): the elementwise form, the same values
        return definition(
            "block_scale_dequantize_rows.mlir",
            block_params(op, y, scale),
            decode_y=snippets.decode("y_", E4M3),
        )
    return definition(
        "block_scale_dequantize.mlir",
        block_params(op, y, scale),
        scale_format=scale_format,
        out_format=out_format.name,
        decode_scale=snippets.decode_scale_f64(scale_format),
        decode_y=snippets.decode_value(out_format, "y_"),
        p_f32=snippets.f32_from_f64("p_", "%p_abs"),
    )
