"""Shared settings: hypothesis runs a fixed, CI-sized number of examples, derandomized; IREE's
compiled output is cached (``passes/host/compile_cache.py``) in the user's cache directory
(``$XDG_CACHE_HOME/qmlir/test-compile-cache``, 4 GB at most, least recently used first out),
shared by the xdist workers, the CLI subprocesses they start and later runs: a module whose
bytes, flags, IREE release and host CPU are unchanged compiles once. ``QMLIR_COMPILE_CACHE``
set by the caller wins (``0``: no cache, every compile runs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from passes.host.compile_cache import ENV

settings.register_profile(
    "qmlir",
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("qmlir")


def pytest_configure(config: pytest.Config) -> None:
    # the controller (or a run without xdist) picks the directory; workers inherit it
    if hasattr(config, "workerinput") or os.environ.get(ENV) is not None:
        return
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    os.environ[ENV] = str(Path(base) / "qmlir" / "test-compile-cache")
