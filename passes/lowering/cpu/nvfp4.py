"""llvm-cpu lowerings of NVFP4's cast (E2M1 codes packed two per byte, by the block's E4M3
decode scale and the tensor's FP32 scale) and its GEMM."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from passes.ir.dialect import NamedOp, Nvfp4ScaleOrder
from passes.ir.formats import E2M1, E4M3
from passes.ir.types import TensorInfo, shape_text
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import definition, narrowed, template
from passes.lowering.cpu.decoded_gemm import decoded_gemm
from passes.lowering.cpu.swizzle import scale_grid
from passes.lowering.cpu.tiling import elementwise_blocks
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, row_signature


def lower_nvfp4_quantize(op: NamedOp) -> str:
    (x, d, _), (packed, _), rows = row_signature(op)
    torchao = op.attrs.order is Nvfp4ScaleOrder.TORCHAO
    if torchao:
        enc = template("nvfp4_enc_torchao.mlir").substitute(decode_d=snippets.decode("d_", E4M3))
        enc_doc = "torchao: (1 / g) / float(d), f32"
    else:
        enc = template("nvfp4_enc_te.mlir").substitute(
            decode_d=snippets.decode("d_", E4M3),
            sd_f64=snippets.f64_from_f32("sd_", "%sd"),
            p_f32=snippets.f32_from_f64("p_", "%p64"),
            p_back=snippets.f64_from_f32("pb_", "%p_f32"),
        )
        enc_doc = "TE: min(1 / (float(d) * S_dec), FLT_MAX), exact around f32 subnormals"
    encoder: Callable[..., str]
    if torchao:  # torchao's encoder keeps -0.0 as code 8 (TE's writes +0) and takes any enc
        fp4 = dataclasses.replace(E2M1, signed_zero=True)

        def encoder(x: str, prefix: str = "") -> str:
            return snippets.encode(fp4, x=x, prefix=prefix)

    else:  # TE's enc is positive and normal, which its own encoder relies on
        encoder = snippets.encode_e2m1_te
    # K a multiple of 16: each block's table entries broadcast along it, i4 codes that IREE
    # stores packed (no gathers); else the codes of each byte read by index, the last block padded
    aligned = x.shape[1] == d.shape[1] * 16
    blocks = rows.scaled_dim("blocks", d.shape[1])  # the rows of the [M * K blocks, 16] view
    return definition(
        "quantize_nvfp4_rows.mlir" if aligned else "quantize_nvfp4.mlir",
        head(op),
        M=rows,
        K=x.shape[1],
        Kb=d.shape[1],
        Kh=packed.shape[1],
        N=rows.scaled_type(x.shape[1]),
        R=rows.scaled_type(d.shape[1]),
        R_size=blocks.size,
        M_size=rows.size,
        m_defs=rows.defs(("blocks", d.shape[1], 1)),
        m=rows.empty,
        r_empty=blocks.empty,
        m_braces=rows.braces,
        r_braces=blocks.braces,
        tiling=elementwise_blocks(None if rows.dynamic else rows.count * d.shape[1], 16),
        enc_doc=enc_doc,
        table=template("nvfp4_block_table.mlir").substitute(enc_doc=enc_doc, enc_body=enc),
        lookup=template("nvfp4_block_lookup.mlir").substitute(code="%block_code"),
        encode=encoder(x="%xv"),
        encode_lo=encoder(x="%x0", prefix="lo_"),
        encode_hi=encoder(x="%x1", prefix="hi_"),
    )


def _dequant_nvfp4(prefix: str) -> str:
    return template("dequant_nvfp4.mlir").substitute(
        p=prefix,
        decode=snippets.decode(f"{prefix}s_", E4M3),
        decode_fp4=snippets.decode_e2m1(prefix, f"%{prefix}fp4"),
    )


def lower_nvfp4_scaled_matmul(op: NamedOp) -> str:
    (a, sa, _, b, sb, _), (out,), rows = row_signature(op, "%a")
    return fp4_gemm("scaled_matmul_nvfp4.mlir", op, (a, sa, b, sb), out, rows, 16, _dequant_nvfp4)


def fp4_gemm(
    name: str,
    op: NamedOp,
    operands: tuple[TensorInfo, TensorInfo, TensorInfo, TensorInfo],
    out: TensorInfo,
    rows: Dim,
    block: int,
    element: Callable[[str], str],
) -> str:
    """An FP4 GEMM's definition (template ``name``): A and B (packed E2M1 codes ``[rows, K /
    2]``, blocks of ``block`` codes: nvfp4's 16, mxfp4's 32) decoded with their unswizzled block
    scales (``element``: one code's value from ``%<p>nib`` and ``%<p>s_code``), then the
    contraction over the padded K."""
    a, sa, b, sb = operands
    n = out.shape[1]
    kp = a.shape[1] * 2
    kb = kp // block
    gemm = op.attrs.operand_type
    product, called = decoded_gemm(
        op, TensorInfo((rows.count, kp), gemm), TensorInfo((n, kp), gemm), out, b_transposed=True
    )
    return called + definition(
        name,
        head(op),
        a_shape=shape_text(a.shape),
        b_shape=shape_text(b.shape),
        sa_type=str(sa.builtin()),
        sb_type=str(sb.builtin()),
        M=rows,
        N=n,
        Kp=kp,
        m_defs=rows.defs(),
        m=rows.empty,
        dequant_a=_decoded("a_", "%a", a, rows, kb, block, gemm, element),
        dequant_b=_decoded("b_", "%b", b, Dim(n), kb, block, gemm, element),
        unswizzle_a=scale_grid("a_", "%sa", str(sa.builtin()), rows, kb, op.attrs.a_layout),
        unswizzle_b=scale_grid("b_", "%sb", str(sb.builtin()), Dim(n), kb, op.attrs.b_layout),
        gemm=gemm,
        contraction=product,
    )


def _decoded(
    prefix: str,
    data: str,
    info: TensorInfo,
    rows: Dim,
    k_blocks: int,
    block: int,
    gemm: str,
    element: Callable[[str], str],
) -> str:
    """Lines defining ``%<prefix>f32``: the packed codes ``data`` decoded, ``[rows, K]`` of
    ``gemm`` (``dequant_fp4_blocks.mlir``)."""
    narrow, yielded = narrowed(prefix, f"%{prefix}deq", gemm)
    return template("dequant_fp4_blocks.mlir").substitute(
        p=prefix,
        data=data,
        data_type=str(info.builtin()),
        braces=rows.braces,
        rows=rows,
        rows_size=rows.size,
        empty=rows.empty,
        Kp=k_blocks * block,
        kb=k_blocks,
        block=block,
        gemm=gemm,
        element=element(prefix) + narrow,
        yielded=yielded,
    )
