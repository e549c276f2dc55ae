"""llvm-cpu lowerings of ``swizzle`` (compact block scales → the GEMM's layout) and the reading
of mx-swizzled scales back (the block GEMMs'), so each layout lives in one place
(``passes/ir/layouts.py`` has their shapes)."""

from __future__ import annotations

from passes.base.errors import QmlirError
from passes.base.numbers import ceil_div
from passes.ir.dialect import NamedOp
from passes.ir.layouts import MX_TILE_COLS, MX_TILE_ROWS, ScaleLayout
from passes.ir.types import shape_text
from passes.lowering.cpu.common import definition, template
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, row_signature


def mx_offset(cols: int, row: str, col: str, out: str) -> str:
    """MLIR computing ``%{out}``, where S[row, col] of an S [rows, cols] lives in the mx layout."""
    return template("mx_offset.mlir").substitute(
        out=out, row=row, col=col, col_tiles=ceil_div(cols, MX_TILE_COLS)
    )


def unswizzle(prefix: str, swizzled: str, swizzled_type: str, rows: Dim, k_blocks: int) -> str:
    """MLIR reading S [rows, k_blocks] (``%{prefix}S``) back from mx-swizzled scales (one
    static row: slices, ``unswizzle_mx_row.mlir``)."""
    if rows.count == 1:
        col_tiles = ceil_div(k_blocks, MX_TILE_COLS)
        return template("unswizzle_mx_row.mlir").substitute(
            p=prefix,
            swizzled=swizzled,
            swizzled_type=swizzled_type,
            cols=k_blocks,
            col_tiles=col_tiles,
            padded_cols=col_tiles * MX_TILE_COLS,
        )
    return template("unswizzle_mx.mlir").substitute(
        p=prefix,
        swizzled=swizzled,
        swizzled_type=swizzled_type,
        rows=rows,
        rows_empty=rows.empty,
        cols=k_blocks,
        offset=mx_offset(k_blocks, f"%{prefix}r", f"%{prefix}c", f"{prefix}off"),
    )


def scale_grid(
    prefix: str, scales: str, scales_type: str, rows: Dim, k_blocks: int, layout: ScaleLayout
) -> str:
    """MLIR defining ``%{prefix}S`` [rows, k_blocks] from a GEMM's scale operand ``scales``:
    read back from the mx layout (:func:`unswizzle`), or the operand itself where it is
    compact (``compact-block-scales``)."""
    if layout is ScaleLayout.COMPACT:
        return f"  %{prefix}S = tensor.cast {scales} : {scales_type} to {scales_type}"
    return unswizzle(prefix, scales, scales_type, rows, k_blocks)


def lower_swizzle(op: NamedOp) -> str:
    layout, transpose = op.attrs.layout, op.attrs.transpose
    if layout is ScaleLayout.MX:
        return _lower_mx_swizzle(op, transpose)
    return _lower_block_swizzle(op, layout, transpose)


def _index_constant(name: str, rows: Dim, static: int) -> tuple[str, str]:
    """A line defining ``%name`` as the index ``static``, and the SSA name a use reads: with
    dynamic rows, no line, and M's."""
    if rows.dynamic:
        return "", rows.size
    return f"    %{name} = arith.constant {static} : index", f"%{name}"


def _lower_mx_swizzle(op: NamedOp, transpose: bool) -> str:
    (compact,), (out,), rows = row_signature(op, "%s")
    if rows.dynamic and transpose:
        raise QmlirError(f"named op @{op.name}: dynamic rows are not swizzled transposed")
    n, cols = (compact.shape[1], compact.shape[0]) if transpose else compact.shape
    col_tiles = ceil_div(cols, MX_TILE_COLS)
    per_row = MX_TILE_COLS * col_tiles  # a row's scales, its tile columns padded
    if not transpose and not rows.dynamic and n == 1:  # a decode step's activation
        return definition(
            "swizzle_mx_row.mlir",
            head(op),
            elem=compact.dtype,
            cols=cols,
            pad=per_row - cols,
            padded_cols=per_row,
            col_tiles=col_tiles,
            size=shape_text(out.shape),
        )
    nrows_def, nrows = _index_constant("nrows", rows, n)
    return definition(
        "swizzle_mx.mlir",
        head(op),
        transposed_note=", of the transposed compact scales" if transpose else "",
        in_shape=shape_text(compact.shape),
        elem=compact.dtype,
        size=shape_text(out.shape),
        m_defs=rows.defs(("size", 1, MX_TILE_ROWS, per_row)),  # pad128(M) rows
        out_sizes=rows.scaled_dim("size", 1, MX_TILE_ROWS, per_row).empty,
        nrows_def=nrows_def,
        nrows=nrows,
        cols=cols,
        col_tiles=col_tiles,
        read="%cc_i, %rr_i" if transpose else "%rr_i, %cc_i",
    )


def _lower_block_swizzle(op: NamedOp, layout: ScaleLayout, transpose: bool) -> str:
    (compact,), (out,), rows = row_signature(op, "%s")
    if rows.dynamic and (transpose or layout is not ScaleLayout.BLOCK1D):
        raise QmlirError(
            f"named op @{op.name}: dynamic rows are swizzled into block1d, not transposed"
        )
    n, kbs = (compact.shape[1], compact.shape[0]) if transpose else compact.shape
    # S[r, kb] = compact[kb, r] when transposed, else compact[r, kb]
    if layout is ScaleLayout.BLOCK1D:  # out[d0 = kb, d1 = r]
        r, kb, padded = "%d1", "%d0", "%d1"
        limit_def, limit = _index_constant("limit", rows, n)
    else:  # out[d0 = r, d1 = kb]
        r, kb, padded = "%d0", "%d1", "%d1"
        limit_def, limit = _index_constant("limit", Dim(kbs), kbs)
    read0, read1 = (kb, r) if transpose else (r, kb)
    return definition(
        "swizzle_block.mlir",
        head(op),
        layout=layout.value,
        layout_doc=layout.doc,
        transposed_note=" transposed" if transpose else "",
        in_shape=shape_text(compact.shape),
        out_shape=shape_text(out.shape),
        m_defs=rows.defs(("padded", 1, 4)),
        out_sizes=rows.scaled_dim("padded", 1, 4).empty,
        limit_def=limit_def,
        limit=limit,
        padded_index=padded,
        read0=read0,
        read1=read1,
    )
