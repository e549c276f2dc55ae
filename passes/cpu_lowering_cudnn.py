"""llvm-cpu lowerings of cuDNN's block_scale_quantize / block_scale_dequantize named ops.

``compute_scale`` rules ``cudnn_round_up`` (E8M0 or E4M3 scale, ``v = amax / vmax``) live with
the E8M0 rules in cpu_lowering_blocks; here are the data quantize (``vals / scale``) and the
dequantize (``vals * scale``).
"""

from __future__ import annotations

from iree.compiler import ir

from passes.cpu_lowering import (
    _decode,
    _format,
    _signature,
    _str,
    encode_snippet,
    template,
)
from passes.cpu_lowering_blocks import block_params
from passes.errors import QmlirError
from passes.formats import E4M3


def decode_scale_f64(scale_format: str) -> str:
    """``%sc_code`` (i8) → ``%scale64``: E8M0 2^(e-127) (0xFF NaN) or E4M3, exact in f64."""
    if scale_format == "e8m0":
        body = template("decode_e8m0_f64.mlir").template
    elif scale_format == "e4m3":
        body = _decode("sc_", E4M3) + "\n    %scale64 = arith.extf %sc_val : f32 to f64"
    else:
        raise QmlirError(f"unknown scale format '{scale_format}'")
    return template("decode_scale_f64.mlir").substitute(scale_format=scale_format, decode=body)


def decode_value(fmt_name: str, prefix: str) -> str:
    """``%{prefix}code`` (i8, one code per byte) → ``%{prefix}val`` (f32), E4M3 or E2M1."""
    if fmt_name == "e4m3":
        return _decode(prefix, E4M3)
    if fmt_name == "e2m1":
        return template("decode_e2m1_code.mlir").substitute(p=prefix) + template(
            "decode_e2m1.mlir"
        ).substitute(p=prefix, out=f"%{prefix}val")
    raise QmlirError(f"unknown element format '{fmt_name}'")


def lower_divide_quantize(decl: ir.Operation) -> str:
    (x, scale), _ = _signature(decl)
    out_format = _str(decl, "format")
    scale_format = _str(decl, "scale_format")
    return template("quantize_block_divide.mlir").substitute(
        block_params(decl, x, scale),
        scale_format=scale_format,
        out_format=out_format,
        decode_scale=decode_scale_f64(scale_format),
        x_f64=template("f64_from_f32.mlir").substitute(p="xd_", src="%xv"),
        q_f32=template("f32_from_f64.mlir").substitute(p="q_", src="%q_abs"),
        encode=encode_snippet(_format(out_format), x="%qv", s="%one"),
    )


def lower_block_scale_dequantize(decl: ir.Operation) -> str:
    (y, scale), _ = _signature(decl)
    out_format = _str(decl, "format")
    scale_format = _str(decl, "scale_format")
    return template("block_scale_dequantize.mlir").substitute(
        block_params(decl, y, scale),
        scale_format=scale_format,
        out_format=out_format,
        decode_scale=decode_scale_f64(scale_format),
        decode_y=decode_value(out_format, "y_"),
        p_f32=template("f32_from_f64.mlir").substitute(p="p_", src="%p_abs"),
    )
