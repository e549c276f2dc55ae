"""What the cuda lowerings share: tensor types, reshapes, launch grids and ``i32`` push
constants. Their dynamic sizes (an activation's rows) are ``passes/lowering/dims.py``'s, as on
llvm-cpu."""

from __future__ import annotations

import math

from passes.base.numbers import ceil_div
from passes.ir.dialect import NamedOp
from passes.ir.types import DYNAMIC, TensorInfo
from passes.lowering.cuda.kernels import Extent, GridDim, fragment
from passes.lowering.dims import Dims, Size, row_signature, x_rows_dynamic


def ttype(info: TensorInfo, dtype: str | None = None) -> str:
    """``info``'s builtin tensor type (element type ``dtype`` where given)."""
    return str(info.with_dtype(dtype or info.dtype).builtin())


def dyn_type(info: TensorInfo, dims: Dims, dtype: str | None = None) -> str:
    """:func:`ttype` followed by the sizes of its dynamic dims (``dims``, by position), as
    ``hal.dispatch.extern`` takes a tensor of dynamic shape: ``tensor<?x64xf32>{%rows}``."""
    return ttype(info, dtype) + dims.braces(info)


def signature(op: NamedOp) -> tuple[list[TensorInfo], list[TensorInfo]]:
    """The op's operand and result types; dynamic ones only where its activation (first operand)
    has dynamic rows and no tensor has another dynamic dim (a one-line error otherwise)."""
    if not x_rows_dynamic(op):
        return op.signature()
    ins, outs, _ = row_signature(op)
    return ins, outs


def flat(info: TensorInfo) -> TensorInfo:
    size = math.prod(info.shape) if info.is_static else DYNAMIC
    return TensorInfo((size,), info.dtype)


def reshape(src: str, frm: TensorInfo, to: TensorInfo, dims: Dims | None = None) -> str:
    """One op from ``frm`` to ``to`` (same elements, fewer/more leading dims); ``dims``: the
    sizes of ``to``'s dynamic dims (by position), which an expansion needs."""
    types = {"src": src, "from_type": ttype(frm), "to_type": ttype(to)}
    if frm.shape == to.shape:
        return fragment("reshape_cast.mlir", **types)
    big, small = (frm, to) if frm.rank > to.rank else (to, frm)
    lead = big.rank - small.rank + 1  # the first `lead` dims of the larger fold into one
    groups = [list(range(lead))] + [[i] for i in range(lead, big.rank)]
    reassociation = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
    if frm is big:
        return fragment("reshape_collapse.mlir", reassociation=reassociation, **types)
    shape = (dims or Dims()).shape(to)
    return fragment("reshape_expand.mlir", reassociation=reassociation, shape=shape, **types)


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
        return fragment("i32_constant.mlir", value=size)
    return fragment("i32_from_index.mlir", value=size)


def i32_constants(values: dict[str, int]) -> str:
    """A line defining ``%<key>`` as the ``i32`` constant of each ``values`` entry."""
    name = "i32_named_constant.mlir"
    return "".join(fragment(name, key=k, value=v) + "\n" for k, v in values.items())
