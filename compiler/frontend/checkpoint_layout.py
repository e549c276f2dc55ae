"""A checkpoint's tensor names against the model's: transformers' conversion mapping.

transformers 5 builds some models with tensors laid out differently from their checkpoints and
converts while loading (``transformers.conversion_mapping``): a mixture-of-experts model holds
all experts of a projection in one ``[experts, out, in]`` parameter (``mlp.experts.gate_up_proj``)
where the checkpoint has one matrix per expert (``mlp.experts.3.gate_proj.weight`` and
``.up_proj.weight``; Mixtral's ``w1``/``w3``/``w2`` under ``block_sparse_moe``).

:class:`Layout` finds, for a model tensor the shards do not hold under its own name, the stored
tensor it was renamed from, or the per-expert tensors it is stacked from. Two kinds of
conversion are followed, the ones the MoE architectures use: renamings (a name's substring
replaced) and converters whose operations are ``MergeModulelist(dim=0)`` (stack the experts),
optionally followed by ``Concatenate(dim=1)`` (join the source patterns, gate before up). A
conversion of another kind is not followed: the tensor is then missing, as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

EXPERT = "*"  # the expert index in a converter's source pattern


@dataclass(frozen=True)
class Merged:
    """A model tensor stacked from checkpoint tensors: ``parts[j][e]`` is source pattern ``j``'s
    tensor of expert ``e``; each pattern's experts are stacked along a new leading dim, then
    the patterns joined along dim 1 (``concat``) or taken alone (one pattern)."""

    parts: tuple[tuple[str, ...], ...]
    concat: bool


@dataclass(frozen=True)
class _Converter:
    sources: tuple[str, ...]
    target: str
    concat: bool


class Layout:
    """The conversions of ``model_type`` (none if transformers has none) over the checkpoint's
    ``stored`` names."""

    def __init__(self, model_type: str, stored: Iterable[str]) -> None:
        renames, self._converters = _conversions(model_type)
        self._by_model_name: dict[str, str] = {}
        for name in stored:
            renamed = name
            for source, target in renames:
                renamed = renamed.replace(source, target)
            self._by_model_name.setdefault(renamed, name)

    def find(self, name: str) -> str | None:
        """The stored name that ``name`` was renamed from (itself if stored as it is)."""
        return self._by_model_name.get(name)

    def merged(self, name: str, experts: int) -> Merged | None:
        """How ``name`` (``experts`` along its leading dim) is stacked from stored tensors; None
        if no converter targets it or a part is missing."""
        for conv in self._converters:
            if not name.endswith(conv.target):
                continue
            prefix = name[: len(name) - len(conv.target)]
            parts = []
            for source in conv.sources:
                names = [self.find(prefix + source.replace(EXPERT, str(e))) for e in range(experts)]
                if any(n is None for n in names):
                    break
                parts.append(tuple(n for n in names if n is not None))
            else:
                return Merged(tuple(parts), conv.concat)
        return None


def _conversions(model_type: str) -> tuple[list[tuple[str, str]], list[_Converter]]:
    try:
        from transformers.conversion_mapping import get_checkpoint_conversion_mapping

        mapping = get_checkpoint_conversion_mapping(model_type) or []
    except (ImportError, KeyError, ValueError):
        return [], []
    renames: list[tuple[str, str]] = []
    converters: list[_Converter] = []
    for transform in mapping:
        sources = list(getattr(transform, "source_patterns", []) or [])
        targets = list(getattr(transform, "target_patterns", []) or [])
        operations = list(getattr(transform, "operations", []) or [])
        if not operations:
            if len(sources) == len(targets):
                renames += [(s, t) for s, t in zip(sources, targets, strict=True) if _plain(s)]
            continue
        concat = _merge_kind(operations)
        if concat is None or len(targets) != 1 or not all(EXPERT in s for s in sources):
            continue
        if concat is False and len(sources) != 1:
            continue
        converters.append(_Converter(tuple(sources), targets[0], concat))
    return renames, converters


def _plain(pattern: str) -> bool:
    """A pattern that is a plain substring (transformers' may be regular expressions)."""
    return not any(c in pattern for c in "*+?[](){}^$|\\")


def _merge_kind(operations: list[Any]) -> bool | None:
    """True for stack-then-concatenate (dim 0, then dim 1), False for a stack alone, None for
    anything else."""
    kinds = [(type(op).__name__, getattr(op, "dim", None)) for op in operations]
    if kinds == [("MergeModulelist", 0)]:
        return False
    if kinds == [("MergeModulelist", 0), ("Concatenate", 1)]:
        return True
    return None
