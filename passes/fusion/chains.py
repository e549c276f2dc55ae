"""Block quantize chains the hand-written kernels do in one pass over x::

    amax(x){block} → compute_scale → quantize(x, scale) → swizzle(compact scales)

(NVFP4: the block ``compute_scale`` also takes the global one's encode scale, and ``quantize``
its decode scale), found, paired (a rowwise and a columnwise chain of one x share a kernel) and
rewritten into one ``fused_quantize(x [, global_amax]) → (data, scales[, data, scales])``.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.fusion.calls import NamedCalls, layer_of, only_use
from passes.ir.cuda_kernels import fused_kernel
from passes.ir.dialect import (
    FusedOutputs,
    FusedQuantize,
    NamedOp,
    Nvfp4ScaleOrder,
    OpKind,
    ScaleRule,
    Scaling,
)
from passes.ir.formats import E4M3
from passes.ir.named_ops import NamedOpBuilder, callee_name, variant_of
from passes.ir.torch_ops import defining_op
from passes.ir.types import tensor_info


@dataclasses.dataclass(frozen=True)
class Chain:
    quantize: ir.Operation
    compute_scale: ir.Operation
    amax: ir.Operation
    swizzle: ir.Operation
    global_amax: ir.Value | None  # NVFP4: the per-tensor amax the kernel derives S_enc from
    columnwise: bool = False  # blocks down dim 0, transposed swizzle

    @property
    def ops(self) -> tuple[ir.Operation, ...]:
        return (self.quantize, self.compute_scale, self.amax, self.swizzle)


def match_chain(calls: NamedCalls, q: ir.Operation) -> Chain | None:
    quantize = calls.of_kind(q, OpKind.QUANTIZE)
    if quantize is None or quantize.attrs.scaling is not Scaling.BLOCK:
        return None
    x = q.operands[0]
    cs = defining_op(q.operands[1])
    compute_scale = calls.of_kind(cs, OpKind.COMPUTE_SCALE)
    if compute_scale is None or only_use(q.operands[1]) != q:
        return None
    assert cs is not None
    am = defining_op(cs.operands[0])
    if calls.of_kind(am, OpKind.AMAX) is None or am is None or am.operands[0] != x:
        return None
    if only_use(cs.operands[0]) != cs:
        return None
    sw = only_use(q.results[1])
    swizzle = calls.of_kind(sw, OpKind.SWIZZLE)
    if swizzle is None:
        return None
    assert sw is not None
    transpose = swizzle.attrs.transpose
    key = (quantize.attrs.block, quantize.attrs.format, swizzle.attrs.layout, transpose)
    rule = compute_scale.attrs.rule
    if fused_kernel(*key, rule, _cols(x), exact_block=True) is None:
        return None
    if rule is ScaleRule.FP8_BLOCK and compute_scale.attrs.fp8_max != E4M3.max_finite:
        return None
    global_amax = None
    if rule is ScaleRule.NVFP4_BLOCK:
        global_amax = _nvfp4_global_amax(calls, quantize, q, cs)
        if global_amax is None:
            return None
    return Chain(q, cs, am, sw, global_amax, columnwise=transpose)


def _cols(x: ir.Value) -> int:
    """x's last dim (DYNAMIC where it is not static)."""
    info = tensor_info(x.type, dynamic=True)
    assert info is not None, x.type
    return info.shape[-1]


def _nvfp4_global_amax(
    calls: NamedCalls, quantize: NamedOp, q: ir.Operation, cs: ir.Operation
) -> ir.Value | None:
    """TE order only: S_enc and S_dec both from one ``compute_scale.nvfp4_global(amax)``."""
    if quantize.attrs.order is not Nvfp4ScaleOrder.TE:
        return None
    g = defining_op(cs.operands[1])
    global_scale = calls.of_kind(g, OpKind.COMPUTE_SCALE)
    if global_scale is None or global_scale.attrs.rule is not ScaleRule.NVFP4_GLOBAL:
        return None
    assert g is not None
    if q.operands[2] != g.results[1]:
        return None
    return g.operands[0]


def pair_up(calls: NamedCalls, chains: list[Chain]) -> list[tuple[Chain | None, Chain | None]]:
    """(rowwise, columnwise) per fused op: a columnwise chain joins a rowwise one of the same x
    with the same rule, format and layout (one kernel writes both); else it stands alone."""
    rowwise = [c for c in chains if not c.columnwise]
    groups: list[tuple[Chain | None, Chain | None]] = []
    for col in (c for c in chains if c.columnwise):
        row = next((r for r in rowwise if _same_kernel(calls, r, col)), None)
        if row is not None:
            rowwise.remove(row)
        groups.append((row, col))
    return groups + [(r, None) for r in rowwise]


def _same_kernel(calls: NamedCalls, row: Chain, col: Chain) -> bool:
    def key(c: Chain) -> tuple[object, ...]:
        """What a rowwise and a columnwise chain of one x must agree on to share a kernel."""
        q, cs, sw = (calls.op(call).attrs for call in (c.quantize, c.compute_scale, c.swizzle))
        return (cs.rule, q.format, sw.layout, cs.pow2, cs.epsilon, cs.fp8_max)

    q_row, q_col = row.quantize, col.quantize
    return (
        _same_tensor(q_row.operands[0], q_col.operands[0])
        and q_row.block == q_col.block
        and key(row) == key(col)
    )


def _same_tensor(a: ir.Value, b: ir.Value) -> bool:
    """One value, or two ``torch_c.to_builtin_tensor`` of one (each matmul operand gets its own)."""
    if a == b:
        return True
    da, db = defining_op(a), defining_op(b)
    return (
        da is not None
        and db is not None
        and da.name == db.name == "torch_c.to_builtin_tensor"
        and da.operands[0] == db.operands[0]
        and a.type == b.type
    )


def fuse_chains(
    calls: NamedCalls, ops: NamedOpBuilder, row: Chain | None, col: Chain | None
) -> None:
    """One ``fused_quantize`` for a rowwise chain, a columnwise one, or both of one x.

    Its results: (data, scales) of the chain, or of both in that order; ``outputs`` says which
    when not the rowwise alone.
    """
    chains = [c for c in (row, col) if c is not None]
    first = chains[0]  # the call to insert at: the earlier quantize, where x is defined
    if len(chains) == 2 and chains[1].quantize.is_before_in_block(chains[0].quantize):
        first = chains[1]
    lead = chains[0]  # names the op and gives its attributes (the rowwise one when both)
    q, sw = lead.quantize, lead.swizzle
    swizzle = calls.op(sw).attrs
    variant = variant_of(callee_name(q), OpKind.QUANTIZE) + "." + swizzle.layout.value
    outputs = None
    if col is not None:
        outputs = FusedOutputs.BOTH if row is not None else FusedOutputs.COLUMNWISE
        variant += ".rowcol" if row is not None else ".t"
    fused = FusedQuantize.of(
        calls.op(q).attrs, calls.op(lead.compute_scale).attrs, swizzle, outputs
    )
    x = first.quantize.operands[0]  # defined where the fused op goes (row's and col's are one)
    operands = [x] + ([lead.global_amax] if lead.global_amax is not None else [])
    result_types = [
        t for c in chains for t in (c.quantize.results[0].type, c.swizzle.results[0].type)
    ]
    with ir.InsertionPoint(first.quantize), first.quantize.location:
        results = ops.call(fused, variant, operands, result_types, layer=layer_of(q))
    for i, c in enumerate(chains):
        c.quantize.results[0].replace_all_uses_with(results[2 * i])
        c.swizzle.results[0].replace_all_uses_with(results[2 * i + 1])
        for op in (c.swizzle, c.quantize, c.compute_scale, c.amax):
            op.erase()
