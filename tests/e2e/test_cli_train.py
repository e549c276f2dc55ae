"""``qmlir compile --train`` and ``qmlir train``: a step compiled, inspected, trained over
batches, its parameters saved and loaded; one-line errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import compiler
from compiler.cli import main
from compiler.runtime.tensor_files import read_tensors, write_tensors
from tests.e2e.cli_runner import run

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

TINY = str(Path(__file__).parent / "models" / "tiny.py")


@pytest.fixture(scope="module")
def step_vmfb(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("train") / "step.vmfb"
    argv = ["compile", "--train", f"{TINY}:build_train", "--recipe", "fp8-current"]
    argv += ["-O", "fp8_format=hybrid", "--optimizer", "sgd", "--lr", "0.05", "-o", str(path)]
    assert main([*argv, "-q"]) == 0
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8, 64)).astype(np.float32)  # 4 batches
    path = tmp_path_factory.mktemp("data") / "batches.npz"
    np.savez(path, x=x, y=np.tanh(x[..., :16]).astype(np.float32))
    return path


def test_inspect_says_it_is_a_training_step(capsys, step_vmfb: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "inspect", str(step_vmfb))
    assert code == 0
    assert "training  one step per call: sgd (lr=0.05, momentum=0.0, weight_decay=0.0)" in out
    assert "4 parameters (2,608 values)" in out
    assert "net.fc2 (dgrad)" in out and "net.fc1 (wgrad)" in out and "net.fc1 (dgrad)" not in out


def test_train_prints_each_step_and_saves_parameters(  # type: ignore[no-untyped-def]
    capsys, tmp_path: Path, step_vmfb: Path, data: Path
) -> None:
    saved = tmp_path / "trained.safetensors"
    argv = ["train", str(step_vmfb), "--data", str(data), "--steps", "12"]
    code, out, _ = run(capsys, *argv, "--save-params", str(saved))
    assert code == 0
    lines = out.splitlines()
    head = "training tiny:build_train (fp8-current, sgd lr 0.05) for 12 steps on 4 batches"
    assert lines[0] == head
    steps = [line for line in lines if line.startswith("step ")]
    assert len(steps) == 12 and steps[-1].startswith("step 12/12 [########################] loss")
    losses = [float(line.split("loss ")[1].split()[0]) for line in steps]
    assert losses[-1] < losses[0]  # it learns
    assert "ms per step" in lines[-2] and lines[-1] == f"wrote {saved} (4 parameters)"
    params = load_file(str(saved))  # the safetensors package reads what qmlir wrote
    assert sorted(params) == ["net.fc1.bias", "net.fc1.weight", "net.fc2.bias", "net.fc2.weight"]
    assert params["net.fc1.weight"].shape == (32, 64)
    # starting from the saved parameters continues from there: the first loss is the last one
    # of a step that continues the same run
    step = compiler.load(step_vmfb)
    step.load_parameters(read_tensors(saved))
    continued = float(step.run_numpy(*(np.load(data)[k][12 % 4] for k in ("x", "y")))[0])
    code, out, _ = run(capsys, *argv[:-2], "--steps", "1", "--load-params", str(saved))
    assert code == 0
    assert f"loss {continued:.6g}" in out


def test_tensor_files_round_trip(tmp_path: Path) -> None:
    tensors = {"a.weight": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.float32([1.5])}
    for name in ("t.safetensors", "t.npz"):
        write_tensors(tmp_path / name, tensors)
        back = read_tensors(tmp_path / name)
        assert sorted(back) == sorted(tensors)
        assert all(np.array_equal(back[k], tensors[k]) for k in tensors)
    save_file({"w": np.ones((2, 2), np.float32)}, str(tmp_path / "theirs.safetensors"))
    assert read_tensors(tmp_path / "theirs.safetensors")["w"].tolist() == [[1, 1], [1, 1]]


def test_train_errors_are_one_line(  # type: ignore[no-untyped-def]
    capsys, tmp_path: Path, step_vmfb: Path, data: Path
) -> None:
    inference = tmp_path / "tiny.vmfb"
    assert main(["compile", f"{TINY}:build", "-o", str(inference), "-q"]) == 0
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, x=np.zeros((8, 64), np.float32), z=np.zeros((8, 16), np.float32))
    cases = [
        (["train", str(inference), "--data", str(data)], "is an inference artifact"),
        (["run", str(step_vmfb), "--random-inputs"], "is a training step: run it with qmlir"),
        (["train", str(step_vmfb), "--data", str(wrong)], "holds 'z', which is not an input"),
        (["train", str(step_vmfb), "--data", str(data), "--steps", "0"], "--steps must be"),
        (["compile", f"{TINY}:build", "--lr", "0.1"], "need --train"),
        (
            ["train", str(step_vmfb), "--data", str(data), "--save-params", "p.pt"],
            "write a .safetensors or .npz file",
        ),
    ]
    for argv, message in cases:
        code, _, err = run(capsys, *argv)
        assert code != 0, argv
        assert message in err and err.count("\n") == 1, err
