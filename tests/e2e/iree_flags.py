"""A spy on the flags the compile passes to iree-compile (``compiler.pipeline.core``)."""

from __future__ import annotations

from typing import Any

import pytest


def record_iree_flags(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Each compile's iree-compile flags from here on, in order (the compile itself runs)."""
    from compiler.pipeline import core

    seen: list[tuple[str, ...]] = []
    compile_module = core.compile_module

    def spy(module: Any, target: Any, flags: Any = (), *args: Any) -> Any:
        seen.append(tuple(flags))
        return compile_module(module, target, flags, *args)

    monkeypatch.setattr(core, "compile_module", spy)
    return seen
