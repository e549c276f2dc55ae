"""What the artifact says about each input beyond shape and dtype: its name (the model's forward
parameter, so a ``.npz`` can give inputs by name); for an input whose values index an embedding
table, the valid range (checked before every call: an id past the table would read out of
bounds, which crashes the process or returns garbage, where torch raises); and for each dynamic
dim (``torch.export``'s ``dynamic_shapes``) its name, range and example size.
"""

from __future__ import annotations

from typing import Any

import torch

from compiler.frontend.model_source import user_input_names

_aten = torch.ops.aten
# ops that move or reshape ids without changing their values
_SAME_VALUES = {
    _aten.view.default,
    _aten.reshape.default,
    _aten._unsafe_view.default,
    _aten.unsqueeze.default,
    _aten.squeeze.dim,
    _aten.squeeze.dims,
    _aten.squeeze.default,
    _aten.expand.default,
    _aten.clone.default,
    _aten.alias.default,
    _aten.permute.default,
    _aten.transpose.int,
    _aten.t.default,
    _aten.flatten.using_ints,
    _aten.slice.Tensor,
    _aten.select.int,
}


def input_roles(
    program: torch.export.ExportedProgram, dim_names: dict[str, dict[int, str]] | None = None
) -> list[dict[str, Any]]:
    """Per user input of ``program``, in order: ``{"name": ..., "index_range": [0, rows],
    "dims": [None, {"name": "batch", "min": 1, "max": 64, "example": 8}, ...]}``
    (``index_range`` only where the input feeds ``aten.embedding`` as its indices, ``dims`` only
    where a dim is dynamic, ``None`` for a static one). ``dim_names``: the user's names of the
    dynamic dims by input and dim (default: torch's symbols, ``s0``)."""
    user, placeholders, symbols = _user_inputs(program, dim_names or {})
    rows: dict[str, int] = {}
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target != _aten.embedding.default:
            continue
        source = _origin(node.args[1])
        table = node.args[0].meta.get("val")
        if source is not None and source in user and table is not None:
            count = int(table.shape[0])
            rows[source] = min(count, rows.get(source, count))
    roles = []
    for name in user:
        role: dict[str, Any] = {"name": name}
        if name in rows:
            role["index_range"] = [0, rows[name]]
        dims = _dims(program, placeholders[name], symbols)
        if any(d is not None for d in dims):
            role["dims"] = dims
        roles.append(role)
    return roles


def output_dims(
    program: torch.export.ExportedProgram, dim_names: dict[str, dict[int, str]] | None = None
) -> list[list[str | None]]:
    """Per output, each dim's expression in the inputs' dim names (``batch``, ``2*seq``), or
    ``None`` where it is static."""
    _, _, symbols = _user_inputs(program, dim_names or {})
    (output,) = (n for n in program.graph.nodes if n.op == "output")
    out = []
    for node in torch.utils._pytree.tree_leaves(output.args[0]):
        value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        if value is None or not hasattr(value, "shape"):
            out.append([])
            continue
        out.append([_expression(d, symbols) for d in value.shape])
    return out


def _user_inputs(
    program: torch.export.ExportedProgram, dim_names: dict[str, dict[int, str]]
) -> tuple[list[str], dict[str, torch.fx.Node], dict[Any, str]]:
    """The user inputs' names, the graph's placeholders, and the dynamic dims' names."""
    user = user_input_names(program)
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    return user, placeholders, _symbol_names(program, user, placeholders, dim_names)


def _symbol_names(
    program: torch.export.ExportedProgram,
    user: list[str],
    placeholders: dict[str, torch.fx.Node],
    dim_names: dict[str, dict[int, str]],
) -> dict[Any, str]:
    """torch's symbol of each dynamic input dim → the user's name for it (its own otherwise)."""
    names: dict[Any, str] = {}
    for name in user:
        value = placeholders[name].meta.get("val")
        for i, d in enumerate(getattr(value, "shape", ())):
            if isinstance(d, torch.SymInt) and d.node.expr.is_Symbol:
                given = dim_names.get(name, {}).get(i)
                names.setdefault(d.node.expr, given or str(d.node.expr))
    return names


def _dims(
    program: torch.export.ExportedProgram, node: torch.fx.Node, symbols: dict[Any, str]
) -> list[dict[str, Any] | None]:
    value = node.meta.get("val")
    dims: list[dict[str, Any] | None] = []
    for d in getattr(value, "shape", ()):
        if not isinstance(d, torch.SymInt):
            dims.append(None)
            continue
        expr = d.node.expr
        bounds = program.range_constraints.get(expr)
        low = int(bounds.lower) if bounds is not None else 0
        high = bounds.upper if bounds is not None else None
        finite = high is not None and getattr(high, "is_finite", True) and high != float("inf")
        dims.append(
            {
                "name": _expression(d, symbols),
                "min": low,
                "max": int(high) if finite else None,
                "example": int(d.node.hint) if d.node.hint is not None else None,
            }
        )
    return dims


def _expression(d: Any, symbols: dict[Any, str]) -> str | None:
    if not isinstance(d, torch.SymInt):
        return None
    expr = d.node.expr
    if expr in symbols:
        return symbols[expr]
    import sympy  # torch's own dependency

    return str(expr.subs({s: sympy.Symbol(n) for s, n in symbols.items()}))


def _origin(node: Any) -> str | None:
    """The placeholder ``node``'s values come from unchanged, if any."""
    while isinstance(node, torch.fx.Node):
        if node.op == "placeholder":
            return str(node.name)
        if node.op != "call_function" or node.target not in _SAME_VALUES:
            return None
        node = node.args[0]
    return None
