"""The :class:`Target` every stage takes: pure data (no IREE, no torch), refusing an impossible
pairing on construction; its flags and the pass option text that names it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from passes.base.errors import QmlirError
from passes.base.target import Cpu, Target

ROOT = Path(__file__).resolve().parents[2]
ZEN = Cpu("znver4", "znver4", "x86_64", ("avx2", "avx512f"))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Target("tpu"), r"^unknown target 'tpu' \(known targets: llvm-cpu, cuda\)$"),
        (lambda: Target("cuda"), "^unknown CUDA architecture ''"),
        (lambda: Target.for_cuda("sm_75"), "^unknown CUDA architecture 'sm_75'"),
        (lambda: Target(cuda_arch="sm_90"), "^--cuda-arch needs --target cuda$"),
        (lambda: Target("cuda", ZEN, "sm_90"), "^--cpu needs --target llvm-cpu$"),
    ],
)
def test_impossible_targets_are_refused(make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QmlirError, match=message):
        make()


def test_target_reads_as_data() -> None:
    zen = Target(cpu=ZEN)
    assert zen.cpu_name == "znver4" and zen.features == ("avx2", "avx512f") and not zen.is_cuda
    assert Target().cpu_name == "host" and Target().features == ()
    assert Target.for_cuda("sm_100").is_cuda and Target.for_cuda("sm_100").features == ()
    assert Cpu.from_json(ZEN.to_json()) == ZEN
    assert ZEN.to_json() == {
        "requested": "znver4",
        "name": "znver4",
        "arch": "x86_64",
        "features": ["avx2", "avx512f"],
    }


def test_the_target_module_loads_no_compiler() -> None:
    """The runtime reads a Target back from an artifact: it must not pull in IREE's compiler."""
    code = (
        "import sys, passes.base.target; "
        "assert not {'iree.compiler', 'torch'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
