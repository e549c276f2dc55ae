"""A module's named-op calls, read through their declarations' typed attributes."""

from __future__ import annotations

from iree.compiler import ir

from passes.ir.dialect import NamedOp, OpKind
from passes.ir.named_ops import LAYER_ATTR, callee_name, is_named_op_decl, symbol_name


class NamedCalls:
    """The module's named-op declarations by name, and the declaration behind a call."""

    def __init__(self, module: ir.Module) -> None:
        self.decls = {
            symbol_name(op.operation): op.operation
            for op in module.body.operations
            if is_named_op_decl(op.operation)
        }

    def of_kind(self, call: ir.Operation | None, kind: OpKind) -> NamedOp | None:
        """The declaration ``call`` calls, if it is a named op of ``kind``."""
        if call is None or call.name != "func.call":
            return None
        decl = self.decls.get(callee_name(call))
        if decl is None:
            return None
        op = NamedOp(decl)
        return op if op.kind is kind else None

    def op(self, call: ir.Operation) -> NamedOp:
        return NamedOp(self.decls[callee_name(call)])


def layer_of(call: ir.Operation) -> str | None:
    attrs = call.attributes
    return ir.StringAttr(attrs[LAYER_ATTR]).value if LAYER_ATTR in attrs else None


def producer(value: ir.Value) -> ir.Operation | None:
    """The operation that made ``value`` (None for a block argument)."""
    if isinstance(value.owner, ir.Block):
        return None
    return value.owner.operation


def only_use(value: ir.Value) -> ir.Operation | None:
    uses = list(value.uses)
    return uses[0].owner if len(uses) == 1 else None
