"""Pass ``check-indices``: an index the model computes is checked against its table before the
op reads or writes the table with it.

IREE does not bound-check a gather's or a scatter's indices: an index past the table reads or
writes outside the buffer (a crash, or garbage), where torch raises ``IndexError``. The runtime
checks the ids a caller passes to an embedding (``compiler/frontend/input_roles.py``), but a
model may compute its indices: RoBERTa's positions count the non-padding tokens from 2, so a
sequence of its table's length reads past it; relative-position buckets, token types and cache
positions are computed too.

For each ``embedding``, ``index_select``, ``gather``, ``index.Tensor``, ``index_put``,
``scatter`` (and their variants) this pass inserts, before the op, the indices' min and max, a
compare with the table's bounds along the indexed dim (``[0, n)``; ``[-n, n)`` for
``index.Tensor`` and ``index_put``, which wrap negative indices as torch does) and a
``torch.runtime.assert`` whose message (:data:`~passes.base.abi.INDEX_CHECK` and the layer)
the runtime turns into a one-line error. The call fails; the module stays usable.

Left unchecked: indices that are an input of the function passed straight (through views) to
an ``embedding`` (the runtime checks those ids before the call), and indices whose values the
compile knows to be within bounds: constants of the model, aranges of constant bounds (plus a
constant), a remainder by a positive constant, and what is gathered from those (BERT's token
types, transformers' masks), so the sample models' artifacts carry no check. Each indices value
is checked once per bound. A check costs a reduction over the indices and a wait for it in the
middle of the call: on ``cuda`` a round trip to the host, about 0.4 ms each (a generator's two
per layer took 2.0 of a decode step's 2.8 ms on an H200, ``benchmarks/RESULTS.md``), which is
why a generator's cache positions are written in a form the pass knows.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from iree.compiler import ir

from passes.base.abi import INDEX_CHECK
from passes.base.module_pass import ModulePass, register_pass
from passes.ir.elements import elements_to_numpy
from passes.ir.layer_names import layer_name
from passes.ir.parameters import parameter_ref
from passes.ir.torch_ops import PERMUTES, RESHAPES, constant_int, constant_number, defining_op
from passes.ir.types import DYNAMIC, tensor_info

# ops whose result holds some of their first operand's values, moved or repeated
_SAME_VALUES = (
    *RESHAPES,
    *PERMUTES,
    "torch.aten.expand",
    "torch.aten.broadcast_to",
    "torch.aten.slice.Tensor",
    "torch.aten.select.int",
    "torch.aten.clone",
    "torch.aten.contiguous",
    "torch.aten.alias",
    "torch.aten.squeeze",
    "torch.aten.squeeze.dims",
)

# ops whose result's values are some of their first operand's (a gather from a table)
_SOURCE_VALUES = (
    "torch.aten.gather",
    "torch.aten.index_select",
    "torch.aten.index.Tensor",
    "torch.aten.embedding",
)
# arange ops -> how many of their first operands are its bounds (end; start, end; start, end, step)
_ARANGES = {"torch.aten.arange": 1, "torch.aten.arange.start": 2, "torch.aten.arange.start_step": 3}
# op -> (operand index of the table, of the dim (None: dim 0), of the indices); wrapping: the
# op takes negative indices from the end ([-n, n))
_SINGLE = {
    "torch.aten.embedding": (0, None, 1),
    "torch.aten.index_select": (0, 1, 2),
    "torch.aten.gather": (0, 1, 2),
    "torch.aten.scatter.src": (0, 1, 2),
    "torch.aten.scatter.value": (0, 1, 2),
    "torch.aten.scatter_add": (0, 1, 2),
    "torch.aten.scatter.reduce": (0, 1, 2),
    "torch.aten.scatter_reduce.two": (0, 1, 2),
    "torch.aten.index_copy": (0, 1, 2),
    "torch.aten.index_add": (0, 1, 2),
    "torch.aten.index_fill.int_Scalar": (0, 1, 2),
}
INDEX_DTYPES = ("si64", "si32", "si16", "si8", "i64", "i32")
# op -> operand index of the list of optional index tensors (tensor i indexes dim i)
_LISTS = {
    "torch.aten.index.Tensor": 1,
    "torch.aten.index.Tensor_hacked_twin": 1,
    "torch.aten.index_put": 1,
    "torch.aten.index_put.hacked_twin": 1,
    "torch.aten._index_put_impl": 1,
}


@dataclasses.dataclass(frozen=True)
class _Check:
    op: ir.Operation
    table: ir.Value
    dim: int
    indices: ir.Value
    wraps: bool
    operand: int  # where the op takes the indices (a list's operand: ``item`` of the list)
    item: int | None = None


@register_pass
@dataclasses.dataclass(frozen=True)
class CheckIndices(ModulePass):
    name = "check-indices"

    def apply(self, module: ir.Module) -> None:
        checks: list[_Check] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            checks.extend(_checks_of(op))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        # indices, bound, wrapping -> the indices clamped into the bound (checked once)
        done: list[tuple[ir.Value, ir.Value | int, bool, ir.Value]] = []
        for check in checks:
            rows = _dim_size(check.table, check.dim)
            if rows is None or _trusted(check, rows):
                continue
            # a dynamic bound is the table's own size: the same table and dim give the same one
            bound = check.table if rows == DYNAMIC else rows
            clamped = next(
                (
                    safe
                    for indices, seen, wraps, safe in done
                    if indices == check.indices
                    and wraps == check.wraps
                    and type(seen) is type(bound)
                    and seen == bound
                ),
                None,
            )
            with ir.InsertionPoint(check.op), check.op.location:
                if clamped is None:
                    clamped = _assert_within(check, rows)
                    done.append((check.indices, bound, check.wraps, clamped))
                _use(check, clamped)


def _use(check: _Check, indices: ir.Value) -> None:
    """The op reads ``indices`` in place of its own (a list: a new list with them in place)."""
    if check.item is None:
        check.op.operands[check.operand] = indices
        return
    items = defining_op(check.op.operands[check.operand])
    assert items is not None
    values = list(items.operands)
    values[check.item] = indices
    rebuilt = ir.Operation.create(
        "torch.prim.ListConstruct", results=[items.results[0].type], operands=values
    )
    check.op.operands[check.operand] = rebuilt.result


def _checks_of(op: ir.Operation) -> list[_Check]:
    if op.name in _SINGLE:
        table, dim, indices = _SINGLE[op.name]
        axis = 0 if dim is None else constant_number(op.operands[dim])
        if axis is None or not _is_index(op.operands[indices]):
            return []
        return [_Check(op, op.operands[table], int(axis), op.operands[indices], False, indices)]
    if op.name in _LISTS:
        items = defining_op(op.operands[_LISTS[op.name]])
        if items is None or items.name != "torch.prim.ListConstruct":
            return []
        tensors = [v for v in items.operands if tensor_info(v.type, dynamic=True) is not None]
        if not all(_is_index(v) for v in tensors):
            return []  # a boolean (or uint8) mask indexes by position, not by value
        operand = _LISTS[op.name]
        return [
            _Check(op, op.operands[0], axis, value, True, operand, axis)
            for axis, value in enumerate(items.operands)
            if tensor_info(value.type, dynamic=True) is not None
        ]
    return []


def _is_index(value: ir.Value) -> bool:
    """An integer tensor of indices (not a boolean or uint8 mask)."""
    info = tensor_info(value.type, dynamic=True)
    return info is not None and info.dtype in INDEX_DTYPES


def _dim_size(table: ir.Value, dim: int) -> int | None:
    """The table's size along ``dim`` (:data:`DYNAMIC` where it is dynamic), or None where the
    table's rank is unknown."""
    info = tensor_info(table.type, dynamic=True)
    if info is None:
        return None
    if dim < 0:
        dim += info.rank
    if not 0 <= dim < info.rank:
        return None
    return info.shape[dim]


def _origin(value: ir.Value) -> ir.Value:
    """Where ``value``'s elements come from, through ops that only move or repeat them."""
    op = defining_op(value)
    while op is not None and op.name in _SAME_VALUES:
        value = op.operands[0]
        op = defining_op(value)
    return value


def _trusted(check: _Check, rows: int) -> bool:
    """Whether the indices need no check: a function input an embedding reads (checked by the
    runtime), or values known at compile time to lie within the table (see
    :func:`_value_range`)."""
    if defining_op(_origin(check.indices)) is None:  # a function argument
        return check.op.name == "torch.aten.embedding"
    values = _value_range(check.indices)
    if values is None:
        return False
    low, high = values
    if high < low:  # no index at all
        return True
    if rows == DYNAMIC:
        return False
    return low >= (-rows if check.wraps else 0) and high < rows


def _value_range(value: ir.Value) -> tuple[int, int] | None:
    """The least and greatest of ``value``'s elements where the compile knows them (high < low:
    no elements), else None: a literal's; an ``arange`` of constant bounds (transformers' masks
    index by aranges); a ``remainder`` by a positive constant ``n`` (``0 .. n-1``: a generator's
    cache positions, ``compiler/frontend/cached_decoder.py``); through ops that move values,
    that add a constant (``add.Scalar``), and gathers, whose values are some of their table's
    (BERT's token types: a zeros buffer gathered at positions)."""
    op = defining_op(value)
    if op is None:
        return None
    if op.name in _SAME_VALUES or op.name in _SOURCE_VALUES:
        return _value_range(op.operands[0])
    if op.name in ("torch.aten.add.Scalar", "torch.aten.sub.Scalar"):
        source = _value_range(op.operands[0])
        other, alpha = constant_number(op.operands[1]), constant_number(op.operands[2])
        if source is None or other is None or alpha is None:
            return None
        shift = int(other * alpha) * (1 if op.name == "torch.aten.add.Scalar" else -1)
        return (source[0] + shift, source[1] + shift)
    if op.name == "torch.aten.remainder.Scalar":  # torch's remainder takes the divisor's sign
        divisor = constant_number(op.operands[1])
        if divisor is None or divisor != int(divisor) or divisor <= 0:
            return None
        return (0, int(divisor) - 1)
    if op.name in _ARANGES:
        bounds = [constant_number(v) for v in op.operands[: _ARANGES[op.name]]]
        if any(b is None for b in bounds):
            return None
        start, end, step = {1: (0.0, bounds[0], 1.0), 2: (*bounds, 1.0), 3: tuple(bounds)}[
            len(bounds)
        ]
        count = int(np.ceil((end - start) / step)) if step else 0  # type: ignore[operator]
        if count <= 0:
            return (0, -1)
        last = start + (count - 1) * step  # type: ignore[operator]
        return (int(min(start, last)), int(max(start, last)))  # type: ignore[type-var]
    if op.name != "torch.vtensor.literal" or parameter_ref(op) is not None:
        return None
    try:
        values = np.asarray(elements_to_numpy(op.attributes["value"]))
    except ValueError:  # a resource blob the bindings cannot read: checked at the call
        return None
    if values.size == 0:
        return (0, -1)
    return (int(values.min()), int(values.max()))


def _assert_within(check: _Check, rows: int) -> ir.Value:
    """``torch.runtime.assert(low <= min(indices) and max(indices) < rows)`` before the op, and
    the indices clamped into ``low .. rows-1``: IREE does not order the op after the assert (no
    data flows from one to the other), so the op reads clamped indices, never outside the table,
    while the assert fails the call."""
    info = tensor_info(check.indices.type, dynamic=True)
    assert info is not None
    scalar = ir.Type.parse(f"!torch.vtensor<[],{info.dtype}>")
    torch_int, torch_bool = ir.Type.parse("!torch.int"), ir.Type.parse("!torch.bool")

    def extreme(kind: str) -> ir.Value:
        reduced = ir.Operation.create(
            f"torch.aten.{kind}", results=[scalar], operands=[check.indices]
        ).result
        item = ir.Operation.create("torch.aten.item", results=[torch_int], operands=[reduced])
        return item.result

    def compare(kind: str, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
        return ir.Operation.create(
            f"torch.aten.{kind}.int", results=[torch_bool], operands=[lhs, rhs]
        ).result

    if rows == DYNAMIC:
        size = ir.Operation.create(
            "torch.aten.size.int",
            results=[torch_int],
            operands=[check.table, constant_int(check.dim)],
        ).result
    else:
        size = constant_int(rows)
    if check.wraps:
        low = ir.Operation.create("torch.aten.neg.int", results=[torch_int], operands=[size]).result
    else:
        low = constant_int(0)
    below = compare("lt", extreme("max"), size)
    above = compare("ge", extreme("min"), low)
    ok = ir.Operation.create(
        "torch.aten.__and__.bool", results=[torch_bool], operands=[below, above]
    ).result
    if rows == DYNAMIC:
        span = f"-n..n-1 (n = its size along dim {check.dim})" if check.wraps else "0..n-1"
    else:
        span = f"{-rows}..{rows - 1}" if check.wraps else f"0..{rows - 1}"
    where = layer_name(check.op) or "the model"
    what = check.op.name.removeprefix("torch.aten.")
    message = (  # no ';': IREE's status text ends the message at one
        f"{INDEX_CHECK}{where}: an index into its {what} (dim {check.dim}) is outside {span}: "
        "this input is past what the model supports (torch fails on it too)"
    )
    ir.Operation.create(
        "torch.runtime.assert", operands=[ok], attributes={"message": ir.StringAttr.get(message)}
    )
    if rows == DYNAMIC:
        high = ir.Operation.create(
            "torch.aten.sub.int", results=[torch_int], operands=[size, constant_int(1)]
        ).result
    else:
        high = constant_int(rows - 1)
    return ir.Operation.create(
        "torch.aten.clamp", results=[check.indices.type], operands=[check.indices, low, high]
    ).result
