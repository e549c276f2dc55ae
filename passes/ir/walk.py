"""Finding ops before rewriting them."""

from __future__ import annotations

from collections.abc import Callable

from iree.compiler import ir


def ops_where(root: ir.Operation, keep: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """Every op nested in ``root`` that ``keep`` takes, in walk order (post-order: program order
    within a block), gathered before any is rewritten: a pass must not change what it walks."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if keep(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found
