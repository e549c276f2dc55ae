"""The qmlir command line: happy paths and one-line errors, no half-written artifacts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.cli import main
from tests.e2e.cli_runner import run

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

TINY = str(Path(__file__).parent / "models" / "tiny.py")


@pytest.fixture(scope="module")
def tiny_vmfb(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("art") / "tiny.vmfb"
    assert main(["compile", f"{TINY}:build", "-o", str(path), "-q"]) == 0
    return path


def test_console_script_lists_recipes() -> None:
    qmlir = Path(sys.executable).parent / "qmlir"
    done = subprocess.run([str(qmlir), "recipes"], capture_output=True, text=True, check=True)
    assert "fp8-current:" in done.stdout and "force_pow2_scales (default False)" in done.stdout
    assert "none:" in done.stdout


def test_compile_writes_artifact(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "t.vmfb"
    code, stdout, _ = run(capsys, "compile", f"{TINY}:build", "-o", str(out))
    assert code == 0
    assert "2/2 matmuls quantized" in stdout
    assert compiler.load(out).metadata["recipe"]["name"] == "fp8-current"


def test_compile_with_options_and_dump_ir(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out, dump = tmp_path / "t.vmfb", tmp_path / "ir"
    code, _, _ = run(
        capsys,
        "compile",
        f"{TINY}:build",
        "-O",
        "force_pow2_scales=true",
        "-o",
        str(out),
        "--dump-ir",
        str(dump),
        "-q",
    )
    assert code == 0
    assert compiler.load(out).metadata["recipe"]["options"]["force_pow2_scales"] is True
    names = sorted(p.name for p in dump.iterdir())
    assert names == ["01-import.mlir", "02-recipe.mlir", "03-fold-weights.mlir", "04-lower.mlir"]
    assert 'loc("fc1")' in (dump / "01-import.mlir").read_text()


def test_run_compare_prints_table(capsys, tiny_vmfb) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(
        capsys, "run", str(tiny_vmfb), "--random-inputs", "--compare", f"{TINY}:build"
    )
    assert code == 0
    assert "SQNR (dB)" in out and "cosine similarity" in out and "relative L2 error" in out
    sqnr = float(next(line for line in out.splitlines() if line.startswith("SQNR")).split()[-1])
    assert sqnr > 25


def test_run_with_inputs_file_and_output(capsys, tmp_path, tiny_vmfb) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    np.savez(tmp_path / "x.npz", x=x)
    code, _, _ = run(
        capsys,
        "run",
        str(tiny_vmfb),
        "--inputs",
        str(tmp_path / "x.npz"),
        "-o",
        str(tmp_path / "y.npz"),
    )
    assert code == 0
    np.testing.assert_array_equal(np.load(tmp_path / "y.npz")["out0"], compiler.load(tiny_vmfb)(x))


def test_run_warns_on_nan_and_succeeds(capsys, tmp_path, tiny_vmfb) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((8, 64), np.float32)
    x[1, 1] = np.nan
    np.save(tmp_path / "x.npy", x)
    code, _, err = run(capsys, "run", str(tiny_vmfb), "--inputs", str(tmp_path / "x.npy"))
    assert code == 0
    assert "holds 1 NaN and 0 inf" in err


def test_quantize_command(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(1).standard_normal((4, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    code, _, _ = run(capsys, "quantize", str(tmp_path / "x.npy"), "-o", str(tmp_path / "q.npz"))
    assert code == 0
    saved = np.load(tmp_path / "q.npz")
    expected = compiler.quantize(x)
    np.testing.assert_array_equal(saved["data"], expected.data)
    assert saved["scale"] == expected.scale


def test_pt2_model(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.e2e.models import tiny

    model, inputs = tiny.build()
    torch.export.save(torch.export.export(model, inputs), tmp_path / "tiny.pt2")
    out = tmp_path / "pt2.vmfb"
    code, _, _ = run(capsys, "compile", str(tmp_path / "tiny.pt2"), "-o", str(out), "-q")
    assert code == 0
    with torch.no_grad():
        ref = model(*inputs).numpy()
    got = compiler.load(out)(inputs[0].numpy())
    assert 10 * np.log10((ref**2).sum() / ((ref - got) ** 2).sum()) > 25


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compile", f"{TINY}:build", "--recipe", "fp9"], "unknown recipe 'fp9'"),
        (["compile", f"{TINY}:build", "-O", "bogus=1"], "has no option 'bogus'"),
        (["compile", f"{TINY}:build", "-O", "force_pow2_scales=maybe"], "must be true or false"),
        (["compile", f"{TINY}:build", "-O", "fp8_format=e3m4"], "must be one of e4m3, hybrid"),
        (["compile", f"{TINY}:rejected"], "torch.export rejected the model"),
        (["compile", f"{TINY}:empty"], "zero-size dimension"),
        (["compile", f"{TINY}:not_a_model"], "must be a torch.nn.Module"),
        (["compile", f"{TINY}:missing"], "has no function 'missing'"),
        (["compile", "no/such/model.py"], "does not exist"),
        (
            ["compile", f"{TINY}:build", "--target", "cuda", "--cuda-arch", "sm_75"],
            "unknown CUDA architecture 'sm_75'",
        ),
        (["compile", f"{TINY}:build", "--cuda-arch", "sm_90"], "--cuda-arch needs --target cuda"),
        (["compile", f"{TINY}:build", "--target", "tpu"], "unknown target 'tpu'"),
        (["compile", f"{TINY}:build", "--cpu", "pentium9"], "unknown --cpu 'pentium9'"),
        (["compile", f"{TINY}:build", "--target", "cuda", "--cpu", "host"], "--cpu needs"),
        (
            ["compile", f"{TINY}:build", "--attention", "fused", "--quantize-all-matmuls"],
            "--attention fused keeps SDPA as one op",
        ),
    ],
)
def test_compile_errors_are_one_line_and_leave_no_file(capsys, tmp_path, argv, message) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out.vmfb"
    code, _, err = run(capsys, *argv, "-o", str(out))
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("qmlir: error: ") and message in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "does not exist"),
        ("garbage", "not a qmlir artifact, or a damaged one"),
        ("empty", "is empty"),
    ],
)
def test_run_bad_artifact(capsys, tmp_path, setup, message) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "a.vmfb"
    if setup == "garbage":
        path.write_bytes(b"\x00not a flatbuffer" * 64)
    elif setup == "empty":
        path.write_bytes(b"")
    code, _, err = run(capsys, "run", str(path), "--random-inputs")
    assert code == 1 and message in err and err.count("\n") == 1


def test_run_wrong_inputs(capsys, tmp_path, tiny_vmfb) -> None:  # type: ignore[no-untyped-def]
    np.savez(tmp_path / "two.npz", a=np.zeros((8, 64), np.float32), b=np.zeros(3, np.float32))
    np.save(tmp_path / "shape.npy", np.zeros((8, 65), np.float32))
    code, _, err = run(capsys, "run", str(tiny_vmfb), "--inputs", str(tmp_path / "two.npz"))
    assert code == 1 and "holds 'a', which is not an input of the module (x)" in err
    code, _, err = run(capsys, "run", str(tiny_vmfb), "--inputs", str(tmp_path / "shape.npy"))
    assert code == 1 and "input 0 (x) has shape [8, 65], the module expects [8, 64]" in err


def test_debug_shows_traceback(capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, "--debug", "compile", f"{TINY}:build", "--recipe", "fp9")
    assert code == 1 and "Traceback" in err and "unknown recipe" in err


def test_run_repeat_shows_delayed_scales_settling(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "d.vmfb"
    code, _, _ = run(
        capsys,
        "compile",
        f"{TINY}:build",
        "--recipe",
        "fp8-delayed",
        "-O",
        "amax_history_len=4",
        "-o",
        str(out),
        "-q",
    )
    assert code == 0
    code, stdout, _ = run(
        capsys, "run", str(out), "--random-inputs", "--repeat", "3", "--compare", f"{TINY}:build"
    )
    assert code == 0
    table = stdout.split("scales each call used:")[1].splitlines()
    assert table[1].split() == ["call", "scale", "fc1", "scale", "fc2", "SQNR", "(dB)"]
    first, second, third = (line.split() for line in table[3:6])
    assert first[1:3] == ["1", "1"]  # the initial scales
    assert second[1] != "1" and second[1:3] == third[1:3]  # settled after one call
    assert "scaling state: 2 of 2 healthy" in stdout


def test_quantize_command_block_recipes(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(2).standard_normal((6, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "q.npz"
    code, stdout, _ = run(
        capsys,
        "quantize",
        str(tmp_path / "x.npy"),
        "--recipe",
        "nvfp4",
        "--swizzle",
        "-o",
        str(out),
    )
    assert code == 0 and "data [6, 32] uint8" in stdout
    saved = np.load(out)
    expected = compiler.quantize(x, "nvfp4", swizzle=True)
    np.testing.assert_array_equal(saved["data"], expected.data)
    np.testing.assert_array_equal(saved["scale"], expected.scale)
    assert saved["global_scale"] == expected.global_scale
    code, _, _ = run(
        capsys,
        "quantize",
        str(tmp_path / "x.npy"),
        "--recipe",
        "mxfp8",
        "--usage",
        "columnwise",
        "-O",
        "e8m0_rounding=floor",
        "-o",
        str(out),
    )
    assert code == 0
    np.testing.assert_array_equal(
        np.load(out)["scale"],
        compiler.quantize(x, "mxfp8", usage="columnwise", e8m0_rounding="floor").scale,
    )


def test_inspect_shows_recipe_layers_and_weight_bytes(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "m.vmfb"
    assert main(["compile", f"{TINY}:build", "--recipe", "mxfp8", "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    code, stdout, _ = run(capsys, "inspect", str(out))
    assert code == 0
    assert "recipe    mxfp8 (e8m0_rounding=ceil, fp8_format=e4m3)" in stdout
    assert "main(x: f32[8, 64]) -> (f32[8, 16])" in stdout
    assert "(verified)" in stdout
    lines = stdout.splitlines()
    assert any(line.split()[:2] == ["fc1", "mxfp8"] for line in lines)
    # fc1 is 32x64 and fc2 16x32 E4M3 codes: 2560 bytes; their E8M0 scales in 128x4 tiles
    assert any(line.split() == ["e4m3", "data", "2.6", "kB"] for line in lines)
    assert any(line.startswith("e8m0 block scales") for line in lines)


def test_progress_on_a_terminal_only(capsys, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "p.vmfb"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, _, err = run(capsys, "compile", f"{TINY}:build", "-o", str(out))
    assert code == 0
    stages = [line.split()[0] for line in err.splitlines()]
    assert stages == ["load", "export", "import", "recipe", "fold", "lower", "iree", "save"]
    code, _, err = run(capsys, "compile", f"{TINY}:build", "-o", str(out), "-q")
    assert code == 0 and err == ""


def test_explain_and_layer_flags(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "x.vmfb"
    code, stdout, _ = run(
        capsys,
        "compile",
        f"{TINY}:build",
        "--exclude",
        "fc1",
        "--layer-recipe",
        "fc*=mxfp8",
        "--explain",
        "-o",
        str(out),
    )
    assert code == 0
    rows = [line.split(None, 2) for line in stdout.splitlines()[2:4]]
    assert rows == [
        ["fc1", "none", "excluded by --exclude 'fc1'"],
        ["fc2", "mxfp8", "--layer-recipe 'fc*=mxfp8'"],
    ]
    code, _, err = run(capsys, "compile", f"{TINY}:build", "--layer-recipe", "fc1", "-o", str(out))
    assert code == 1 and "is not GLOB=RECIPE" in err
    code, _, err = run(
        capsys, "compile", f"{TINY}:build", "--layer-recipe", "fc1=fp9", "-o", str(out)
    )
    assert code == 1 and "unknown recipe 'fp9'" in err


def test_run_compare_on_the_models_own_integer_inputs(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "e.vmfb"
    code, _, _ = run(capsys, "compile", f"{TINY}:embedding", "-o", str(out), "-q")
    assert code == 0
    # token ids get random ids within the embedding's rows (issue 30: the docs' example)
    code, stdout, _ = run(
        capsys, "run", str(out), "--random-inputs", "--compare", f"{TINY}:embedding"
    )
    assert code == 0 and "cosine similarity" in stdout
    code, stdout, _ = run(capsys, "run", str(out), "--compare", f"{TINY}:embedding")
    assert code == 0 and "cosine similarity" in stdout
