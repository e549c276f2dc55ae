"""llvm-cpu lowering of the block amax: max |x| per block of a 2-D ``[M, K]`` tensor, the
last block of each dim zero-padded."""

from __future__ import annotations

from iree.compiler import ir

from passes.ir.attributes import NamedOp, Scaling
from passes.ir.named_ops import is_named_op_decl
from passes.lowering.cpu.common import definition, head, template
from passes.lowering.cpu.tiling import block_reduction


def lower_block_amax(op: NamedOp) -> str:
    (x,), (out,) = op.signature()
    bm, bk = op.block()
    m, k = x.shape
    mb, kb = out.shape
    if bm == 1 and k % bk == 0:  # rowwise blocks, no padding: a plain last-dim reduction
        return definition(
            "amax_block_rows.mlir",
            head(op),
            M=m,
            K=k,
            Kb=kb,
            bk=bk,
            block_bits=block_rows_bits(m, k, bk),
        )
    return definition(
        "amax_block.mlir",
        head(op),
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


def rowwise_block_amax_sibling(op: NamedOp, shape: tuple[int, ...]) -> int | None:
    """The block size bk of a 1 x bk block amax (K a multiple of bk) that ``op``'s module also
    declares on ``shape``, else None: a whole-tensor amax that starts with the same block
    reduction shares it with that one once IREE inlines both and CSEs (nvfp4 takes both)."""
    parent = op.decl.parent
    if parent is None or len(shape) != 2:
        return None
    for other in parent.regions[0].blocks[0].operations:
        decl: ir.Operation = other.operation
        if not is_named_op_decl(decl):
            continue
        sibling = NamedOp(decl)
        if sibling.kind != "amax" or sibling.scaling is not Scaling.BLOCK:
            continue
        (y,), _ = sibling.signature()
        bm, bk = sibling.block()
        if y.shape == shape and y.dtype == "f32" and bm == 1 and shape[1] % bk == 0:
            return bk
    return None
