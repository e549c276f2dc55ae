"""``make gpu-check`` dry-run on the CPU: the build for llvm-cpu, the run script on local-task.

``gpu_check_run.py`` is meant for a lent GPU machine, where a bug costs scarce device time, so
the whole flow runs here on a subset (a per-tensor and a block recipe: their quantize modules,
GEMMs and transformer block; the flow, whose numerics the other tests check): every check
matches (the quantize modules also on the adversarial inputs), a corrupted expected output or
digest is reported as a mismatch, and artifacts built for another target are refused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.gpu_check_build import CHECK_SHAPE, EXTRA_CHECK_SHAPES

ROOT = Path(__file__).resolve().parents[2]
RECIPES = "fp8-current,mxfp8"  # per-tensor, block-scaled (with -rowcol); the flow, not numerics

pytestmark = [pytest.mark.slow, pytest.mark.models]


def _script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / name), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _run(build: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _script("gpu_check_run.py", "--dir", str(build), *args)


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gpu-check")
    done = _script(
        "gpu_check_build.py", "--target", "llvm-cpu", "--recipes", RECIPES, "--out", str(out)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _rows(stdout: str) -> dict[str, str]:
    """Each printed row's name → the rest of the row."""
    rows = {}
    for line in stdout.splitlines():
        name, _, rest = line.partition("  ")
        rows[name.strip()] = rest.strip()
    return rows


def test_manifest_records_target_and_subset(build: Path) -> None:
    manifest = json.loads((build / "manifest.json").read_text())
    assert manifest["target"] == "llvm-cpu"
    names = {e["name"] for e in manifest["entries"]}
    for recipe in RECIPES.split(","):
        assert {f"quantize-{recipe}", f"bench-quantize-{recipe}", f"block-{recipe}"} <= names
        assert f"gemm-{recipe}-256x384x512" in names
    assert "quantize-mxfp8-rowcol" in names
    assert not any("fp8-block" in n or "fp8-delayed" in n or n == "block-none" for n in names)
    kinds = {e["kind"] for e in manifest["entries"]}
    assert kinds == {"quantize", "bench_quantize", "gemm", "bench_gemm", "model"}


def test_dry_run_matches(build: Path) -> None:
    done = _run(build, "--device", "local-task")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipping the torch baselines" in done.stdout
    rows = _rows(done.stdout)
    manifest = json.loads((build / "manifest.json").read_text())
    checks = 0
    for entry in manifest["entries"]:
        name = entry["name"]
        if entry["kind"] == "quantize":
            for i in range(len(entry["expected"])):
                assert rows[f"{name} output {i}"] == "identical", done.stdout
                checks += 1
            kinds = [more["input"]["kind"] for more in entry["more"]]
            assert kinds == ["adversarial", "adversarial-inf"]
            for kind in kinds:  # checked by the outputs' sha256
                for i in range(len(entry["expected"])):
                    assert rows[f"{name} {kind} output {i}"] == "identical", done.stdout
                    checks += 1
        elif entry["kind"] in ("gemm", "model"):
            assert rows[name].startswith("rel L2") and rows[name].endswith("ok"), done.stdout
            checks += 1
        else:  # benchmarks: timed on the CPU, labelled as such
            assert "not a GPU figure" in rows[name], done.stdout
    assert f"gpu-check: all {checks} outputs match llvm-cpu" in done.stdout


def test_dry_run_reports_mismatch(build: Path, tmp_path: Path) -> None:
    corrupt = tmp_path / "gpu-check"
    shutil.copytree(build, corrupt)
    with np.load(corrupt / "expected.npz") as stored:
        expected = dict(stored)
    codes = expected["quantize-mxfp8-rowcol/2"].copy()  # the columnwise data (its own entry)
    codes.reshape(-1)[:3] ^= 0x11  # three code bytes
    expected["quantize-mxfp8-rowcol/2"] = codes
    expected["gemm-fp8-current-256x384x512/0"] = expected["gemm-fp8-current-256x384x512/0"] * 1.01
    np.savez_compressed(corrupt / "expected.npz", **expected)
    manifest = json.loads((corrupt / "manifest.json").read_text())
    (current,) = [e for e in manifest["entries"] if e["name"] == "quantize-fp8-current"]
    current["more"][1]["sha256"][0] = "0" * 64  # the adversarial-inf codes' digest
    (corrupt / "manifest.json").write_text(json.dumps(manifest))
    done = _run(corrupt, "--device", "local-task")
    assert done.returncode != 0
    rows = _rows(done.stdout)
    assert rows["quantize-mxfp8-rowcol output 2"].startswith("DIFFERS (3 of "), done.stdout
    assert rows["quantize-mxfp8-rowcol output 3"] == "identical"
    assert "FAIL" in rows["gemm-fp8-current-256x384x512"], done.stdout
    assert rows["block-mxfp8"].endswith("ok")
    assert rows["quantize-fp8-current adversarial-inf output 0"] == "DIFFERS (sha256)"
    assert rows["quantize-fp8-current adversarial-inf output 1"] == "identical"
    assert "3 of " in done.stderr and "check(s) failed" in done.stderr
    assert "match llvm-cpu" not in done.stdout


def test_refuses_other_target(build: Path) -> None:
    done = _run(build, "--device", "cuda")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "llvm-cpu artifacts" in lines[0] and "local-task" in lines[0]
    assert done.stdout == ""


def test_extra_quantize_shapes_are_checked(tmp_path: Path) -> None:
    """fp8-rowwise's kernel takes other paths by row length (held in registers up to 8192
    columns, float4 loads or single floats; read twice beyond): each of its extra shapes gets a
    quantize check of its own, with adversarial inputs of that shape, and no benchmark."""
    done = _script(
        "gpu_check_build.py",
        *("--target", "llvm-cpu", "--recipes", "fp8-rowwise", "--parts", "quantize"),
        *("--out", str(tmp_path)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    entries = json.loads((tmp_path / "manifest.json").read_text())["entries"]
    shapes = [tuple(e["input"]["shape"]) for e in entries if e["kind"] == "quantize"]
    assert shapes == [CHECK_SHAPE, *EXTRA_CHECK_SHAPES["fp8-rowwise"]]
    assert any(cols > 8192 for _, cols in shapes) and any(cols % 4 for _, cols in shapes)
    for entry in (e for e in entries if e["kind"] == "quantize"):
        assert [m["input"]["shape"] for m in entry["more"]] == [entry["input"]["shape"]] * 2
    assert [e["name"] for e in entries if e["kind"] == "bench_quantize"] == [
        "bench-quantize-fp8-rowwise"
    ]
    done = _run(tmp_path, "--device", "local-task", "--only", "quantize-fp8-rowwise")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(done.stdout)
    for rows_, cols in EXTRA_CHECK_SHAPES["fp8-rowwise"]:
        for i in range(2):
            assert rows[f"quantize-fp8-rowwise-{rows_}x{cols} output {i}"] == "identical"
            assert (
                rows[f"quantize-fp8-rowwise-{rows_}x{cols} adversarial output {i}"] == "identical"
            )
