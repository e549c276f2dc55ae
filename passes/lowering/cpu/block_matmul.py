"""llvm-cpu lowering of the FP8 block-scaled GEMMs: each operand decoded and multiplied by its
block's scale (FP32 ``scale_inv`` in the block1d/block2d layouts, or E8M0 in the mx layout), then
an f32 matmul. NVFP4's GEMM is in ``nvfp4.py``."""

from __future__ import annotations

from passes.base.errors import QmlirError
from passes.base.numbers import ceil_div
from passes.ir.attributes import NamedOp, ScaleFormat
from passes.ir.formats import FloatFormat
from passes.ir.layouts import ScaleLayout
from passes.ir.types import shape_text
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import (
    Rows,
    contraction,
    definition,
    gemm_operand_fields,
    head,
    row_signature,
    template,
)
from passes.lowering.cpu.swizzle import unswizzle


def _dequant_e8m0(
    prefix: str, fmt: FloatFormat, rows: Rows, k_blocks: int, row_dim: int, k_dim: int, bk: int
) -> str:
    return template("dequant_block_e8m0.mlir").substitute(
        p=prefix,
        decode=snippets.decode(prefix, fmt),
        row_dim=row_dim,
        k_dim=k_dim,
        bk=bk,
        rows=rows,
        cols=k_blocks,
        ldexp=snippets.ldexp(f"{prefix}l_", f"%{prefix}val", f"%{prefix}shift"),
    )


def _dequant_fp32(
    prefix: str,
    fmt: FloatFormat,
    scales: str,
    scale_type: str,
    layout: ScaleLayout,
    row_dim: int,
    k_dim: int,
    block: tuple[int, int],
) -> str:
    kb = f"%{prefix}kb"
    rb = f"%{prefix}rb" if block[0] > 1 else f"%{prefix}row"
    read = f"{kb}, {rb}" if layout is ScaleLayout.BLOCK1D else f"{rb}, {kb}"
    return template("dequant_block_fp32.mlir").substitute(
        p=prefix,
        decode=snippets.decode(prefix, fmt),
        layout=layout.value,
        row_dim=row_dim,
        k_dim=k_dim,
        bk=block[1],
        br=block[0],
        scales=scales,
        read=read,
        scale_type=scale_type,
    )


def lower_block_scaled_matmul(op: NamedOp) -> str:
    (a, sa, b, sb), (out,), rows = row_signature(op, "%a")
    scale_format = op.scale_format
    a_layout, b_layout = op.layout("a_layout"), op.layout("b_layout")
    transposed = op.flag("b_transposed")
    a_block, b_block = op.block("a_block"), op.block("b_block")
    k = a.shape[1]
    n = b.shape[0] if transposed else b.shape[1]
    kb = ceil_div(k, a_block[1])
    b_row_dim, b_k_dim = (0, 1) if transposed else (1, 0)
    # b's blocks in S[n, k_block] terms: (rows per block, K per block)
    b_block_rk = b_block if transposed else (b_block[1], b_block[0])
    a_fmt, b_fmt = op.format("a_format"), op.format("b_format")
    if scale_format is ScaleFormat.FP32:
        dequant_a = _dequant_fp32("a_", a_fmt, "%sa", str(sa.builtin()), a_layout, 0, 1, a_block)
        dequant_b = _dequant_fp32(
            "b_", b_fmt, "%sb", str(sb.builtin()), b_layout, b_row_dim, b_k_dim, b_block_rk
        )
        unswizzled = ("", "")
    elif scale_format is ScaleFormat.E8M0 and a_layout is b_layout is ScaleLayout.MX:
        bk = a_block[1]
        dequant_a = _dequant_e8m0("a_", a_fmt, rows, kb, 0, 1, bk)
        dequant_b = _dequant_e8m0("b_", b_fmt, Rows(n), kb, b_row_dim, b_k_dim, bk)
        unswizzled = (
            unswizzle("a_", "%sa", str(sa.builtin()), rows, kb),
            unswizzle("b_", "%sb", str(sb.builtin()), Rows(n), kb),
        )
    else:
        raise QmlirError(f"no CPU lowering for scaled_matmul @{op.name}")
    layouts = a_layout.value if a_layout is b_layout else f"{a_layout.value}/{b_layout.value}"
    return definition(
        "scaled_matmul_block.mlir",
        head(op),
        scale_format=scale_format.value,
        layout=layouts,
        a_shape=shape_text(a.shape),
        b_shape=shape_text(b.shape),
        sa_type=str(sa.builtin()),
        sb_type=str(sb.builtin()),
        out_shape=shape_text(out.shape),
        m_defs=rows.defs(),
        m=rows.empty,
        dequant_a=dequant_a,
        dequant_b=dequant_b,
        unswizzle_a=unswizzled[0],
        unswizzle_b=unswizzled[1],
        **gemm_operand_fields(op, "%a_deq", "%b_deq"),
        contraction=contraction(a, b, out, transposed, op.gemm_operands),
    )
