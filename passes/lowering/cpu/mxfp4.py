"""llvm-cpu lowerings of MXFP4's cast (E2M1 codes packed two per byte, by the block's E8M0
scale) and its GEMM (each operand decoded with its block's power of two, then an f32 or bf16
matmul)."""

from __future__ import annotations

from passes.ir.dialect import NamedOp
from passes.ir.formats import E2M1
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import definition, template
from passes.lowering.cpu.nvfp4 import fp4_gemm
from passes.lowering.cpu.tiling import elementwise_blocks
from passes.lowering.definitions import head
from passes.lowering.dims import row_signature

BLOCK = 32


def _element(prefix: str, x: str) -> str:
    """``x`` cast with the block's scale code ``%s``: ``%<prefix>result``, its E2M1 code."""
    return template("quantize_e8m0_element.mlir").substitute(
        p=prefix,
        x=x,
        s="%s",
        encode=snippets.encode(E2M1, x=f"%{prefix}x_in", s=f"%{prefix}mult", prefix=prefix),
        nan_code=E2M1.nan_code,
    )


def lower_mxfp4_quantize(op: NamedOp) -> str:
    """K a multiple of 32: x read as one row per block, i4 codes IREE packs
    (``quantize_mxfp4_rows.mlir``); else each byte's two codes read by index, the last block
    padded (``quantize_mxfp4.mlir``)."""
    (x, scale), (packed, _), rows = row_signature(op)
    k, kb = x.shape[1], scale.shape[1]
    fields = {"M": rows, "K": k, "Kb": kb, "Kh": packed.shape[1], "m": rows.empty}
    if k != kb * BLOCK:
        return definition(
            "quantize_mxfp4.mlir",
            head(op),
            **fields,
            m_defs=rows.defs(),
            element_lo=_element("lo_", "%x0"),
            element_hi=_element("hi_", "%x1"),
        )
    blocks = rows.scaled_dim("blocks", kb)  # the rows of the [M * K blocks, 32] view
    return definition(
        "quantize_mxfp4_rows.mlir",
        head(op),
        **fields,
        m_defs=rows.defs(("blocks", kb, 1)),
        N=rows.scaled_type(k),
        R=rows.scaled_type(kb),
        R_size=blocks.size,
        M_size=rows.size,
        r_empty=blocks.empty,
        m_braces=rows.braces,
        r_braces=blocks.braces,
        tiling=elementwise_blocks(None if rows.dynamic else rows.count * kb, BLOCK),
        element=_element("q_", "%xv"),
    )


def _dequant(prefix: str) -> str:
    return template("dequant_mxfp4.mlir").substitute(
        p=prefix,
        decode_fp4=snippets.decode_e2m1(prefix, f"%{prefix}fp4"),
        ldexp=snippets.ldexp(f"{prefix}l_", f"%{prefix}fp4", f"%{prefix}shift"),
    )


def lower_mxfp4_scaled_matmul(op: NamedOp) -> str:
    (a, sa, b, sb), (out,), rows = row_signature(op, "%a")
    return fp4_gemm("scaled_matmul_mxfp4.mlir", op, (a, sa, b, sb), out, rows, BLOCK, _dequant)
