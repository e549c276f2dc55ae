"""llvm-cpu lowerings of the block-scaled named ops (MXFP8 now; the block-scaled recipes share it).

A block-scaled operand is 2-D ``[rows, K]`` data with one scale per block; its *logical* scale
matrix is ``S[row, k_block]``. ``swizzle`` writes S (read from the compact layout, transposed
when the blocks ran down columns) into a GEMM-ready layout; ``scaled_matmul`` reads S back from
that layout while it dequantizes, so the layouts live in one place: :func:`layout_offset`.
"""

from __future__ import annotations

import functools
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
from passes.cpu_tiling import block_reduction, elementwise_blocks
from passes.errors import QmlirError
from passes.ir_types import TensorInfo, shape_text
from passes.named_ops import symbol_name

MX_TILE_ROWS, MX_TILE_COLS = 128, 4


def block_of(decl: ir.Operation, key: str = "block") -> tuple[int, int]:
    bm, bk = ir.DenseI64ArrayAttr(decl.attributes[f"qmlir.{key}"])
    return int(bm), int(bk)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def block_params(decl: ir.Operation, data: TensorInfo, grid: TensorInfo) -> dict[str, object]:
    """Template fields every block op shares: its name and attributes, data and grid shapes."""
    bm, bk = block_of(decl)
    return {
        "name": symbol_name(decl),
        "attrs": _attr_text(decl),
        "M": data.shape[0],
        "K": data.shape[1],
        "Mb": grid.shape[0],
        "Kb": grid.shape[1],
        "bm": bm,
        "bk": bk,
    }


def lower_block_amax(decl: ir.Operation) -> str:
    (x,), (out,) = _signature(decl)
    bm, bk = block_of(decl)
    m, k = x.shape
    mb, kb = out.shape
    if bm == 1 and k % bk == 0:  # rowwise blocks, no padding: a plain last-dim reduction
        return template("amax_block_rows.mlir").substitute(
            name=symbol_name(decl),
            attrs=_attr_text(decl),
            M=m,
            K=k,
            Kb=kb,
            bk=bk,
            block_bits=block_rows_bits(m, k, bk),
        )
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


def block_rows_bits(m: int, k: int, bk: int) -> str:
    """``%blk_bits`` [m, k / bk]: the max |x| bits of each 1 x bk block of ``%x`` [m, k]."""
    rows = m * (k // bk)
    return template("amax_block_rows_bits.mlir").substitute(
        p="blk_", M=m, K=k, Kb=k // bk, bk=bk, N=m * k, R=rows, tiling=block_reduction(rows, bk)
    )


def rowwise_block_amax_sibling(decl: ir.Operation, shape: tuple[int, ...]) -> int | None:
    """The block size bk of a 1 x bk block amax (K a multiple of bk) that ``decl``'s module also
    declares on ``shape``, else None: a whole-tensor amax that starts with the same block
    reduction shares it with that one once IREE inlines both and CSEs (nvfp4 takes both)."""
    from passes.named_ops import is_named_op_decl, op_kind

    parent = decl.parent
    if parent is None or len(shape) != 2:
        return None
    for op in parent.regions[0].blocks[0].operations:
        op = op.operation
        if not is_named_op_decl(op) or op_kind(op) != "amax" or "qmlir.block" not in op.attributes:
            continue
        (y,), _ = _signature(op)
        bm, bk = block_of(op)
        if y.shape == shape and y.dtype == "f32" and bm == 1 and shape[1] % bk == 0:
            return bk
    return None


E8M0_RULES = ("e8m0_ceil", "e8m0_floor", "e8m0_rne")  # templates/cpu/e8m0_rule_<r>.mlir


def lower_compute_scale_e8m0(decl: ir.Operation) -> str:
    rule = _str(decl, "rule")
    (amax,), _ = _signature(decl)
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
    if "qmlir.divide" in decl.attributes:
        from passes.cpu_lowering_cudnn import lower_divide_quantize

        return lower_divide_quantize(decl)
    if _str(decl, "format") == "e2m1":
        return lower_nvfp4_quantize(decl)
    (x, scale), _ = _signature(decl)
    scale_format = _str(decl, "scale_format")
    fmt = _format(_str(decl, "format"))
    if scale_format == "fp32":
        from passes.cpu_lowering import reciprocal_snippet

        return template("quantize_block_fp32.mlir").substitute(
            block_params(decl, x, scale),
            encode=encode_snippet(fmt),
            reciprocal=reciprocal_snippet(),
        )
    if scale_format != "e8m0":
        raise QmlirError(f"no CPU lowering for quantize @{symbol_name(decl)}")
    return template("quantize_block_e8m0.mlir").substitute(
        block_params(decl, x, scale),
        encode=encode_snippet(fmt, x="%x_in", s="%mult"),
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


BLOCK_LAYOUT_DOCS = {
    "block1d": "[k_blocks, pad4(rows)]: out[kb, r] = S[r, kb] (transposed, padded)",
    "block2d": "[row_blocks, pad4(k_blocks)]: out[rb, kb] = S[rb, kb] (padded)",
}


def block_layout_shape(layout: str, rows: int, k_blocks: int) -> tuple[int, int]:
    """GEMM-ready shape of S [rows, k_blocks] (rows are row blocks for block2d)."""
    pad4 = lambda n: ceil_div(n, 4) * 4  # noqa: E731
    if layout == "block1d":
        return (k_blocks, pad4(rows))
    if layout == "block2d":
        return (rows, pad4(k_blocks))
    raise QmlirError(f"unknown scale layout '{layout}'")


def _lower_block_swizzle(decl: ir.Operation, layout: str, transpose: bool) -> str:
    (compact,), (out,) = _signature(decl)
    rows, kbs = (compact.shape[1], compact.shape[0]) if transpose else compact.shape
    # S[r, kb] = compact[kb, r] when transposed, else compact[r, kb]
    if layout == "block1d":  # out[d0 = kb, d1 = r]
        r, kb, padded, limit = "%d1", "%d0", "%d1", rows
    else:  # out[d0 = r, d1 = kb]
        r, kb, padded, limit = "%d0", "%d1", "%d1", kbs
    read0, read1 = (kb, r) if transpose else (r, kb)
    return template("swizzle_block.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        layout=layout,
        layout_doc=BLOCK_LAYOUT_DOCS[layout],
        transposed_note=" transposed" if transpose else "",
        in_shape=shape_text(compact.shape),
        out_shape=shape_text(out.shape),
        limit=limit,
        padded_index=padded,
        read0=read0,
        read1=read1,
    )


def lower_swizzle(decl: ir.Operation) -> str:
    (compact,), (out,) = _signature(decl)
    layout, transpose = _str(decl, "layout"), _bool(decl, "transpose")
    if layout in BLOCK_LAYOUT_DOCS:
        return _lower_block_swizzle(decl, layout, transpose)
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
    prefix: str, fmt_name: str, rows: int, k_blocks: int, row_dim: int, k_dim: int, bk: int
) -> str:
    from passes.cpu_lowering import _decode

    return template("dequant_block_e8m0.mlir").substitute(
        p=prefix,
        decode=_decode(prefix, _format(fmt_name)),
        row_dim=row_dim,
        k_dim=k_dim,
        bk=bk,
        rows=rows,
        cols=k_blocks,
        ldexp=ldexp_snippet(f"{prefix}l_", f"%{prefix}val", f"%{prefix}shift"),
    )


def unswizzle(prefix: str, swizzled: str, swizzled_type: str, rows: int, k_blocks: int) -> str:
    """MLIR reading S [rows, k_blocks] (``%{prefix}S``) back from mx-swizzled scales."""
    return template("unswizzle_mx.mlir").substitute(
        p=prefix,
        swizzled=swizzled,
        swizzled_type=swizzled_type,
        rows=rows,
        cols=k_blocks,
        offset=layout_offset("mx", rows, k_blocks, f"%{prefix}r", f"%{prefix}c", f"{prefix}off"),
    )


def _dequant_fp32(
    prefix: str,
    fmt_name: str,
    scales: str,
    scale_type: str,
    layout: str,
    row_dim: int,
    k_dim: int,
    block: tuple[int, int],
) -> str:
    from passes.cpu_lowering import _decode

    kb = f"%{prefix}kb"
    rb = f"%{prefix}rb" if block[0] > 1 else f"%{prefix}row"
    read = f"{kb}, {rb}" if layout == "block1d" else f"{rb}, {kb}"
    return template("dequant_block_fp32.mlir").substitute(
        p=prefix,
        decode=_decode(prefix, _format(fmt_name)),
        layout=layout,
        row_dim=row_dim,
        k_dim=k_dim,
        bk=block[1],
        br=block[0],
        scales=scales,
        read=read,
        scale_type=scale_type,
    )


def lower_block_scaled_matmul(decl: ir.Operation) -> str:
    from passes.cpu_lowering import _matmul_maps

    if _str(decl, "scale_format") == "nvfp4":
        return lower_nvfp4_scaled_matmul(decl)
    (a, sa, b, sb), (out,) = _signature(decl)
    scale_format = _str(decl, "scale_format")
    a_layout, b_layout = _str(decl, "a_layout"), _str(decl, "b_layout")
    transposed = _bool(decl, "b_transposed")
    a_block, b_block = block_of(decl, "a_block"), block_of(decl, "b_block")
    m, k = a.shape
    n = b.shape[0] if transposed else b.shape[1]
    kb = ceil_div(k, a_block[1])
    b_row_dim, b_k_dim = (0, 1) if transposed else (1, 0)
    # b's blocks in S[n, k_block] terms: (rows per block, K per block)
    b_block_rk = b_block if transposed else (b_block[1], b_block[0])
    a_fmt, b_fmt = _str(decl, "a_format"), _str(decl, "b_format")
    if scale_format == "fp32":
        dequant_a = _dequant_fp32("a_", a_fmt, "%sa", str(sa.builtin()), a_layout, 0, 1, a_block)
        dequant_b = _dequant_fp32(
            "b_", b_fmt, "%sb", str(sb.builtin()), b_layout, b_row_dim, b_k_dim, b_block_rk
        )
        unswizzled = ("", "")
    elif scale_format == "e8m0" and a_layout == b_layout == "mx":
        bk = a_block[1]
        dequant_a = _dequant("a_", a_fmt, m, kb, 0, 1, bk)
        dequant_b = _dequant("b_", b_fmt, n, kb, b_row_dim, b_k_dim, bk)
        unswizzled = (
            unswizzle("a_", "%sa", str(sa.builtin()), m, kb),
            unswizzle("b_", "%sb", str(sb.builtin()), n, kb),
        )
    else:
        raise QmlirError(f"no CPU lowering for scaled_matmul @{symbol_name(decl)}")
    return template("scaled_matmul_block.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        scale_format=scale_format,
        layout=a_layout if a_layout == b_layout else f"{a_layout}/{b_layout}",
        a_shape=shape_text(a.shape),
        b_shape=shape_text(b.shape),
        sa_type=str(sa.builtin()),
        sb_type=str(sb.builtin()),
        out_shape=shape_text(out.shape),
        dequant_a=dequant_a,
        dequant_b=dequant_b,
        unswizzle_a=unswizzled[0],
        unswizzle_b=unswizzled[1],
        **_matmul_maps(a, b, transposed),
    )


def lower_compute_scale_nvfp4(decl: ir.Operation) -> str:
    import struct

    from passes.cpu_lowering import reciprocal_snippet
    from passes.formats import E4M3

    rule = _str(decl, "rule")
    if rule == "nvfp4_global":
        return template("compute_scale_nvfp4_global.mlir").substitute(
            name=symbol_name(decl), attrs=_attr_text(decl), reciprocal=reciprocal_snippet()
        )
    if rule == "nvfp4_global_torchao":
        return template("compute_scale_nvfp4_global_torchao.mlir").substitute(
            name=symbol_name(decl),
            attrs=_attr_text(decl),
            a_f64=template("f64_from_f32.mlir").substitute(p="a_", src="%a"),
            g_f32=template("f32_from_f64.mlir").substitute(p="g_", src="%g_abs"),
            g_back=template("f64_from_f32.mlir").substitute(p="gb_", src="%g_f32"),
        )
    (amax, _), _ = _signature(decl)
    if rule == "nvfp4_block_torchao":
        return template("compute_scale_nvfp4_block_torchao.mlir").substitute(
            name=symbol_name(decl),
            attrs=_attr_text(decl),
            Mb=amax.shape[0],
            Kb=amax.shape[1],
            a_f64=template("f64_from_f32.mlir").substitute(p="a_", src="%a"),
            q1_f32=template("f32_from_f64.mlir").substitute(p="q1_", src="%q1_abs"),
            q1_back=template("f64_from_f32.mlir").substitute(p="q1b_", src="%q1_f32"),
            g_f64=template("f64_from_f32.mlir").substitute(p="g_", src="%gv"),
            encode=encode_snippet(E4M3, x="%clamped", s="%one"),
        )
    sixth = "0x" + struct.pack(">f", 1.0 / 6.0).hex().upper()  # f32(1/6), as TE folds it
    return template("compute_scale_nvfp4_block.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        Mb=amax.shape[0],
        Kb=amax.shape[1],
        sixth=sixth,
        encode=encode_snippet(E4M3, x="%a", s="%mult"),
    )


def encode_e2m1_te(x: str = "%xv", prefix: str = "") -> str:
    """TE's E2M1 encoder (``x * %s -> %<prefix>byte``) with the block's ``%s``, ``%s_sub`` and
    ``%neg_lo`` in scope (``nvfp4_block_lookup.mlir``)."""
    return template("encode_e2m1_te.mlir").substitute(
        p=prefix, x=x, s="%s", s_sub="%s_sub", neg_lo="%neg_lo"
    )


def lower_nvfp4_quantize(decl: ir.Operation) -> str:
    import dataclasses

    from passes.cpu_lowering import _decode
    from passes.formats import E2M1, E4M3

    (x, d, _), (packed, _) = _signature(decl)
    torchao = _str(decl, "order") == "torchao"
    # torchao's encoder keeps -0.0 as code 8; TE's writes +0
    fp4 = dataclasses.replace(E2M1, signed_zero=True) if torchao else E2M1
    if torchao:
        enc = template("nvfp4_enc_torchao.mlir").substitute(decode_d=_decode("d_", E4M3))
        enc_doc = "torchao: (1 / g) / float(d), f32"
    else:
        enc = template("nvfp4_enc_te.mlir").substitute(
            decode_d=_decode("d_", E4M3),
            sd_f64=template("f64_from_f32.mlir").substitute(p="sd_", src="%sd"),
            p_f32=template("f32_from_f64.mlir").substitute(p="p_", src="%p64"),
            p_back=template("f64_from_f32.mlir").substitute(p="pb_", src="%p_f32"),
        )
        enc_doc = "TE: min(1 / (float(d) * S_dec), FLT_MAX), exact around f32 subnormals"
    # TE's enc is positive and normal, which its own encoder relies on; torchao's keeps -0.0
    encoder = functools.partial(encode_snippet, fp4) if torchao else encode_e2m1_te
    # K a multiple of 16: each block's table entries broadcast along it, i4 codes that IREE
    # stores packed (no gathers); else the codes of each byte read by index, the last block padded
    aligned = x.shape[1] == d.shape[1] * 16
    return template("quantize_nvfp4_rows.mlir" if aligned else "quantize_nvfp4.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        M=x.shape[0],
        K=x.shape[1],
        Kb=d.shape[1],
        Kh=packed.shape[1],
        N=x.shape[0] * x.shape[1],
        R=x.shape[0] * d.shape[1],
        tiling=elementwise_blocks(x.shape[0] * d.shape[1], 16),
        enc_doc=enc_doc,
        table=template("nvfp4_block_table.mlir").substitute(enc_doc=enc_doc, enc_body=enc),
        lookup=template("nvfp4_block_lookup.mlir").substitute(code="%block_code"),
        encode=encoder(x="%xv"),
        encode_lo=encoder(x="%x0", prefix="lo_"),
        encode_hi=encoder(x="%x1", prefix="hi_"),
    )


def _dequant_nvfp4(prefix: str, data: str, data_type: str, rows: int, k_blocks: int) -> str:
    from passes.cpu_lowering import _decode
    from passes.formats import E4M3

    return template("dequant_nvfp4.mlir").substitute(
        p=prefix,
        row_dim=0,
        k_dim=1,
        data=data,
        data_type=data_type,
        rows=rows,
        cols=k_blocks,
        decode=_decode(f"{prefix}s_", E4M3),
        decode_fp4=template("decode_e2m1.mlir").substitute(p=prefix, out=f"%{prefix}fp4"),
    )


def lower_nvfp4_scaled_matmul(decl: ir.Operation) -> str:
    (a, sa, _, b, sb, _), (out,) = _signature(decl)
    m, n = out.shape
    kp = a.shape[1] * 2
    kb = kp // 16
    return template("scaled_matmul_nvfp4.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        a_shape=shape_text(a.shape),
        b_shape=shape_text(b.shape),
        sa_type=str(sa.builtin()),
        sb_type=str(sb.builtin()),
        M=m,
        N=n,
        Kp=kp,
        dequant_a=_dequant_nvfp4("a_", "%a", str(a.builtin()), m, kb),
        dequant_b=_dequant_nvfp4("b_", "%b", str(b.builtin()), n, kb),
        unswizzle_a=unswizzle("a_", "%sa", str(sa.builtin()), m, kb),
        unswizzle_b=unswizzle("b_", "%sb", str(sb.builtin()), n, kb),
    )


def lower_compute_scale_cudnn(decl: ir.Operation) -> str:
    """cuDNN: v = amax / vmax (one f32 division), rounded up into E8M0 or E4M3."""
    import struct

    (amax,), _ = _signature(decl)
    vmax = _float(decl, "fp8_max")
    scale_format = _str(decl, "scale_format")
    body = (
        "e8m0_rule_cudnn_round_up.mlir"
        if scale_format == "e8m0"
        else ("e8m0_rule_cudnn_e4m3_round_up.mlir")
    )
    return template("compute_scale_e8m0.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        rule=f"cudnn_round_up into {scale_format}",
        rule_body=template(body).template,
        v_doc=f"amax / {vmax:g}",
        p_op="divf",
        p_const="0x" + struct.pack(">d", vmax).hex().upper(),
        Mb=amax.shape[0],
        Kb=amax.shape[1],
    )
