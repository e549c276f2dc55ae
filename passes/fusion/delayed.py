"""fp8-delayed's cast with the stored scale and the same x's amax (recorded for the next call),
fused into one read of x::

    quantize(x, scale){per_tensor}, amax(x)  →  fused_quantize(x, scale) → (data, scale_inv, amax)

fp8-current's ``quantize`` takes a scale computed from that amax, so it does not match (the scale
must be defined before the amax).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.fusion.calls import NamedCalls, layer_of
from passes.ir.dialect import FusedQuantize, OpKind, Scaling
from passes.ir.formats import E4M3, E5M2
from passes.ir.named_ops import NamedOpBuilder, callee_name, variant_of


@dataclasses.dataclass(frozen=True)
class DelayedPair:
    quantize: ir.Operation
    amax: ir.Operation


def match_delayed(
    calls: NamedCalls, q: ir.Operation, taken: set[ir.Operation]
) -> DelayedPair | None:
    """A per-tensor ``quantize(x, scale)`` and a per-tensor ``amax(x)`` after ``scale``'s def."""
    quantize = calls.of_kind(q, OpKind.QUANTIZE)
    if quantize is None or quantize.attrs.scaling is not Scaling.PER_TENSOR:
        return None
    if quantize.attrs.format not in (E4M3, E5M2):
        return None
    x, scale = q.operands[0], q.operands[1]
    for use in x.uses:
        am = use.owner.operation
        amax = calls.of_kind(am, OpKind.AMAX)
        if am in taken or amax is None or amax.attrs.scaling is not Scaling.PER_TENSOR:
            continue
        if am.block != q.block or not _defined_before(scale, am):
            continue
        return DelayedPair(q, am)
    return None


def _defined_before(value: ir.Value, op: ir.Operation) -> bool:
    """Whether ``value`` is available at ``op`` (an argument of its block or an earlier op's)."""
    if isinstance(value, ir.BlockArgument):
        return value.owner == op.block
    owner = ir.OpResult(value).owner.operation
    return owner.block == op.block and owner.is_before_in_block(op)


def fuse_delayed(calls: NamedCalls, ops: NamedOpBuilder, pair: DelayedPair) -> None:
    """At the earlier of the two calls: x and the scale are defined there (the scale before the
    amax, by the match), and each call's results are used only after it."""
    q, am = pair.quantize, pair.amax
    first = am if am.is_before_in_block(q) else q
    variant = variant_of(callee_name(q), OpKind.QUANTIZE) + ".amax"
    with ir.InsertionPoint(first), q.location:
        data, scale_inv, amax = ops.call(
            FusedQuantize.of(calls.op(q).attrs),
            variant,
            [q.operands[0], q.operands[1]],
            [q.results[0].type, q.results[1].type, am.results[0].type],
            layer=layer_of(q),
        )
    q.results[0].replace_all_uses_with(data)
    q.results[1].replace_all_uses_with(scale_inv)
    am.results[0].replace_all_uses_with(amax)
    q.erase()
    am.erase()
