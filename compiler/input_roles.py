"""What the artifact says about each input beyond shape and dtype: its name (the model's forward
parameter, so a ``.npz`` can give inputs by name) and, for an input whose values index an
embedding table, the valid range (checked before every call: an id past the table would read
out of bounds, which crashes the process or returns garbage, where torch raises).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.export.graph_signature import InputKind

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


def input_roles(program: torch.export.ExportedProgram) -> list[dict[str, Any]]:
    """Per user input of ``program``, in order: ``{"name": ..., "index_range": [0, rows]}``
    (``index_range`` only where the input feeds ``aten.embedding`` as its indices)."""
    user = [
        spec.arg.name
        for spec in program.graph_signature.input_specs
        if spec.kind == InputKind.USER_INPUT
    ]
    rows: dict[str, int] = {}
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target != _aten.embedding.default:
            continue
        source = _origin(node.args[1])
        table = node.args[0].meta.get("val")
        if source is not None and source in user and table is not None:
            count = int(table.shape[0])
            rows[source] = min(count, rows.get(source, count))
    return [
        {"name": name, **({"index_range": [0, rows[name]]} if name in rows else {})}
        for name in user
    ]


def _origin(node: Any) -> str | None:
    """The placeholder ``node``'s values come from unchanged, if any."""
    while isinstance(node, torch.fx.Node):
        if node.op == "placeholder":
            return str(node.name)
        if node.op != "call_function" or node.target not in _SAME_VALUES:
            return None
        node = node.args[0]
    return None
