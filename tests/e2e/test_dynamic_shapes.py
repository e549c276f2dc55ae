"""Dynamic shapes, as far as they go today: dims marked dynamic (torch.export's dynamic_shapes,
``--dynamic``, a build function's third value) compile to one artifact that runs at any size in
range and refuses others in one line; inspect names the dims; fp8-current and fp8-delayed
quantize activations with dynamic rows, bit-identical to a static compile at each size (outputs
and fp8-delayed's state); a quantizing recipe that can quantize none of the matmuls (the block
recipes do not quantize dynamic activations yet) is an error unless ``--allow-unquantized``, and
the compile summary says what was kept and why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.dynamic_dims import dim_names, parse_dynamic_flags
from passes.base.errors import QmlirError
from tests.e2e.cli_runner import run as _cli
from tests.e2e.models import tiny
from tests.reference import fp8_delayed as fp8_delayed_reference

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

TINY = str(Path(__file__).parent / "models" / "tiny.py")


@pytest.fixture(scope="module")
def dynamic_tiny() -> compiler.CompiledModule:
    model, (x,) = tiny.build()
    batch = torch.export.Dim("batch", min=1, max=40)
    return compiler.compile(model, (x,), "none", dynamic_shapes={"x": {0: batch}})


def test_one_artifact_runs_every_size_in_range(dynamic_tiny) -> None:  # type: ignore[no-untyped-def]
    model = tiny.build()[0]
    (spec,) = dynamic_tiny.signature["inputs"]
    assert spec["shape"] == [None, 64]
    assert spec["dims"] == [{"name": "batch", "min": 1, "max": 40, "example": 8}, None]
    assert dynamic_tiny.signature["outputs"][0]["dims"] == [{"name": "batch"}, None]
    rng = np.random.default_rng(1)
    for rows in (1, 7, 40):
        x = rng.standard_normal((rows, 64), dtype=np.float32)
        y = dynamic_tiny(x)
        assert y.shape == (rows, 16)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    for rows in (0, 41):
        with pytest.raises(
            QmlirError, match=rf"input 0 \(x\) dim 0 \(batch\) is {rows}, .* 1\.\.40"
        ):
            dynamic_tiny(np.zeros((rows, 64), np.float32))
    with pytest.raises(QmlirError, match=r"expects \[batch\(1\.\.40\), 64\]"):
        dynamic_tiny(np.zeros((4, 63), np.float32))


def test_shared_dims_and_cli(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "tagger.vmfb"
    mx = ("--recipe", "mxfp8")
    code, _, err = _cli(capsys, "compile", f"{TINY}:tagger_dynamic", *mx, "-o", str(path))
    assert code == 1 and err.count("\n") == 1
    assert "recipe 'mxfp8' quantized none of the model's 1 matmuls" in err
    assert "dynamic or unknown shape" in err and "--allow-unquantized" in err and not path.exists()
    code, out, _ = _cli(
        capsys, "compile", f"{TINY}:tagger_dynamic", *mx, "--allow-unquantized", "-o", str(path)
    )
    assert code == 0 and "0/1 matmuls quantized" in out
    assert "kept in high precision: 1 x dynamic or unknown shape" in out
    code, out, _ = _cli(capsys, "inspect", str(path))
    assert (
        "main(input_ids: si64[batch(1..16), seq(2..64)] in 0..49, "
        "attention_mask: si64[batch(1..16), seq(2..64)]) -> (f32[batch, seq, 8])"
    ) in out
    art = compiler.load(path)
    model = tiny.tagger()[0]
    for batch, seq in ((1, 2), (3, 17), (16, 64)):
        ids = np.arange(batch * seq).reshape(batch, seq) % 50
        mask = np.ones((batch, seq), np.int64)
        with torch.no_grad():
            want = model(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
        np.testing.assert_allclose(art(ids, mask), want, rtol=1e-5, atol=1e-5)
    ids = np.zeros((2, 5), np.int64)
    with pytest.raises(QmlirError, match=r"input 1 \(attention_mask\) dim 0 \(batch\) is 3, but "):
        art(ids, np.ones((3, 5), np.int64))


def test_dynamic_flag(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "tiny.vmfb"
    code, _, err = _cli(
        capsys, "compile", f"{TINY}:build", "--recipe", "none", "--dynamic", "x:0=rows:2..9",
        "-o", str(path), "-q",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = _cli(capsys, "run", str(path), "--random-inputs", "--shape", "x=9x64")
    assert code == 0 and "output 0: shape [9, 16]" in out
    code, _, err = _cli(capsys, "run", str(path), "--random-inputs", "--shape", "x=10x64")
    assert code == 1 and "input 0 (x) dim 0 (rows) is 10, the module takes 2..9" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["x0=batch"], "is not INPUT:DIM=NAME[:MIN..MAX]"),
        (["y:0=batch"], "the model has no input 'y' (inputs: x, mask)"),
        (["x:2=batch"], "input 'x' has 2 dims"),
        (["x:0=batch:9..2"], "range 9..2 is empty"),
        (["x:0=batch:1-4"], "range '1-4' is not MIN..MAX"),
        (["x:0=b:1..4", "mask:0=b:1..5"], "dim 'b' was given another range"),
    ],
)
def test_dynamic_flag_errors(flags: list[str], message: str) -> None:
    with pytest.raises(QmlirError) as error:
        parse_dynamic_flags(flags, ["x", "mask"], [2, 2])
    assert message in str(error.value)


def test_dynamic_flags_share_dims_by_name() -> None:
    spec = parse_dynamic_flags(["x:0=b:1..8", "mask:0=b:1..8", "x:1=s"], ["x", "mask"], [2, 2])
    assert spec["x"][0] is spec["mask"][0]
    assert dim_names(spec, ["x", "mask"]) == {"x": {0: "b", 1: "s"}, "mask": {0: "b"}}


def test_decoder_with_dynamic_batch_and_sequence() -> None:
    """The Llama-style decoder (causal mask, rotary positions, GQA) at three sizes."""
    from samples import decoder_lm

    model, (ids,) = decoder_lm.build_small()
    batch = torch.export.Dim("batch", min=1, max=32)
    seq = torch.export.Dim("seq", min=2, max=16)
    art = compiler.compile(model, (ids,), "none", dynamic_shapes={"input_ids": {0: batch, 1: seq}})
    rng = np.random.default_rng(2)
    for rows, length in ((1, 5), (7, 16), (32, 9)):
        tokens = rng.integers(0, 4096, (rows, length))
        with torch.no_grad():
            want = model(torch.from_numpy(tokens)).numpy()
        got = art(tokens)
        assert got.shape == (rows, 4096)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


@pytest.mark.parametrize("recipe", ["fp8-current", "fp8-delayed"])
def test_per_tensor_fp8_dynamic_rows_bit_identical(recipe: str) -> None:
    """One artifact with a dynamic batch quantizes every matmul and gives, at each size, the bits
    of a static compile at that size; fp8-delayed's state too (the static artifact starts from
    the dynamic one's state), and fc1's step is the reference's (tests/reference)."""
    model, (example,) = tiny.build()
    batch = torch.export.Dim("batch", min=1, max=40)
    art = compiler.compile(model, (example,), recipe, dynamic_shapes={"x": {0: batch}})
    assert [layer["recipe"] for layer in art.metadata["layers"]] == [recipe, recipe]
    rng = np.random.default_rng(7)
    for rows in (1, 7, 40):
        x = rng.standard_normal((rows, 64), dtype=np.float32) * rows
        static = compiler.compile(model, (torch.from_numpy(x),), recipe)
        before = art.scaling_state()
        if before:
            static.load_scaling_state(before)
        np.testing.assert_array_equal(_bits(art(x)), _bits(static(x)))
        after, want = art.scaling_state(), static.scaling_state()
        assert sorted(after) == sorted(want) == (["fc1", "fc2"] if before else [])
        for key in after:
            for kind in ("amax_history", "scale"):
                np.testing.assert_array_equal(_bits(after[key][kind]), _bits(want[key][kind]))
        if before:
            fc1 = before["fc1"]
            ref = fp8_delayed_reference.step(
                fp8_delayed_reference.DelayedState(fc1["amax_history"], np.float32(fc1["scale"])),
                float(np.abs(x).max()),
            )
            np.testing.assert_array_equal(
                _bits(after["fc1"]["amax_history"]), _bits(ref.amax_history)
            )
            assert _bits(np.float32(after["fc1"]["scale"])) == _bits(np.float32(ref.scale))


def test_tagger_fp8_current_dynamic_batch_and_seq(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A 3-D activation [batch, seq, 32] with both dims dynamic, flattened to [?, 32]: quantized
    by default (fp8-current), bit-identical to a static compile at that size."""
    path = tmp_path / "tagger.vmfb"
    code, out, err = _cli(capsys, "compile", f"{TINY}:tagger_dynamic", "-o", str(path))
    assert code == 0 and "1/1 matmuls quantized" in out, err
    art = compiler.load(path)
    model, _ = tiny.tagger()
    for batch, seq in ((1, 2), (3, 17)):
        ids = np.arange(batch * seq).reshape(batch, seq) % 50
        mask = (np.arange(batch * seq).reshape(batch, seq) % 5 != 0).astype(np.int64)
        static = compiler.compile(model, (torch.from_numpy(ids), torch.from_numpy(mask)))
        np.testing.assert_array_equal(_bits(art(ids, mask)), _bits(static(ids, mask)))
