"""Compile and run models on llvm-cpu: accuracy, artifact contents, runtime behaviour."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import compiler
from compiler.analysis.metrics import compare
from samples import mlp, transformer_block
from tests.e2e import emulation
from tests.e2e.models import tiny

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`


def reference(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> np.ndarray:
    with torch.no_grad():
        return model.float()(*[x.float() for x in inputs]).numpy()


@pytest.fixture(scope="module")
def mlp_model() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return mlp.build()


@pytest.fixture(scope="module")
def mlp_fp8(mlp_model) -> compiler.CompiledModule:  # type: ignore[no-untyped-def]
    return compiler.compile(*mlp_model, recipe="fp8-current")


@pytest.fixture(scope="module")
def mlp_none(mlp_model) -> compiler.CompiledModule:  # type: ignore[no-untyped-def]
    return compiler.compile(*mlp_model, recipe="none")


def test_mlp_fp8_sqnr_against_f32(mlp_model, mlp_fp8) -> None:  # type: ignore[no-untyped-def]
    model, inputs = mlp_model
    metrics = compare(reference(model, inputs), mlp_fp8(*inputs).numpy())
    assert metrics.sqnr_db >= 30.0, metrics
    assert metrics.cosine >= 0.999, metrics


def test_none_recipe_matches_torch(mlp_model, mlp_none) -> None:  # type: ignore[no-untyped-def]
    model, inputs = mlp_model
    metrics = compare(reference(model, inputs), mlp_none(*inputs).numpy())
    assert metrics.rel_l2_error <= 1e-5, metrics


def test_artifact_carries_fp8_weights_not_f32(mlp_model, mlp_fp8, mlp_none) -> None:  # type: ignore[no-untyped-def]
    model, _ = mlp_model
    assert len(mlp_fp8.vmfb) <= 0.30 * len(mlp_none.vmfb)
    row = model.layers[3].weight.detach()[7, :64].numpy().astype(np.float32).tobytes()
    assert row in mlp_none.vmfb  # the probe finds f32 weights where they are
    assert row not in mlp_fp8.vmfb


def test_matmul_variants_match_reference_emulation() -> None:
    """Same quantized operands (reference quantizer), f64 GEMM: within 1e-5 relative L2."""
    model, inputs = tiny.variants()
    compiled = compiler.compile(model, inputs, recipe="fp8-current")
    out = compiled(*inputs).numpy()
    x = inputs[0].numpy()
    with torch.no_grad():
        h = emulation.scaled_matmul(x, model.lin.weight.numpy(), True) + model.lin.bias.numpy()
        h = emulation.scaled_matmul(h.astype(np.float32), model.w_kn.numpy(), False)
        expected = emulation.scaled_matmul(h.astype(np.float32), model.w_add.numpy(), False)
        expected = expected + model.b_add.numpy()
    assert compare(expected, out).rel_l2_error <= 1e-5
    layers = compiled.metadata["layers"]
    assert [entry["matmul"] for entry in layers] == ["scaled_matmul"] * 3


def test_bf16_mlp(mlp_model) -> None:  # type: ignore[no-untyped-def]
    model, inputs = mlp.build_bf16()
    compiled = compiler.compile(model, inputs, recipe="fp8-current")
    out = compiled(*inputs)
    assert out.dtype == torch.bfloat16
    f32_model, f32_inputs = mlp_model
    metrics = compare(reference(f32_model, f32_inputs), out.float().numpy())
    assert metrics.sqnr_db >= 30.0, metrics


@pytest.mark.parametrize("quantize_all", [False, True])
def test_transformer_block(quantize_all: bool) -> None:
    model, inputs = transformer_block.build()
    compiled = compiler.compile(
        model, inputs, recipe="fp8-current", quantize_all_matmuls=quantize_all
    )
    metrics = compare(reference(model, inputs), compiled(*inputs).numpy())
    assert metrics.sqnr_db >= 30.0, metrics
    kinds = [entry["matmul"] for entry in compiled.metadata["layers"]]
    assert kinds.count("scaled_matmul") == (6 if quantize_all else 4)
    layers = {entry["layer"] for entry in compiled.metadata["layers"]}
    assert {"attn.qkv", "attn.proj", "mlp.fc1", "mlp.fc2"} <= layers


def test_metadata_describes_the_artifact(mlp_fp8) -> None:  # type: ignore[no-untyped-def]
    meta = mlp_fp8.metadata
    assert meta["recipe"] == {
        "name": "fp8-current",
        "options": {"fp8_format": "e4m3", "force_pow2_scales": False, "amax_epsilon": 0.0},
    }
    assert meta["qmlir_version"] == compiler.__version__
    assert meta["signature"]["inputs"] == [{"shape": [32, 1024], "dtype": "f32", "name": "x"}]
    assert meta["signature"]["outputs"] == [{"shape": [32, 1024], "dtype": "f32"}]
    assert [entry["layer"] for entry in meta["layers"]] == [f"layers.{i}" for i in range(10)]


def test_save_and_load_round_trip(tmp_path, mlp_model, mlp_fp8) -> None:  # type: ignore[no-untyped-def]
    _, inputs = mlp_model
    path = tmp_path / "mlp.vmfb"
    mlp_fp8.save(path)
    loaded = compiler.load(path)
    assert loaded.metadata == mlp_fp8.metadata
    x = inputs[0].numpy()
    np.testing.assert_array_equal(loaded(x), mlp_fp8(x))
    assert isinstance(loaded(x), np.ndarray) and isinstance(loaded(inputs[0]), torch.Tensor)


def test_nan_in_one_row_stays_in_that_row(mlp_model, mlp_fp8) -> None:  # type: ignore[no-untyped-def]
    _, inputs = mlp_model
    x = inputs[0].numpy().copy()
    x[3, 5] = np.nan  # amax ignores it; its code is NaN; the GEMM spreads it over row 3 only
    out = mlp_fp8(x)
    assert np.isnan(out[3]).all()
    assert np.isfinite(np.delete(out, 3, axis=0)).all()


def test_inf_input_gives_scale_one_and_saturates(mlp_model, mlp_fp8) -> None:  # type: ignore[no-untyped-def]
    _, inputs = mlp_model
    x = inputs[0].numpy().copy()
    x[0, 0] = np.inf  # amax = inf -> scale 1 (TE); inf saturates to 448
    out = mlp_fp8(x)
    assert out.shape == (32, 1024) and np.isfinite(out).all()


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ((), "takes 1 input"),
        ((np.zeros((32, 1000), np.float32),), "has shape"),
        ((np.zeros((32, 1024), np.float64),), "has dtype"),
    ],
)
def test_bad_inputs_are_refused(mlp_fp8, inputs, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(compiler.QmlirError, match=message):
        mlp_fp8(*inputs)


def test_per_layer_recipes_and_exclusions() -> None:
    model, inputs = transformer_block.build()
    art = compiler.compile(
        model, inputs, "fp8-current", exclude=["attn.*"], layer_recipes={"mlp.fc2": "nvfp4"}
    )
    chosen = {e["layer"]: e["recipe"] for e in art.metadata["layers"] if e["layer"] != "attn"}
    assert chosen == {
        "attn.qkv": "none",
        "attn.proj": "none",
        "mlp.fc1": "fp8-current",
        "mlp.fc2": "nvfp4",
    }
    notes = {e["layer"]: e["note"] for e in art.metadata["layers"]}
    assert notes["attn.qkv"] == "excluded by --exclude 'attn.*'"
    assert notes["mlp.fc2"] == "--layer-recipe 'mlp.fc2=nvfp4'"
    assert art.metadata["exclude"] == ["attn.*"]
    metrics = compare(reference(model, inputs), art(*inputs).numpy())
    assert metrics.sqnr_db >= 25.0, metrics


def test_weights_in_einsum_and_cat() -> None:
    """einsum is decomposed before import (its contraction a matmul the recipe pass sees), its
    weight reached through the decomposition's permutes and views is folded back into a weight
    literal (``fold-weight-views``) and quantized as a weight (and so reported), and a weight
    inside a list operand (``cat``) imports."""
    model, inputs = tiny.weights_in_lists()
    art = compiler.compile(model, inputs, "fp8-current")
    ref = reference(model, inputs)
    out = art(*inputs).numpy()
    np.testing.assert_array_equal(out[:4], ref[:4])  # the prefix rows: the weight itself
    assert compare(ref[4:], out[4:]).sqnr_db > 25
    (entry,) = art.metadata["layers"]
    assert (entry["matmul"], entry["recipe"]) == ("scaled_matmul", "fp8-current")
    # quantized as a weight, at compile time: its 32x64 FP8 codes in the artifact; the f32 left
    # is the 4x32 prefix that cat reads
    assert art.metadata["weights"] == {
        "e4m3 data": 32 * 64,
        "f32 (not quantized)": 4 * 32 * 4,
        "f32 scale_inv": 4,
    }
    # the report decides as the compile does: the layer is a weight matmul there too
    (layer,) = compiler.report(model, inputs, "fp8-current").layers
    assert (layer.layer, layer.recipe) == (entry["layer"], "fp8-current")
    assert layer.weight is not None and layer.weight.role == "weight"
