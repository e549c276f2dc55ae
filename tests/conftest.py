"""Shared settings: hypothesis runs a fixed, CI-sized number of examples, derandomized; IREE's
compiled output is cached for the run (``passes/host/compile_cache.py``), shared by the xdist
workers and the CLI subprocesses they start, and removed at its end."""

from __future__ import annotations

import os
import shutil
import tempfile
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

_OWN_CACHE: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    # the controller (or a run without xdist) picks the directory; workers inherit it
    if hasattr(config, "workerinput") or os.environ.get(ENV) is not None:
        return
    directory = Path(tempfile.mkdtemp(prefix="qmlir-test-compile-cache-"))
    os.environ[ENV] = str(directory)
    _OWN_CACHE.append(directory)


def pytest_unconfigure(config: pytest.Config) -> None:
    for directory in _OWN_CACHE:
        shutil.rmtree(directory, ignore_errors=True)
        os.environ.pop(ENV, None)
