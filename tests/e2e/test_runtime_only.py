"""A deployment that only runs artifacts needs only the runtime: ``import compiler``,
``compiler.load(path)`` and a call import neither torch nor ``iree.compiler``; what needs the
compile extra says so in one line (``tests/e2e/test_wheel.py`` checks a real install)."""

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
_BLOCKER = """
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
"""

_BLOCKED_RUN = (
    _BLOCKER
    + """
import compiler

module = compiler.load(sys.argv[1])
y = module(np.load(sys.argv[2]))
np.save(sys.argv[3], y)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "torch_mlir")
                        or m.startswith("iree.compiler"))))
"""
)


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
    code = _BLOCKER + "import compiler.api.compile\n"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "is not installed on this deployment" in done.stderr


# Each command and API name that needs the compile extra, in the blocked interpreter: the exit
# code and stderr of each command, and each name's error.
_BLOCKED_EXTRA = """
import contextlib, io, json
import compiler
from compiler.cli import main

out = {}
for argv in sys.argv[1:]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv.split())
    out[argv] = [code, err.getvalue()]
for name in ("compile", "compile_training", "report", "quantize", "block_scale_dequantize"):
    try:
        getattr(compiler, name)
        out[name] = "no error"
    except compiler.QmlirError as e:
        out[name] = [type(e).__name__, isinstance(e, ImportError), str(e)]
print(json.dumps(out))
"""

INSTALL = "pip install 'qmlir[compile]'"
EVERYTHING = "(missing torch, torch-mlir, iree-base-compiler)"


def test_what_needs_the_compile_extra_names_it(tmp_path: Path) -> None:
    """``qmlir compile`` and the others exit 2 with one line; the API raises ``MissingExtra``."""
    argvs = {
        f"compile {tmp_path}/m.py": f"qmlir compile needs the compile extra {EVERYTHING}",
        f"report {tmp_path}/m.py": f"qmlir report needs the compile extra {EVERYTHING}",
        f"quantize {tmp_path}/x.npy -o {tmp_path}/q.npz": (
            "qmlir quantize needs the compile extra (missing iree-base-compiler)"
        ),
        "recipes": "qmlir recipes needs the compile extra (missing iree-base-compiler)",
    }
    done = subprocess.run(
        [sys.executable, "-c", _BLOCKER + _BLOCKED_EXTRA, *argvs],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for argv, line in argvs.items():
        assert found[argv] == [2, f"qmlir: error: {line}: {INSTALL}\n"], argv
    for name in ("compile", "compile_training", "report"):
        message = f"compiler.{name} needs the compile extra {EVERYTHING}: {INSTALL}"
        assert found[name] == ["MissingExtra", True, message]
    message = f"compiler.quantize needs the compile extra (missing iree-base-compiler): {INSTALL}"
    assert found["quantize"] == ["MissingExtra", True, message]
    assert found["block_scale_dequantize"][2].startswith("compiler.block_scale_dequantize needs")
