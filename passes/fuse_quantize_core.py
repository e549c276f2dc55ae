"""Pass ``fuse-quantize-core`` (cuda): one ``fused_quantize`` per quantized activation.

Expects the recipe pass's output after ``fold-constant-quantize`` (only activations still
quantize at run time). Rewrites each chain the hand-written kernels do in one pass over x::

    amax(x){block} → compute_scale → quantize(x, scale) → swizzle(compact scales)

(NVFP4: the block ``compute_scale`` also takes the global ``compute_scale``'s encode scale, and
``quantize`` its decode scale) into ``fused_quantize(x [, global_amax]) → (data, scales)``, whose
declaration carries the attributes of the ops it replaces, so the IR still reads as named ops.
A columnwise chain (blocks down dim 0 and a transposed swizzle: a ``[K, N]`` B operand, fp8-block
1D and mxfp8) fuses too, onto the combined rowwise + columnwise kernel: with the rowwise chain of
the same x into one op, ``→ (data_row, scales_row, data_col, scales_col)``
(``outputs = "rowwise+columnwise"``), or alone (``outputs = "columnwise"``; the kernel's rowwise
outputs are dropped). Chains of other shapes (torchao order, a compact scale used elsewhere,
NVFP4 columnwise) stay as they are and take the per-op lowering.

fp8-delayed casts with a stored scale and records the same x's amax for the next call::

    quantize(x, scale){per_tensor}, amax(x)  →  fused_quantize(x, scale) → (data, scale_inv, amax)

(one read of x: the kernel casts while it reduces). fp8-current's ``quantize`` takes a scale
computed from that amax, so it does not match (the scale must be defined before the amax).

NVFP4 (TE order): once the fused kernel derives the global encode scale from the amax itself,
``compute_scale.nvfp4_global(amax) → (S_enc, S_dec)`` has only S_dec left in use and becomes
``compute_scale.nvfp4_global_decode(amax) → S_dec`` (one thread on cuda). That rule exists only
after this pass, which only the cuda pipeline runs.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.named_ops import (
    LAYER_ATTR,
    OP_ATTR,
    NamedOpBuilder,
    callee_name,
    erase_uncalled_declarations,
    is_named_op_decl,
    op_kind,
    symbol_name,
)
from passes.pass_registry import ModulePass, register_pass
from passes.torch_ops import defining_op

_FUSED_KINDS = ("amax", "compute_scale", "quantize", "swizzle")


@dataclasses.dataclass(frozen=True)
class _Chain:
    quantize: ir.Operation
    compute_scale: ir.Operation
    amax: ir.Operation
    swizzle: ir.Operation
    global_amax: ir.Value | None  # NVFP4: the per-tensor amax the kernel derives S_enc from
    columnwise: bool = False  # blocks down dim 0, transposed swizzle


class _Module:
    """The module's named-op declarations by name, and how to read a call's."""

    def __init__(self, module: ir.Module) -> None:
        self.decls = {
            symbol_name(op.operation): op.operation
            for op in module.body.operations
            if is_named_op_decl(op.operation)
        }

    def decl(self, op: ir.Operation | None, kind: str) -> ir.Operation | None:
        if op is None or op.name != "func.call":
            return None
        decl = self.decls.get(callee_name(op))
        return decl if decl is not None and op_kind(decl) == kind else None

    def attr(self, op: ir.Operation, key: str) -> str:
        decl = self.decls[callee_name(op)]
        name = f"qmlir.{key}"
        if name not in decl.attributes:
            return ""
        value = decl.attributes[name]
        if isinstance(value, ir.StringAttr):
            return value.value
        if isinstance(value, ir.BoolAttr):
            return str(value.value).lower()
        if isinstance(value, ir.DenseI64ArrayAttr):
            return "x".join(str(v) for v in value)
        if isinstance(value, ir.FloatAttr):
            return repr(value.value)
        return str(value)


def _only_use(value: ir.Value) -> ir.Operation | None:
    uses = list(value.uses)
    return uses[0].owner if len(uses) == 1 else None


# Fusable (block, rule family, format, swizzle layout, transposed swizzle) as the kernels
# implement them; the transposed ones are columnwise (blocks down dim 0: a [K, N] GEMM operand),
# which only the combined rowwise + columnwise kernels write.
_KERNELS = {
    ("1x128", "fp8_block", "e4m3", "block1d", "false"),
    ("128x128", "fp8_block", "e4m3", "block2d", "false"),
    ("1x32", "e8m0", "e4m3", "mx", "false"),
    ("1x16", "nvfp4_block", "e2m1", "mx", "false"),
    ("128x1", "fp8_block", "e4m3", "block1d", "true"),
    ("32x1", "e8m0", "e4m3", "mx", "true"),
}
# What a rowwise and a columnwise chain of one x must agree on to share a kernel.
_SHARED_ATTRS = ("rule", "format", "layout", "pow2", "epsilon", "fp8_max")


def _match(mod: _Module, q: ir.Operation) -> _Chain | None:
    if mod.decl(q, "quantize") is None or mod.attr(q, "scaling") != "block":
        return None
    x = q.operands[0]
    cs = defining_op(q.operands[1])
    if mod.decl(cs, "compute_scale") is None or _only_use(q.operands[1]) != q:
        return None
    assert cs is not None
    am = defining_op(cs.operands[0])
    if mod.decl(am, "amax") is None or am.operands[0] != x:  # type: ignore[union-attr]
        return None
    assert am is not None
    if _only_use(cs.operands[0]) != cs:
        return None
    sw = _only_use(q.results[1])
    if mod.decl(sw, "swizzle") is None:
        return None
    assert sw is not None
    rule = mod.attr(cs, "rule")
    family = "e8m0" if rule in ("e8m0_ceil", "e8m0_floor", "e8m0_rne") else rule
    transpose = mod.attr(sw, "transpose")
    key = (mod.attr(q, "block"), family, mod.attr(q, "format"), mod.attr(sw, "layout"), transpose)
    if key not in _KERNELS or (family == "fp8_block" and mod.attr(cs, "fp8_max") != "448.0"):
        return None
    global_amax = None
    if family == "nvfp4_block":
        global_amax = _nvfp4_global_amax(mod, q, cs)
        if global_amax is None:
            return None
    return _Chain(q, cs, am, sw, global_amax, columnwise=transpose == "true")


def _attrs(mod: _Module, *calls: ir.Operation) -> dict[str, ir.Attribute]:
    """The qmlir.* attributes (but the op's) of the calls' declarations, for a fused op's."""
    attrs: dict[str, ir.Attribute] = {}
    for call in calls:
        decl = mod.decls[callee_name(call)]
        for key in decl.attributes:
            name = key if isinstance(key, str) else key.name
            if name.startswith("qmlir.") and name != OP_ATTR:
                attrs[name.removeprefix("qmlir.")] = decl.attributes[name]
    return attrs


def _pair_up(mod: _Module, chains: list[_Chain]) -> list[tuple[_Chain | None, _Chain | None]]:
    """(rowwise, columnwise) per fused op: a columnwise chain joins a rowwise one of the same x
    with the same rule, format and layout (one kernel writes both); else it stands alone."""
    rowwise = [c for c in chains if not c.columnwise]
    groups: list[tuple[_Chain | None, _Chain | None]] = []
    for col in (c for c in chains if c.columnwise):
        row = next((r for r in rowwise if _same_kernel(mod, r, col)), None)
        if row is not None:
            rowwise.remove(row)
        groups.append((row, col))
    return groups + [(r, None) for r in rowwise]


def _same_kernel(mod: _Module, row: _Chain, col: _Chain) -> bool:
    def key(c: _Chain) -> tuple[str, ...]:
        ops = (c.quantize, c.compute_scale, c.swizzle)
        return tuple("/".join(mod.attr(op, k) for op in ops) for k in _SHARED_ATTRS)

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


def _nvfp4_global_amax(mod: _Module, q: ir.Operation, cs: ir.Operation) -> ir.Value | None:
    """TE order only: S_enc and S_dec both from one ``compute_scale.nvfp4_global(amax)``."""
    if mod.attr(q, "order") != "te":
        return None
    g = defining_op(cs.operands[1])
    if mod.decl(g, "compute_scale") is None or mod.attr(g, "rule") != "nvfp4_global":  # type: ignore[arg-type]
        return None
    assert g is not None
    if q.operands[2] != g.results[1]:
        return None
    return g.operands[0]


def _fuse(mod: _Module, ops: NamedOpBuilder, row: _Chain | None, col: _Chain | None) -> None:
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
    attrs = _attrs(mod, q, lead.compute_scale, sw)
    variant = callee_name(q).removeprefix("qmlir.quantize.") + "." + mod.attr(sw, "layout")
    if col is not None:
        outputs = "rowwise+columnwise" if row is not None else "columnwise"
        attrs["outputs"] = ir.StringAttr.get(outputs)
        variant += ".rowcol" if row is not None else ".t"
    x = first.quantize.operands[0]  # defined where the fused op goes (row's and col's are one)
    operands = [x] + ([lead.global_amax] if lead.global_amax is not None else [])
    layer = ir.StringAttr(q.attributes[LAYER_ATTR]).value if LAYER_ATTR in q.attributes else None
    result_types = [
        t for c in chains for t in (c.quantize.results[0].type, c.swizzle.results[0].type)
    ]
    with ir.InsertionPoint(first.quantize), first.quantize.location:
        results = ops.call("fused_quantize", variant, operands, result_types, attrs, layer=layer)
    for i, c in enumerate(chains):
        c.quantize.results[0].replace_all_uses_with(results[2 * i])
        c.swizzle.results[0].replace_all_uses_with(results[2 * i + 1])
        for op in (c.swizzle, c.quantize, c.compute_scale, c.amax):
            op.erase()


@dataclasses.dataclass(frozen=True)
class _Delayed:
    quantize: ir.Operation
    amax: ir.Operation


def _match_delayed(mod: _Module, q: ir.Operation, taken: set[ir.Operation]) -> _Delayed | None:
    """A per-tensor ``quantize(x, scale)`` and a per-tensor ``amax(x)`` after ``scale``'s def."""
    if mod.decl(q, "quantize") is None or mod.attr(q, "scaling") != "per_tensor":
        return None
    if mod.attr(q, "format") not in ("e4m3", "e5m2"):
        return None
    x, scale = q.operands[0], q.operands[1]
    for use in x.uses:
        am = use.owner.operation
        if am in taken or mod.decl(am, "amax") is None or mod.attr(am, "block"):
            continue
        if am.block != q.block or not _defined_before(scale, am):
            continue
        return _Delayed(q, am)
    return None


def _defined_before(value: ir.Value, op: ir.Operation) -> bool:
    """Whether ``value`` is available at ``op`` (an argument of its block or an earlier op's)."""
    if isinstance(value, ir.BlockArgument):
        return value.owner == op.block
    owner = ir.OpResult(value).owner.operation
    return owner.block == op.block and owner.is_before_in_block(op)


def _fuse_delayed(mod: _Module, ops: NamedOpBuilder, pair: _Delayed) -> None:
    """At the earlier of the two calls: x and the scale are defined there (the scale before the
    amax, by the match), and each call's results are used only after it."""
    q, am = pair.quantize, pair.amax
    first = am if am.is_before_in_block(q) else q
    attrs = _attrs(mod, q)
    variant = callee_name(q).removeprefix("qmlir.quantize.") + ".amax"
    layer = ir.StringAttr(q.attributes[LAYER_ATTR]).value if LAYER_ATTR in q.attributes else None
    with ir.InsertionPoint(first), q.location:
        data, scale_inv, amax = ops.call(
            "fused_quantize",
            variant,
            [q.operands[0], q.operands[1]],
            [q.results[0].type, q.results[1].type, am.results[0].type],
            attrs,
            layer=layer,
        )
    q.results[0].replace_all_uses_with(data)
    q.results[1].replace_all_uses_with(scale_inv)
    am.results[0].replace_all_uses_with(amax)
    q.erase()
    am.erase()


def _te_global_scale(mod: _Module, op: ir.Operation) -> bool:
    return mod.decl(op, "compute_scale") is not None and mod.attr(op, "rule") == "nvfp4_global"


def _to_decode_scale(ops: NamedOpBuilder, g: ir.Operation) -> None:
    """``compute_scale.nvfp4_global(amax) → (S_enc, S_dec)`` with S_enc unused (the fused kernel
    derives it from the amax) becomes ``compute_scale.nvfp4_global_decode(amax) → S_dec``."""
    attrs = {"rule": ir.StringAttr.get("nvfp4_global_decode")}
    layer = ir.StringAttr(g.attributes[LAYER_ATTR]).value if LAYER_ATTR in g.attributes else None
    with ir.InsertionPoint(g), g.location:
        (s_dec,) = ops.call(
            "compute_scale",
            "nvfp4_global_decode",
            [g.operands[0]],
            [g.results[1].type],
            attrs,
            layer=layer,
        )
    g.results[1].replace_all_uses_with(s_dec)
    g.erase()


@register_pass
@dataclasses.dataclass(frozen=True)
class FuseQuantizeCore(ModulePass):
    name = "fuse-quantize-core"

    def apply(self, module: ir.Module) -> None:
        mod = _Module(module)
        calls: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.call":
                calls.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        chains = [c for c in (_match(mod, op) for op in calls) if c is not None]
        taken = {op for c in chains for op in (c.quantize, c.compute_scale, c.amax, c.swizzle)}
        pairs: list[_Delayed] = []
        for op in calls:
            pair = None if op in taken else _match_delayed(mod, op, taken)
            if pair is not None:
                pairs.append(pair)
                taken |= {pair.quantize, pair.amax}
        if not chains and not pairs:
            return
        ops = NamedOpBuilder(module)
        touched = {callee_name(op) for op in taken}
        te_globals = [op for op in calls if op not in taken and _te_global_scale(mod, op)]
        with module.context:
            for row, col in _pair_up(mod, chains):
                _fuse(mod, ops, row, col)
            for pair in pairs:
                _fuse_delayed(mod, ops, pair)
            for op in te_globals:
                if not list(op.results[0].uses):  # S_enc's readers were fused away
                    touched.add(callee_name(op))
                    _to_decode_scale(ops, op)
        erase_uncalled_declarations(
            module, {n for n in touched if op_kind(mod.decls[n]) in _FUSED_KINDS}
        )
