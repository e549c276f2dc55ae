"""A Python program's first call of an llvm-cpu artifact makes glibc keep freed memory
(``compiler/runtime/host_memory.py``), as the ``qmlir`` command does: a large block freed and
allocated again then reuses its pages. A program that declines it (``retain_freed_memory(False)``
or ``QMLIR_RETAIN_FREED_MEMORY=0``) keeps glibc's policy, under which the block is faulted in
again. Each case runs in a process of its own: the setting is process-wide."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest
import torch

from tests.e2e.python_child import run_python
from tests.freed_block import FAULTS, PAGES

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)

CHILD = (
    r"""
import json, sys
import numpy as np
import compiler
from compiler.runtime import host_memory
if sys.argv[2] == "declined":
    compiler.retain_freed_memory(False)
art = compiler.load(sys.argv[1])
art(np.ones((4, 64), np.float32))
if sys.argv[2] == "restored":
    compiler.retain_freed_memory(False)
"""
    + FAULTS
    + 'print(json.dumps({"retained": host_memory._retained, "faults": freed_block_faults()}))\n'
)


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import compiler

    torch.manual_seed(0)
    model = torch.nn.Linear(64, 32).eval()
    path = tmp_path_factory.mktemp("freed") / "linear.vmfb"
    compiler.compile(model, (torch.randn(4, 64),), "fp8-current").save(path)
    return path


def _child(artifact: Path, case: str, env: dict[str, str] | None = None) -> dict[str, object]:
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        return run_python(CHILD, str(artifact), case)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_the_first_cpu_call_retains_freed_memory(artifact: Path) -> None:
    out = _child(artifact, "default")
    assert out["retained"] is True
    assert out["faults"] < PAGES // 100  # the freed block's pages were reused


@pytest.mark.parametrize("case", ["declined", "restored"])
def test_a_program_can_decline_or_undo_it(artifact: Path, case: str) -> None:
    out = _child(artifact, case)
    assert out["retained"] is False
    assert out["faults"] >= PAGES // 2  # back from the kernel: faulted in again


def test_the_environment_can_decline_it(artifact: Path) -> None:
    out = _child(artifact, "default", {"QMLIR_RETAIN_FREED_MEMORY": "0"})
    assert out["retained"] is False
    assert out["faults"] >= PAGES // 2
