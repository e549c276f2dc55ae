"""Text helpers the cuda lowerings share: tensor types, reshapes, launch grids, constants, and
the dynamic sizes of an activation's rows (``tensor.dim`` of an argument, as on llvm-cpu)."""

from __future__ import annotations

import math

from passes.base.numbers import ceil_div
from passes.ir.dialect import NamedOp
from passes.ir.types import DYNAMIC, TensorInfo, shape_text
from passes.lowering.cpu.common import Rows, row_signature, x_rows_dynamic
from passes.lowering.cuda.kernels import Extent, GridDim

Size = int | str  # a size: a number, or the SSA name of an ``index`` read at run time


def ttype(info: TensorInfo, dtype: str | None = None) -> str:
    dims = shape_text(info.shape)
    elem = dtype or info.dtype
    return f"tensor<{dims}x{elem}>" if dims else f"tensor<{elem}>"


def dyn_type(info: TensorInfo, sizes: dict[int, str], dtype: str | None = None) -> str:
    """:func:`ttype` followed by its dynamic dims' SSA names (by position), as
    ``hal.dispatch.extern`` takes a tensor of dynamic shape: ``tensor<?x64xf32>{%rows}``."""
    dynamic = [sizes[i] for i, d in enumerate(info.shape) if d == DYNAMIC]
    return ttype(info, dtype) + (f"{{{', '.join(dynamic)}}}" if dynamic else "")


def signature(op: NamedOp) -> tuple[list[TensorInfo], list[TensorInfo]]:
    """The op's operand and result types; dynamic ones only where its activation (first operand)
    has dynamic rows and no tensor has another dynamic dim (a one-line error otherwise)."""
    if not x_rows_dynamic(op):
        return op.signature()
    ins, outs, _ = row_signature(op)
    return ins, outs


def row_count(rows: Rows) -> Size:
    """M as a size: the number, or ``%dyn_m`` (which :meth:`Rows.defs` reads)."""
    return rows.size if rows.dynamic else rows.count


def flat(info: TensorInfo) -> TensorInfo:
    size = math.prod(info.shape) if info.is_static else DYNAMIC
    return TensorInfo((size,), info.dtype)


def reshape(src: str, frm: TensorInfo, to: TensorInfo, sizes: dict[int, str] | None = None) -> str:
    """One op from ``frm`` to ``to`` (same elements, fewer/more leading dims); ``sizes``: the
    SSA names of ``to``'s dynamic dims (by position), which an expansion needs."""
    if frm.shape == to.shape:
        return f"tensor.cast {src} : {ttype(frm)} to {ttype(to)}"
    big, small = (frm, to) if frm.rank > to.rank else (to, frm)
    lead = big.rank - small.rank + 1  # the first `lead` dims of the larger fold into one
    groups = [list(range(lead))] + [[i] for i in range(lead, big.rank)]
    reassoc = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
    if frm is big:
        return f"tensor.collapse_shape {src} {reassoc} : {ttype(frm)} into {ttype(to)}"
    known = sizes or {}
    shape = [known[i] if d == DYNAMIC else str(d) for i, d in enumerate(to.shape)]
    return (
        f"tensor.expand_shape {src} {reassoc} output_shape "
        f"[{', '.join(shape)}] : {ttype(frm)} into {ttype(to)}"
    )


def tiles(size: Size, per: int) -> GridDim:
    """``ceil(size / per)`` workgroups: a number, or an :class:`Extent` of a dynamic size."""
    return ceil_div(size, per) if isinstance(size, int) else Extent(size, per)


def grid_1d(n: Size, cap: int = 1024) -> tuple[GridDim, int]:
    if isinstance(n, str):
        return (Extent(n, 1024, cap), 1)
    return (max(1, min(ceil_div(n, 1024), cap)), 1)


def i32(size: Size) -> str:
    """The op that makes ``size`` an ``i32`` push constant: a constant, or the ``index_cast`` of
    a dynamic size."""
    if isinstance(size, int):
        return f"arith.constant {size} : i32"
    return f"arith.index_cast {size} : index to i32"


def i32_constants(values: dict[str, int]) -> str:
    return "".join(f"  %{k} = arith.constant {v} : i32\n" for k, v in values.items())
