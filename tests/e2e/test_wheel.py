"""The wheel: it carries every file of the packages, compiles with the compile extra, and
installed alone in a fresh virtual environment runs, inspects and trains artifacts while what
needs the extra says so in one line.

The wheel is built from a copy of the tree (a stale ``build/`` cannot leak into it). The
artifacts are compiled by this environment's torch and IREE with the wheel's code on the path,
so the templates and kernels read are the wheel's. The virtual environment gets the wheel and
its runtime dependencies from pip (its cache or the index). About a minute of CPU, most of
it the compile and pip (2-3 minutes of wall time on a busy two-core machine).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import compiler

pytestmark = [pytest.mark.models, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compiler", "passes", "runtime_kernels")
TINY = ROOT / "tests" / "e2e" / "models" / "tiny.py"
INSTALL = "pip install 'qmlir[compile]'"
EVERYTHING = "(missing torch, torch-mlir, iree-base-compiler)"
# the environment of the dev tree's tests, less what would put it on the venv's path
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def _is_cache(path: Path) -> bool:
    return "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo")


def package_files(root: Path) -> set[str]:
    """Every file of the packages under ``root`` but caches, as the wheel names them."""
    return {
        path.relative_to(root).as_posix()
        for package in PACKAGES
        for path in (root / package).rglob("*")
        if path.is_file() and not _is_cache(path.relative_to(root))
    }


def _run(argv: list[str | Path], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in PACKAGES:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")
        shutil.copytree(ROOT / package, source / package, ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    built = _run([*pip, "wheel", source, "--no-deps", "--no-build-isolation", "-w", out], out)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (path,) = out.glob("qmlir-*.whl")
    return path


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> dict[str, Path]:
    """An inference artifact and a training step, compiled by the wheel's code (unpacked on the
    path) with this environment's compile extra; inputs and batches for them."""
    work = tmp_path_factory.mktemp("artifacts")
    unpacked = work / "unpacked"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(unpacked)
    paths = {
        "model": work / "tiny.vmfb",
        "step": work / "step.vmfb",
        "x": work / "x.npy",
        "y": work / "y.npz",
        "batches": work / "batches.npz",
    }
    compiles = [
        ["compile", f"{TINY}:build", "--recipe", "fp8-current", "-o", str(paths["model"]), "-q"],
        ["compile", "--train", f"{TINY}:build_train", "-o", str(paths["step"]), "-q"],
    ]
    script = """
import json, sys
from pathlib import Path
import compiler, passes, runtime_kernels
root = Path(sys.argv[1]).resolve()
for package in (compiler, passes, runtime_kernels):  # the wheel's code, not the tree's
    assert Path(package.__file__).resolve().parent.parent == root, package.__file__
from compiler.cli import main
sys.exit(max(main(argv) for argv in json.loads(sys.argv[2])))
"""
    env = dict(ENV, PYTHONPATH=str(unpacked))
    argv = [sys.executable, "-c", script, str(unpacked), json.dumps(compiles)]
    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    np.save(paths["x"], x)
    b = rng.standard_normal((2, 8, 64)).astype(np.float32)
    np.savez(paths["batches"], x=b, y=np.tanh(b[..., :16]).astype(np.float32))
    # this environment's runtime gives the outputs the venv must reproduce
    np.savez(paths["y"], output0=compiler.load(paths["model"])(x))
    return paths


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A fresh virtual environment (no system site packages) with the wheel alone installed."""
    root = tmp_path_factory.mktemp("venv") / "env"
    made = _run([sys.executable, "-m", "venv", root], root.parent)
    assert made.returncode == 0, made.stderr
    pip = [root / "bin" / "python", "-m", "pip", "--disable-pip-version-check", "-q"]
    installed = _run([*pip, "install", wheel], root.parent, timeout=600)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    return root


def test_the_wheel_carries_every_file_of_the_packages(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = {n for n in z.namelist() if ".dist-info/" not in n}
    expected = package_files(ROOT)
    assert sorted(expected - names) == []  # a glob of package-data that misses a file
    assert sorted(names - expected) == []
    # what the product reads at run time, named once more
    assert "compiler/analysis/templates/report.html" in names
    assert "compiler/analysis/templates/search.html" in names
    assert "compiler/analysis/templates/style.css" in names  # both pages' styles
    assert sum(n.startswith("passes/lowering/cpu/templates/") for n in names) > 50
    assert sum(n.startswith("passes/lowering/cuda/templates/") for n in names) > 10
    assert {"runtime_kernels/include/qmlir_numerics.cuh", "runtime_kernels/src/nvfp4.cu"} <= names


def test_the_wheel_needs_only_the_runtime(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [
            line.removeprefix("Requires-Dist: ")
            for line in z.read(meta).decode().splitlines()
            if line.startswith("Requires-Dist: ") and "extra ==" not in line
        ]
        (points,) = [n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt")]
        assert "qmlir = compiler.cli:main" in z.read(points).decode()
    assert sorted(r.split("==")[0].lower().replace("_", "-") for r in requires) == [
        "iree-base-runtime",
        "ml-dtypes",
        "numpy",
    ]


def test_a_runtime_only_install(venv: Path, artifacts: dict[str, Path], tmp_path: Path) -> None:
    """One test (its fixtures are the slow part: under ``pytest -n`` no worker builds them
    twice): the venv lacks the compile extra, runs, inspects and trains artifacts, and what
    needs the extra says so in one line."""
    python, qmlir = venv / "bin" / "python", venv / "bin" / "qmlir"
    for module in ("torch", "torch_mlir", "iree.compiler"):
        assert _run([python, "-c", f"import {module}"], venv).returncode != 0, module
    found = _run([python, "-c", "import compiler, iree.runtime; print(compiler.__file__)"], venv)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).is_relative_to(venv)  # the wheel's, not the tree's

    shown = _run([qmlir, "inspect", artifacts["model"]], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "(verified)" in shown.stdout and "fp8-current" in shown.stdout
    assert "main(x: f32[8, 64]) -> (f32[8, 16])" in shown.stdout

    ran = _run([qmlir, "run", artifacts["model"], "--random-inputs", "--seed", "0"], tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("output 0: shape [8, 16] dtype float32")
    out = tmp_path / "out.npz"
    ran = _run([qmlir, "run", artifacts["model"], "--inputs", artifacts["x"], "-o", out], tmp_path)
    assert ran.returncode == 0, ran.stderr
    with np.load(out) as got, np.load(artifacts["y"]) as want:
        np.testing.assert_array_equal(got[got.files[0]], want["output0"])

    # qmlir train runs a compiled step: it needs only the runtime (docs/cli.md)
    argv = ["train", artifacts["step"], "--data", artifacts["batches"], "--steps", "3", "-q"]
    trained = _run([qmlir, *argv], tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert "loss" in trained.stdout

    script = """
import sys
import numpy as np
import compiler
y = compiler.load(sys.argv[1])(np.load(sys.argv[2]))
np.testing.assert_array_equal(y, np.load(sys.argv[3])["output0"])
try:
    compiler.compile
except compiler.QmlirError as e:
    print(type(e).__name__, isinstance(e, ImportError), e)
"""
    loaded = _run([python, "-c", script, artifacts["model"], artifacts["x"], artifacts["y"]], venv)
    assert loaded.returncode == 0, loaded.stderr
    line = f"compiler.compile needs the compile extra {EVERYTHING}: {INSTALL}"
    assert loaded.stdout == f"MissingExtra True {line}\n"

    for argv, missing in [
        (["compile", str(TINY)], EVERYTHING),
        (["report", str(TINY)], EVERYTHING),
        (["quantize", "x.npy", "-o", "q.npz"], "(missing iree-base-compiler)"),
        (["recipes"], "(missing iree-base-compiler)"),
    ]:
        done = _run([qmlir, *argv], tmp_path)
        line = f"qmlir: error: qmlir {argv[0]} needs the compile extra {missing}: {INSTALL}\n"
        assert (done.returncode, done.stdout, done.stderr) == (2, "", line)
