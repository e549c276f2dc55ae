"""Recipe ``none``: the model compiled unchanged, in its own precision (the baseline)."""

from __future__ import annotations

import dataclasses

from passes.recipes.base import Recipe, register_recipe


@register_recipe
@dataclasses.dataclass(frozen=True)
class NoQuantization(Recipe):
    name = "none"
    summary = "no quantization: the model as exported, in its own dtype (the baseline)"
    quantizes = False

    def rows_apart(self) -> bool:
        return True
