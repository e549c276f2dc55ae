"""A deployment that only runs artifacts needs only the runtime: ``import compiler``,
``compiler.load(path)`` and a call import neither torch nor ``iree.compiler``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import compiler
from tests.e2e.models.tiny import build as build_tiny

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter where importing torch or iree.compiler raises, as on a machine
# that has only iree-base-runtime, numpy and ml_dtypes installed.
_BLOCKED_RUN = """
import importlib.abc, json, sys
import numpy as np

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith(("torch.", "torch_mlir")) or name.startswith(
            "iree.compiler"
        ):
            raise ImportError(f"{name} is not installed on this deployment")
        return None

sys.meta_path.insert(0, Block())
import compiler

module = compiler.load(sys.argv[1])
y = module(np.load(sys.argv[2]))
np.save(sys.argv[3], y)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "torch_mlir")
                        or m.startswith("iree.compiler"))))
"""


def test_load_and_call_without_torch_or_the_compiler(tmp_path: Path) -> None:
    model, inputs = build_tiny()
    artifact = compiler.compile(model, inputs, "fp8-current")
    path, x_path, y_path = tmp_path / "m.vmfb", tmp_path / "x.npy", tmp_path / "y.npy"
    artifact.save(path)
    x = inputs[0].numpy()
    np.save(x_path, x)
    done = subprocess.run(
        [sys.executable, "-c", _BLOCKED_RUN, str(path), str(x_path), str(y_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
    np.testing.assert_array_equal(np.load(y_path), artifact(x))


def test_the_blocker_would_catch_a_compile_time_import(tmp_path: Path) -> None:
    """The blocked interpreter refuses what compiling needs (so the test above can fail)."""
    code = _BLOCKED_RUN.split("import compiler")[0] + "import compiler\ncompiler.compile\n"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "is not installed on this deployment" in done.stderr
