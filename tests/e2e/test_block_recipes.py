"""The block-scaled recipes (fp8-block, mxfp8, mxfp4, nvfp4) on models: accuracy, GEMM, artifact."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import compiler
from compiler.analysis.metrics import compare
from samples import mlp, transformer_block
from tests.e2e import emulation_blocks
from tests.e2e.models import tiny

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

BLOCK_RECIPES = ["fp8-block", "mxfp8", "mxfp4", "nvfp4"]
SQNR_TARGET = {"fp8-block": 30.0, "mxfp8": 30.0, "mxfp4": 20.0, "nvfp4": 20.0}
SIZE_TARGET = {"fp8-block": 0.30, "mxfp8": 0.30, "mxfp4": 0.17, "nvfp4": 0.17}


@pytest.fixture(scope="module")
def none_sizes() -> dict[str, int]:
    return {
        "mlp": len(compiler.compile(*mlp.build(), recipe="none").vmfb),
        "block": len(compiler.compile(*transformer_block.build(), recipe="none").vmfb),
    }


@pytest.mark.parametrize("recipe", BLOCK_RECIPES)
@pytest.mark.parametrize(
    ("name", "build"), [("mlp", mlp.build), ("block", transformer_block.build)]
)
def test_sample_accuracy_and_size(recipe, name, build, none_sizes) -> None:  # type: ignore[no-untyped-def]
    model, inputs = build()
    art = compiler.compile(model, inputs, recipe=recipe)
    with torch.no_grad():
        ref = model(*inputs).numpy()
    metrics = compare(ref, art(*inputs).numpy())
    assert metrics.sqnr_db >= SQNR_TARGET[recipe], metrics
    assert len(art.vmfb) <= SIZE_TARGET[recipe] * none_sizes[name]


@pytest.mark.parametrize("recipe", BLOCK_RECIPES)
@pytest.mark.parametrize(("build", "kn"), [(tiny.single, False), (tiny.matmul_kn, True)])
def test_gemm_matches_reference_emulation(recipe: str, build, kn: bool) -> None:  # type: ignore[no-untyped-def]
    """Reference-quantized operands, f64 GEMM: the compiled model within 1e-5 relative L2."""
    model, inputs = build()
    out = compiler.compile(model, inputs, recipe=recipe)(*inputs).numpy()
    x = inputs[0].numpy()
    w = (model.w if kn else model.weight).detach().numpy()
    expected = emulation_blocks.matmul(recipe, x, w, w_is_kn=kn)
    if not kn:
        expected = expected + model.bias.detach().numpy()
    assert compare(expected, out).rel_l2_error <= 1e-5


@pytest.mark.parametrize("recipe", BLOCK_RECIPES)
def test_bf16_3d_activations(recipe: str) -> None:
    model, inputs = transformer_block.build_bf16()
    out = compiler.compile(model, inputs, recipe=recipe)(*inputs)
    assert out.dtype == torch.bfloat16
    f32_model, f32_inputs = transformer_block.build()
    with torch.no_grad():
        ref = f32_model(*f32_inputs).numpy()
    assert compare(ref, out.float().numpy()).sqnr_db >= SQNR_TARGET[recipe] - 1.0


def test_block_recipes_keep_batched_activation_matmuls_in_high_precision() -> None:
    model, inputs = transformer_block.build()
    art = compiler.compile(model, inputs, recipe="mxfp8", quantize_all_matmuls=True)
    kept = [e for e in art.metadata["layers"] if e["matmul"] != "scaled_matmul"]
    assert len(kept) == 2 and all("2-D operands" in e["note"] for e in kept)
    assert np.isfinite(art(*inputs).numpy()).all()
