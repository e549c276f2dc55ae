"""``qmlir recipes``: the recipes, their options and defaults."""

from __future__ import annotations

import argparse
import dataclasses

from compiler.extras import IR

NAME = "recipes"
HELP = "list recipes, their options and defaults"
NEEDS = IR


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No flags."""


def run(args: argparse.Namespace) -> int:
    # recipes need iree.compiler (the compile extra); every command imports this module
    from passes.recipes import RECIPES

    for name, cls in sorted(RECIPES.items()):
        print(f"{name}: {cls.summary}")
        docs = cls.option_docs()
        for f in dataclasses.fields(cls):
            default = f.default
            shown = getattr(default, "value", default)
            print(f"    {f.name} (default {shown}): {docs.get(f.name, '')}")
    return 0
