"""Scaling recipes: frozen dataclasses registered by name (``--recipe NAME``)."""

from passes.recipes.base import RECIPES, Recipe, get_recipe, register_recipe
from passes.recipes.fp8_current import Fp8CurrentScaling
from passes.recipes.none import NoQuantization

__all__ = [
    "RECIPES",
    "Fp8CurrentScaling",
    "NoQuantization",
    "Recipe",
    "get_recipe",
    "register_recipe",
]
