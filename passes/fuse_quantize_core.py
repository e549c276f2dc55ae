"""Pass ``fuse-quantize-core`` (cuda): one ``fused_quantize`` per block-quantized activation.

Expects the recipe pass's output after ``fold-constant-quantize`` (only activations still
quantize at run time). Rewrites each chain the hand-written kernels do in one pass over x::

    amax(x){block} → compute_scale → quantize(x, scale) → swizzle(compact scales)

(NVFP4: the block ``compute_scale`` also takes the global ``compute_scale``'s encode scale, and
``quantize`` its decode scale) into ``fused_quantize(x [, global_amax]) → (data, scales)``, whose
declaration carries the attributes of the ops it replaces, so the IR still reads as named ops.
Chains of other shapes (columnwise, transposed swizzle, torchao order, a compact scale used
elsewhere) stay as they are and take the per-op lowering.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.named_ops import (
    LAYER_ATTR,
    OP_ATTR,
    NamedOpBuilder,
    callee_name,
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


# Fusable (block, rule family, format, swizzle layout) as the kernels implement them.
_KERNELS = {
    ("1x128", "fp8_block", "e4m3", "block1d"),
    ("128x128", "fp8_block", "e4m3", "block2d"),
    ("1x32", "e8m0", "e4m3", "mx"),
    ("1x16", "nvfp4_block", "e2m1", "mx"),
}


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
    if mod.decl(sw, "swizzle") is None or mod.attr(sw, "transpose") != "false":  # type: ignore[arg-type]
        return None
    assert sw is not None
    rule = mod.attr(cs, "rule")
    family = "e8m0" if rule in ("e8m0_ceil", "e8m0_floor", "e8m0_rne") else rule
    key = (mod.attr(q, "block"), family, mod.attr(q, "format"), mod.attr(sw, "layout"))
    if key not in _KERNELS or (family == "fp8_block" and mod.attr(cs, "fp8_max") != "448.0"):
        return None
    global_amax = None
    if family == "nvfp4_block":
        global_amax = _nvfp4_global_amax(mod, q, cs)
        if global_amax is None:
            return None
    return _Chain(q, cs, am, sw, global_amax)


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


def _fuse(mod: _Module, ops: NamedOpBuilder, chain: _Chain) -> None:
    q, cs, sw = chain.quantize, chain.compute_scale, chain.swizzle
    attrs: dict[str, ir.Attribute] = {}
    for call in (q, cs, sw):
        decl = mod.decls[callee_name(call)]
        for key in decl.attributes:
            name = key if isinstance(key, str) else key.name
            if name.startswith("qmlir.") and name != OP_ATTR:
                attrs[name.removeprefix("qmlir.")] = decl.attributes[name]
    variant = callee_name(q).removeprefix("qmlir.quantize.") + "." + mod.attr(sw, "layout")
    operands = [q.operands[0]] + ([chain.global_amax] if chain.global_amax is not None else [])
    layer = ir.StringAttr(q.attributes[LAYER_ATTR]).value if LAYER_ATTR in q.attributes else None
    with ir.InsertionPoint(q), q.location:
        data, scales = ops.call(
            "fused_quantize",
            variant,
            operands,
            [q.results[0].type, sw.results[0].type],
            attrs,
            layer=layer,
        )
    q.results[0].replace_all_uses_with(data)
    sw.results[0].replace_all_uses_with(scales)
    for op in (sw, q, cs, chain.amax):
        op.erase()


def _erase_unused_decls(module: ir.Module, names: set[str]) -> None:
    called: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call":
            called.add(callee_name(op))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in list(module.body.operations):
        if is_named_op_decl(op.operation) and symbol_name(op.operation) in names - called:
            op.operation.erase()


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
        if not chains:
            return
        ops = NamedOpBuilder(module)
        touched = {
            callee_name(op)
            for c in chains
            for op in (c.quantize, c.compute_scale, c.amax, c.swizzle)
        }
        with module.context:
            for chain in chains:
                _fuse(mod, ops, chain)
        _erase_unused_decls(module, {n for n in touched if op_kind(mod.decls[n]) in _FUSED_KINDS})
