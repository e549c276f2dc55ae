"""llvm-cpu lowerings of the block-scaled named ops (MXFP8 now; the block-scaled recipes share it).

A block-scaled operand is 2-D ``[rows, K]`` data with one scale per block; its *logical* scale
matrix is ``S[row, k_block]``. ``swizzle`` writes S (read from the compact layout, transposed
when the blocks ran down columns) into a GEMM-ready layout; ``scaled_matmul`` reads S back from
that layout while it dequantizes, so the layouts live in one place: :func:`layout_offset`.
"""

from __future__ import annotations

import math

from iree.compiler import ir

from passes.cpu_lowering import (
    _attr_text,
    _bool,
    _float,
    _format,
    _signature,
    _str,
    encode_snippet,
    template,
)
from passes.errors import QmlirError
from passes.ir_types import shape_text
from passes.named_ops import symbol_name

MX_TILE_ROWS, MX_TILE_COLS = 128, 4


def block_of(decl: ir.Operation, key: str = "block") -> tuple[int, int]:
    bm, bk = ir.DenseI64ArrayAttr(decl.attributes[f"qmlir.{key}"])
    return int(bm), int(bk)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def lower_block_amax(decl: ir.Operation) -> str:
    (x,), (out,) = _signature(decl)
    bm, bk = block_of(decl)
    m, k = x.shape
    mb, kb = out.shape
    return template("amax_block.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        M=m,
        K=k,
        Mb=mb,
        Kb=kb,
        bm=bm,
        bk=bk,
        Mp=mb * bm,
        Kp=kb * bk,
        pad_m=mb * bm - m,
        pad_k=kb * bk - k,
    )


E8M0_RULES = ("e8m0_ceil", "e8m0_floor", "e8m0_rne")  # templates/cpu/e8m0_rule_<r>.mlir


def lower_compute_scale_e8m0(decl: ir.Operation) -> str:
    (amax,), _ = _signature(decl)
    rule = _str(decl, "rule")
    if rule not in E8M0_RULES:
        raise QmlirError(f"no CPU lowering for compute_scale rule '{rule}'")
    fmt_max = _float(decl, "fp8_max")
    import struct

    inv = struct.unpack(">f", struct.pack(">f", 1.0 / fmt_max))[0]  # f32(1/max), as TE has it
    short = rule.removeprefix("e8m0_")
    divide = short == "rne"  # PyTorch divides by max; TE multiplies by f32(1/max)
    constant = fmt_max if divide else inv
    return template("compute_scale_e8m0.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        rule=rule,
        rule_body=template(f"e8m0_rule_{short}.mlir").substitute(
            emax_elem=int(math.floor(math.log2(fmt_max)))
        ),
        v_doc=f"amax / {fmt_max:g}" if divide else f"amax * f32(1/{fmt_max:g})",
        p_op="divf" if divide else "mulf",
        p_const="0x" + struct.pack(">d", constant).hex().upper(),
        Mb=amax.shape[0],
        Kb=amax.shape[1],
    )


def ldexp_snippet(prefix: str, src: str, k: str) -> str:
    return template("ldexp_f32.mlir").substitute(p=prefix, src=src, k=k)


def lower_block_quantize(decl: ir.Operation) -> str:
    (x, scale), _ = _signature(decl)
    if _str(decl, "scaling") != "block" or _str(decl, "scale_format") != "e8m0":
        raise QmlirError(f"no CPU lowering for quantize @{symbol_name(decl)}")
    fmt = _format(_str(decl, "format"))
    bm, bk = block_of(decl)
    return template("quantize_block_e8m0.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        M=x.shape[0],
        K=x.shape[1],
        Mb=scale.shape[0],
        Kb=scale.shape[1],
        bm=bm,
        bk=bk,
        ldexp=ldexp_snippet("l_", "%in", "%shift"),
        encode=encode_snippet(fmt, x="%l_out", s="%one"),
        nan_code=fmt.nan_code,
    )


def layout_offset(layout: str, rows: int, cols: int, row: str, col: str, out: str) -> str:
    """MLIR computing ``%{out}``, where S[row, col] of an S [rows, cols] lives in ``layout``."""
    if layout != "mx":
        raise QmlirError(f"unknown scale layout '{layout}'")
    return template("mx_offset.mlir").substitute(
        out=out, row=row, col=col, col_tiles=ceil_div(cols, MX_TILE_COLS)
    )


def swizzled_size(layout: str, rows: int, cols: int) -> tuple[int, ...]:
    if layout != "mx":
        raise QmlirError(f"unknown scale layout '{layout}'")
    tiles = ceil_div(rows, MX_TILE_ROWS) * ceil_div(cols, MX_TILE_COLS)
    return (tiles * MX_TILE_ROWS * MX_TILE_COLS,)


def lower_swizzle(decl: ir.Operation) -> str:
    (compact,), (out,) = _signature(decl)
    layout, transpose = _str(decl, "layout"), _bool(decl, "transpose")
    if layout != "mx":
        raise QmlirError(f"no CPU lowering for scale layout '{layout}'")
    rows, cols = (compact.shape[1], compact.shape[0]) if transpose else compact.shape
    return template("swizzle_mx.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        transposed_note=", of the transposed compact scales" if transpose else "",
        in_shape=shape_text(compact.shape),
        elem=compact.dtype,
        size=out.shape[0],
        rows=rows,
        cols=cols,
        col_tiles=ceil_div(cols, MX_TILE_COLS),
        read="%cc_i, %rr_i" if transpose else "%rr_i, %cc_i",
    )


def _dequant(
    prefix: str,
    fmt_name: str,
    scales: str,
    scale_size: int,
    rows: int,
    k_blocks: int,
    row_dim: int,
    k_dim: int,
    bk: int,
) -> str:
    from passes.cpu_lowering import _decode

    return template("dequant_block_e8m0.mlir").substitute(
        p=prefix,
        decode=_decode(prefix, _format(fmt_name)),
        row_dim=row_dim,
        k_dim=k_dim,
        bk=bk,
        offset=layout_offset("mx", rows, k_blocks, f"%{prefix}row", f"%{prefix}kb", f"{prefix}off"),
        scales=scales,
        scale_size=scale_size,
        ldexp=ldexp_snippet(f"{prefix}l_", f"%{prefix}val", f"%{prefix}shift"),
    )


def lower_block_scaled_matmul(decl: ir.Operation) -> str:
    from passes.cpu_lowering import _matmul_maps

    (a, sa, b, sb), (out,) = _signature(decl)
    if _str(decl, "scale_format") != "e8m0" or _str(decl, "layout") != "mx":
        raise QmlirError(f"no CPU lowering for scaled_matmul @{symbol_name(decl)}")
    transposed = _bool(decl, "b_transposed")
    _, bk = block_of(decl, "a_block")
    m, k = a.shape
    n = b.shape[0] if transposed else b.shape[1]
    kb = ceil_div(k, bk)
    return template("scaled_matmul_block.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        scale_format="e8m0",
        layout="mx",
        a_shape=shape_text(a.shape),
        b_shape=shape_text(b.shape),
        sa_size=sa.shape[0],
        sb_size=sb.shape[0],
        out_shape=shape_text(out.shape),
        dequant_a=_dequant("a_", _str(decl, "a_format"), "%sa", sa.shape[0], m, kb, 0, 1, bk),
        dequant_b=_dequant(
            "b_",
            _str(decl, "b_format"),
            "%sb",
            sb.shape[0],
            n,
            kb,
            0 if transposed else 1,
            1 if transposed else 0,
            bk,
        ),
        **_matmul_maps(a, b, transposed),
    )
