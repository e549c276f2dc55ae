"""``--exclude`` / ``--layer-recipe`` globs that match no layer: an error naming the nearest
layers, since a typo would otherwise ship a model quantized where it was meant not to be.

The recipe pass (``passes/quantize_matmuls.py``) matches each glob with
``fnmatch.fnmatchcase`` (case-sensitive, ``*`` crosses dots) against the names of every matmul
it sees: the module path the importer put in the op's location (``layers.3.fc1``, '' when there
is none) and, for a batched matmul with a constant ``[E, K, N]`` weight (MoE experts,
``passes/ir/expert_matmuls.py``), each expert's ``<layer>.expert<i>`` as well.
:func:`matmul_layer_names` lists exactly those names from the module the pass is given;
:func:`check_globs` matches them the same way.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Sequence

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.expert_matmuls import expert_count, expert_name
from passes.ir.layer_names import layer_name
from passes.ir.torch_ops import MATMUL_OPS

NEAREST = 5  # how many layer names an error lists


def matmul_layer_names(module: ir.Module) -> list[str]:
    """The names the recipe pass matches globs against, in module order, from the module
    before the pass runs: each matmul's layer, and each expert's name of a batched weight."""
    names: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in MATMUL_OPS:
            layer = layer_name(op)
            names.append(layer)
            names.extend(expert_name(layer, i) for i in range(expert_count(op)))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return names


def check_globs(
    exclude: Iterable[str],
    layer_recipe_globs: Iterable[str],
    layer_names: Sequence[str],
    scaled_layers: Iterable[str] = (),
) -> None:
    """Raises a one-line :class:`QmlirError` for the first glob that matches none of
    ``layer_names`` (:func:`matmul_layer_names`), listing the nearest names. With no name at
    all (a model without matmuls) nothing is refused: there is no layer to suggest. Each of
    ``scaled_layers`` (static activation scales) must name a layer exactly."""
    if not layer_names:
        return
    names = list(dict.fromkeys(layer_names))  # model order, once each
    flags = [("--exclude", glob) for glob in exclude]
    flags += [("--layer-recipe", glob) for glob in layer_recipe_globs]
    flags += [("--activation-scales", fnmatch_escape(name)) for name in scaled_layers]
    for flag, glob in flags:
        if not any(fnmatch.fnmatchcase(name, glob) for name in names):
            raise QmlirError(
                f"{flag} '{glob}' matches no layer; nearest: {', '.join(nearest(glob, names))}"
            )


def fnmatch_escape(name: str) -> str:
    """``name`` as a glob matching only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def nearest(glob: str, names: Sequence[str], n: int = NEAREST) -> list[str]:
    """The ``n`` layer names most like ``glob``, most alike first (ties in model order).

    Alike is difflib's ratio between the glob without its wildcards and the name, or, for a glob
    ending (starting) with a wildcard, the name's start (end) of the same length: ``lyaers.*``
    is nearest to ``layers.0.fc1``, ``*.atn.*`` to ``h.0.attn.qkv``."""
    pattern = "".join(c for c in glob if c not in "*?[]")
    size = len(pattern)

    def likeness(name: str) -> float:
        parts = [name]
        if glob.endswith(("*", "?")):
            parts.append(name[:size])
        if glob.startswith(("*", "?")):
            parts.append(name[-size:] if size else "")
        return max(difflib.SequenceMatcher(None, pattern, part).ratio() for part in parts)

    named = [name for name in names if name]
    ranked = sorted(range(len(named)), key=lambda i: (-likeness(named[i]), i))
    return [named[i] for i in ranked[:n]] or ["(only layers without a module path)"]
