"""A Python pass that fails with an internal error leaves its input IR and the
``python -m passes`` command that reproduces the failure (``compiler/pipeline/pass_runner.py``),
as the IREE stage does; a user's error (``QmlirError``) passes through as it is."""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from iree.compiler import ir

import compiler
from compiler.pipeline.pass_runner import run_pass
from passes import __main__ as driver  # noqa: F401 (registers every pass)
from passes.base.errors import QmlirError
from passes.base.module_pass import PASSES, parse_pass
from passes.base.target import Target
from passes.gemm_operands import GemmOperands
from passes.hold_training_state import HoldTrainingState
from passes.lower_named_ops import LowerNamedOps
from passes.quantize_matmuls import QuantizeMatmuls
from passes.recipes import get_recipe
from passes.training_gemms import TrainingGemms
from tests.e2e.models import tiny

ROOT = Path(__file__).resolve().parents[2]

# a per-tensor quantize declared without its scale operand and scale_inv result (its attributes
# decode): the llvm-cpu lowering fails inside (a bug there, or in whatever wrote it), not with a
# user's error
BROKEN = """
func.func private @qmlir.quantize.bad(tensor<4xf32>) -> tensor<4xi8>
    attributes {qmlir.op = "quantize", qmlir.format = "e4m3", qmlir.scaling = "per_tensor"}
func.func @main(%x: tensor<4xf32>) -> tensor<4xi8> {
  %0 = func.call @qmlir.quantize.bad(%x) : (tensor<4xf32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
"""


def _repro(message: str) -> tuple[Path, list[str]]:
    """The saved file and the command of a pass failure's message."""
    saved = Path(message.split(" saved to ", 1)[1].split(";", 1)[0])
    command = shlex.split(message.split("reproduce with: ", 1)[1])
    return saved, command


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    assert command[:3] == ["python", "-m", "passes"]
    return subprocess.run(
        [sys.executable, *command[1:]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent)},
        check=False,
    )


@pytest.fixture
def temp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where a failure's repro goes
    return tmp_path


def test_internal_error_saves_the_input_and_the_command_reproduces_it(temp: Path) -> None:
    failing = LowerNamedOps()
    with ir.Context():
        module = ir.Module.parse(BROKEN)
        with pytest.raises(QmlirError) as caught:
            run_pass(failing, module)
    message = str(caught.value)
    assert message.startswith("internal error in pass 'lower-named-ops': ")
    assert "\n" not in message and caught.value.__cause__ is not None
    saved, command = _repro(message)
    assert saved.parent.parent == temp and saved.parent.name.startswith("qmlir-repro-")
    assert "qmlir.quantize.bad" in saved.read_text()  # the pass's input, not what it left
    assert command[3:] == ["-p", "lower-named-ops", str(saved)]
    ran = _run(command)
    summary = message.split(": ", 1)[1].split(";", 1)[0]  # "ValueError: ..."
    assert ran.returncode != 0 and summary.split(":", 1)[0] in ran.stderr


def test_user_error_passes_through_without_a_repro(temp: Path) -> None:
    with ir.Context():
        module = ir.Module.parse(BROKEN)
        with pytest.raises(QmlirError, match="^gemm operands must be one of") as caught:
            run_pass(GemmOperands("f16"), module)
    assert "reproduce" not in str(caught.value)
    assert list(temp.glob("qmlir-repro-*")) == []


@pytest.mark.parametrize(
    "p",
    [
        LowerNamedOps(),
        LowerNamedOps(Target.for_cuda("sm_89")),
        GemmOperands("bf16"),
        TrainingGemms(("l1.weight", "l1.bias")),
        HoldTrainingState(("a", "b", "m.a"), ("a", "b")),
        QuantizeMatmuls(get_recipe("fp8-current")),
        QuantizeMatmuls(
            get_recipe("mxfp8", {"e8m0_rounding": "floor"}),
            quantize_all_matmuls=True,
            exclude=("attn.*", "lm_head"),
            layer_recipes=(("mlp.fc2", get_recipe("nvfp4")),),
        ),
        QuantizeMatmuls(get_recipe("fp8-delayed", {"margin": 2, "amax_history_len": 16})),
        *(cls() for cls in PASSES.values() if not dataclasses.fields(cls)),
    ],
    ids=lambda p: p.spec(),
)
def test_spec_reads_back_as_the_same_pass(p: object) -> None:
    assert parse_pass(p.spec()) == p  # type: ignore[attr-defined]


@pytest.mark.models
def test_a_failing_pass_in_a_compile_names_its_repro(
    monkeypatch: pytest.MonkeyPatch, temp: Path
) -> None:
    def broken(self: GemmOperands, module: ir.Module) -> None:
        raise RuntimeError("a bug in gemm-operands")

    monkeypatch.setattr(GemmOperands, "apply", broken)
    model, inputs = tiny.build()
    with pytest.raises(QmlirError) as caught:
        compiler.compile(model, inputs, "mxfp8")
    message = str(caught.value)
    assert message.startswith(
        "internal error in pass 'gemm-operands': RuntimeError: a bug in gemm-operands; "
    )
    saved, command = _repro(message)
    assert "qmlir.scaled_matmul" in saved.read_text()  # after the recipe pass, before this one
    assert command[3:5] == ["-p", "gemm-operands{dtype=bf16}"] or command[3:5] == [
        "-p",
        "gemm-operands",
    ]
    monkeypatch.undo()
    ran = _run(command)  # the real pass, on the saved input: it parses and runs
    assert ran.returncode == 0, ran.stderr
