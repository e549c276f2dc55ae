"""Private functions a pass adds to a module from a template's text, one per name."""

from __future__ import annotations

from iree.compiler import ir


def function_names(module: ir.Module) -> set[str]:
    """The symbols of the module's ``func.func`` ops."""
    return {
        ir.StringAttr(op.operation.attributes["sym_name"]).value
        for op in module.body.operations
        if op.operation.name == "func.func"
    }


def add_function(module: ir.Module, names: set[str], name: str, text: str) -> None:
    """Appends the function ``text`` defines unless ``name`` is in ``names`` (then adds it)."""
    if name in names:
        return
    module.body.append(ir.Operation.parse(text))
    names.add(name)
