"""``--cpu``: the artifact records the CPU it is compiled for, ``inspect`` shows it, and a host
without one of its features gets a one-line error instead of SIGILL (the host's features are
faked here: ``/proc/cpuinfo`` of a machine with SSE2 only)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import compiler
from compiler.cli import main
from passes.base import cpu_features
from passes.base.errors import QmlirError

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(cpu_features.host_arch() != "x86_64", reason="x86-64 CPU names"),
]

TINY = str(Path(__file__).parent / "models" / "tiny.py")
SSE2_ONLY = {"fpu", "sse", "sse2"}


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for cpu in ("host", "generic"):
        path = out[cpu] = tmp_path_factory.mktemp("cpu") / f"{cpu}.vmfb"
        assert main(["compile", f"{TINY}:build", "--cpu", cpu, "-o", str(path), "-q"]) == 0
    return out


def test_metadata_records_the_resolved_cpu(artifacts: dict[str, Path]) -> None:
    host = compiler.load(artifacts["host"]).metadata["cpu"]
    assert host["requested"] == "host" and host["arch"] == "x86_64"
    assert host["name"] not in ("", "host", "generic")  # LLVM's name for this host's CPU
    assert {"sse2", "avx2"} <= set(host["features"])  # every host here has AVX2
    generic = compiler.load(artifacts["generic"]).metadata["cpu"]
    assert generic == {"requested": "generic", "name": "generic", "arch": "x86_64", "features": []}


def test_refused_on_a_host_without_its_features(
    artifacts: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cpu_features, "host_flags", lambda: SSE2_ONLY)
    module = compiler.load(artifacts["host"])  # loads its metadata, not its code
    with pytest.raises(QmlirError, match=r"this host's CPU lacks .*avx2.*which the artifact needs"):
        module.run_numpy(np.zeros((8, 64), np.float32))
    assert main(["run", str(artifacts["host"]), "--random-inputs"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("qmlir: error: this host's CPU lacks") and err.count("\n") == 1


def test_generic_runs_anywhere_and_matches_host(
    artifacts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    on_host = compiler.load(artifacts["host"]).run_numpy(x)[0]
    monkeypatch.setattr(cpu_features, "host_flags", lambda: SSE2_ONLY)
    generic = compiler.load(artifacts["generic"]).run_numpy(x)[0]
    # the quantize core is exact on both; the f32 GEMM contracts with FMA on the host only
    np.testing.assert_allclose(generic, on_host, rtol=1e-5, atol=1e-6)


def test_inspect_shows_the_cpu_and_whether_it_runs_here(
    artifacts: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(artifacts["host"])]) == 0
    lines = capsys.readouterr().out.splitlines()
    cpu_line = next(i for i, line in enumerate(lines) if line.startswith("cpu "))
    assert lines[cpu_line].endswith("(x86_64, from --cpu host)")
    assert (
        "avx2" in lines[cpu_line + 1].split() and lines[cpu_line + 2].strip() == "runs on this host"
    )
    monkeypatch.setattr(cpu_features, "host_flags", lambda: SSE2_ONLY)
    assert main(["inspect", str(artifacts["host"])]) == 0
    out = capsys.readouterr().out
    assert "NOT on this host: this host's CPU lacks" in out


def _barriers(ir_dir: Path) -> int:
    """The compute barriers in the IR qmlir hands to IREE (``04-lower.mlir``)."""
    from iree.compiler import ir

    found = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal found
        found += op.name == "iree_tensor_ext.compute_barrier.start"
        return ir.WalkResult.ADVANCE

    with ir.Context():
        ir.Module.parse((ir_dir / "04-lower.mlir").read_text()).operation.walk(visit)
    return found


def test_gemm_operands_are_separated_on_avx512_targets_only(tmp_path: Path) -> None:
    """``separate-gemm-operands`` runs for an AVX-512 target (it made MiniLM 14% faster there)
    and not for AVX2 code (where it cost 4-9%): one barrier per high-precision weight GEMM."""
    from tests.e2e.models.tiny import build

    model, inputs = build()
    for cpu, barriers in (("skylake-avx512", 2), ("x86-64-v3", 0), ("generic", 0)):
        compiler.compile(model, inputs, "none", cpu=cpu, dump_ir=tmp_path / cpu)
        assert _barriers(tmp_path / cpu) == barriers, cpu
    # weights held outside the module are weights too (globals by then: externalize-weights)
    folder = tmp_path / "external"
    compiler.compile(
        model, inputs, "none", cpu="skylake-avx512", weights="external", dump_ir=folder
    )
    assert _barriers(folder) == 2
