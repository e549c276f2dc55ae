"""Scaling recipes: frozen dataclasses registered by name (``--recipe NAME``).

Every module of this package is imported here, so a recipe module registers itself
(``@register_recipe``) without an entry in this file; the names below are the public ones.
"""

import importlib
import pkgutil

from passes.recipes.base import (
    RECIPES,
    QuantizedOperand,
    Recipe,
    Role,
    ScalingRecipe,
    Usage,
    get_recipe,
    register_recipe,
)
from passes.recipes.fp8_block import Fp8BlockScaling
from passes.recipes.fp8_current import Fp8CurrentScaling
from passes.recipes.fp8_delayed import Fp8DelayedScaling
from passes.recipes.fp8_rowwise import Fp8RowwiseScaling
from passes.recipes.mxfp4 import Mxfp4BlockScaling
from passes.recipes.mxfp8 import Mxfp8BlockScaling
from passes.recipes.none import NoQuantization
from passes.recipes.nvfp4 import Nvfp4BlockScaling

__all__ = [
    "RECIPES",
    "Fp8BlockScaling",
    "Fp8CurrentScaling",
    "Fp8DelayedScaling",
    "Fp8RowwiseScaling",
    "Mxfp4BlockScaling",
    "Mxfp8BlockScaling",
    "NoQuantization",
    "Nvfp4BlockScaling",
    "QuantizedOperand",
    "Recipe",
    "Role",
    "ScalingRecipe",
    "Usage",
    "get_recipe",
    "register_recipe",
]

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
