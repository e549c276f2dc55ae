"""llvm-cpu lowering of the block amax: max |x| per block of a 2-D ``[M, K]`` tensor, the
last block of each dim zero-padded (rowwise blocks: the partial last one reduced apart, so that
no padded copy of x is made)."""

from __future__ import annotations

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.dialect import NamedOp, OpKind, Scaling
from passes.ir.named_ops import is_named_op_decl
from passes.lowering.cpu.common import definition, template
from passes.lowering.cpu.tiling import block_reduction
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, row_signature


def nan_fields(propagate: bool) -> dict[str, str]:
    """The amax templates' NaN handling: ignored (its bits read as 0), or kept (a NaN's bits
    are above every number's, so the block's max is a NaN: MXFP4's NaN scale)."""
    if propagate:
        return {"nan_bits": "%abs", "nan_doc": "propagates (a block holding one has a NaN amax)"}
    return {"nan_bits": "%c0", "nan_doc": "is ignored"}


def lower_block_amax(op: NamedOp) -> str:
    (x,), (out,), rows = row_signature(op)
    propagate = bool(op.attrs.propagate_nan)
    bm, bk = op.attrs.block
    k = x.shape[1]
    kb = out.shape[1]
    if rows.dynamic and bm != 1:
        raise QmlirError(f"named op @{op.name}: dynamic rows take 1 x {bk} blocks, not {bm} x {bk}")
    if bm == 1 and k % bk == 0:  # rowwise blocks, no padding: a plain last-dim reduction
        return definition(
            "amax_block_rows.mlir",
            head(op),
            M=rows,
            K=k,
            Kb=kb,
            bk=bk,
            m_defs=rows.defs(),
            m=rows.empty,
            block_bits=block_rows_bits(rows, k, bk, propagate),
        )
    kbf = k // bk
    if bm == 1 and kbf > 0:  # rowwise blocks, the last one partial: the full ones and the tail
        return definition(
            "amax_block_rows_tail.mlir",
            head(op),
            M=rows,
            K=k,
            Kb=kb,
            Kbf=kbf,
            Kf=kbf * bk,
            Kp=kb * bk,
            bk=bk,
            tail=k - kbf * bk,
            m_defs=rows.defs(),
            m=rows.empty,
            M_size=rows.size,
            **nan_fields(propagate),
        )
    mb = out.shape[0]
    return definition(
        "amax_block.mlir",
        head(op),
        M=rows,
        K=k,
        Mb=rows if bm == 1 else mb,
        Kb=kb,
        bm=bm,
        bk=bk,
        Mp=rows if bm == 1 else mb * bm,
        Kp=kb * bk,
        pad_m=0 if bm == 1 else mb * bm - x.shape[0],
        pad_k=kb * bk - k,
        m_defs=rows.defs(),
        m=rows.empty,
        Mb_size=rows.size if bm == 1 else mb,
        **nan_fields(propagate),
    )


def block_rows_bits(rows: Dim, k: int, bk: int, propagate_nan: bool = False) -> str:
    """``%blk_bits`` [M, k / bk]: the max |x| bits of each 1 x bk block of ``%x`` [M, k] (with
    dynamic rows, after :meth:`Dim.defs`); NaN ignored unless ``propagate_nan``."""
    blocks = rows.scaled_dim("blk_r", k // bk)
    derived = rows.derive(("blk_r", k // bk, 1))  # "" when static
    prefix = derived.removeprefix("\n") + "\n" if derived else ""
    return prefix + template("amax_block_rows_bits.mlir").substitute(
        p="blk_",
        M=rows,
        K=k,
        Kb=k // bk,
        bk=bk,
        N=rows.scaled_type(k),
        R=rows.scaled_type(k // bk),
        R_size=blocks.size,
        r_empty=blocks.empty,
        M_size=rows.size,
        tiling=block_reduction(None if rows.dynamic else rows.count * (k // bk), bk),
        **nan_fields(propagate_nan),
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
        if sibling.kind is not OpKind.AMAX or sibling.attrs.scaling is not Scaling.BLOCK:
            continue
        if sibling.attrs.propagate_nan:  # its NaN blocks would make the tensor's amax NaN
            continue
        (y,), _ = sibling.signature(dynamic=True)  # an activation's: rows may be dynamic
        bm, bk = sibling.attrs.block
        if y.shape == shape and y.dtype == "f32" and bm == 1 and shape[1] % bk == 0:
            return bk
    return None
