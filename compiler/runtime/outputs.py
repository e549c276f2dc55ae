"""An artifact's outputs given back in the structure the model returned them: the tree that
``compiler/frontend/output_tree.py`` recorded in the signature (no torch needed)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any


def rebuild(tree: Any, leaves: Sequence[Any]) -> Any:
    """``leaves`` (the module's outputs, in order) arranged as ``tree`` says: dicts, lists and
    tuples as the model returned them."""
    it = iter(leaves)
    out = _rebuild(tree, it)
    if next(it, _MISSING) is not _MISSING:
        raise ValueError("more outputs than the recorded structure holds")
    return out


_MISSING = object()


def _rebuild(tree: Any, leaves: Iterator[Any]) -> Any:
    if tree == "tensor":
        leaf = next(leaves, _MISSING)
        if leaf is _MISSING:
            raise ValueError("fewer outputs than the recorded structure holds")
        return leaf
    if "dict" in tree:
        return {key: _rebuild(child, leaves) for key, child in tree["dict"]}
    if "list" in tree:
        return [_rebuild(child, leaves) for child in tree["list"]]
    return tuple(_rebuild(child, leaves) for child in tree["tuple"])


def valid_tree(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is an output tree (the metadata schema's check of a forged one)."""
    if value == "tensor":
        return True
    if depth > 32 or not isinstance(value, dict):
        return False
    if set(value) == {"dict"} and isinstance(value["dict"], list):
        return all(
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], str)
            and valid_tree(item[1], depth + 1)
            for item in value["dict"]
        )
    kind = "list" if "list" in value else "tuple"
    allowed = {kind} | ({"fields"} if kind == "tuple" else set())
    children = value.get(kind)
    fields = value.get("fields", [])
    return (
        set(value) <= allowed
        and kind in value
        and isinstance(children, list)
        and isinstance(fields, list)
        and all(isinstance(f, str) for f in fields)
        and all(valid_tree(c, depth + 1) for c in children)
    )
