"""The structure of a model's outputs, for an artifact to give them back as the model does.

``torch.export`` flattens what ``forward`` returns into pytree leaves; the compiled module
returns those leaves in order. :func:`output_structure` records the structure around them as
JSON that the runtime rebuilds without torch (``compiler/runtime/outputs.py``), and names each
leaf by its path (``logits``, ``hidden.1``) for the CLI:

- ``"tensor"``: a leaf;
- ``{"dict": [[key, tree], ...]}``: a dict, an ``OrderedDict`` or a transformers ``ModelOutput``
  (given back as a plain ``dict``, keys in their order);
- ``{"list": [tree, ...]}``, ``{"tuple": [tree, ...]}`` (a namedtuple is a tuple with
  ``"fields"``, which name its leaves).

A single tensor or a flat tuple of tensors needs no record: the artifact returns a tensor or a
tuple, as before structures were recorded.
"""

from __future__ import annotations

from typing import Any

import torch

OutputTree = Any  # "tensor" | {"dict": [[str, OutputTree], ...]} | {"list" | "tuple": [...]}


def output_structure(
    program: torch.export.ExportedProgram, leaves: int
) -> tuple[OutputTree | None, list[str]]:
    """The outputs' tree and each leaf's name, or ``(None, [])`` where the outputs are one
    tensor or a flat tuple (or the spec does not describe ``leaves`` leaves)."""
    spec = program.call_spec.out_spec
    if spec is None:
        return None, []
    tree = _tree(spec)
    names = _names(tree, "")
    if len(names) != leaves or tree == "tensor":
        return None, []
    if "tuple" in tree and "fields" not in tree and all(c == "tensor" for c in tree["tuple"]):
        return None, []
    return tree, names


def _tree(spec: Any) -> OutputTree:
    if spec.is_leaf():
        return "tensor"
    children = [_tree(child) for child in spec.children()]
    kind = spec.type
    keys = spec.context
    if isinstance(kind, type) and issubclass(kind, dict) and isinstance(keys, (list, tuple)):
        if len(keys) == len(children) and all(isinstance(k, (str, int)) for k in keys):
            return {"dict": [[str(k), child] for k, child in zip(keys, children, strict=True)]}
    if kind is list:
        return {"list": children}
    # a namedtuple (torch's spec: the type is `namedtuple`, the context the class): its fields
    # name the leaves
    fields = getattr(keys, "_fields", None) or getattr(kind, "_fields", None)
    if isinstance(fields, tuple) and len(fields) == len(children):
        return {"tuple": children, "fields": list(fields)}
    return {"tuple": children}


def _names(tree: OutputTree, prefix: str) -> list[str]:
    if tree == "tensor":
        return [prefix or "output"]
    if "dict" in tree:
        items = [(key, child) for key, child in tree["dict"]]
    else:
        children = tree["list"] if "list" in tree else tree["tuple"]
        keys = tree.get("fields") or [str(i) for i in range(len(children))]
        items = list(zip(keys, children, strict=True))
    names: list[str] = []
    for key, child in items:
        names += _names(child, f"{prefix}.{key}" if prefix else key)
    return names
