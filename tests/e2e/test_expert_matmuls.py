"""Batched expert weights (``bmm`` with ``[E, K, N]`` weights): every expert quantized as its own
2-D matmul, named ``<layer>.expert<i>`` (``passes/ir/expert_matmuls.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from iree.compiler import ir

import compiler
from compiler.analysis.layer_accuracy import build_report
from compiler.analysis.metrics import compare
from compiler.frontend.export import export_model
from compiler.frontend.importer import import_program
from compiler.frontend.model_source import ModelSource
from compiler.pipeline.describe import layer_map
from passes.quantize_matmuls import QuantizeMatmuls
from passes.recipes import get_recipe
from tests.e2e import emulation, emulation_blocks
from tests.e2e.models import moe

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

EXPERT_NAMES = [f"moe.expert{i}" for i in range(moe.EXPERTS)]


def _expected(recipe: str, x: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
    """Expert by expert, each a 2-D ``x_i @ w_i`` through the recipe (f64 reference GEMM)."""
    if recipe == "fp8-current":
        return [
            emulation.scaled_matmul(a, b, b_transposed=False) for a, b in zip(x, w, strict=True)
        ]
    return [emulation_blocks.matmul(recipe, a, b, w_is_kn=True) for a, b in zip(x, w, strict=True)]


@pytest.mark.parametrize("recipe", ["fp8-current", "fp8-block", "mxfp8", "mxfp4", "nvfp4"])
def test_each_expert_is_quantized_as_its_own_matmul(recipe: str) -> None:
    """Expert inputs 10^i apart, each judged on its own: one amax (or nvfp4 global scale) over
    all experts would change the small experts' codes."""
    model, inputs = moe.expert_gemm()
    art = compiler.compile(model, inputs, recipe=recipe)
    layers = art.metadata["layers"]
    assert [e["layer"] for e in layers] == EXPERT_NAMES
    assert all(e["matmul"] == "scaled_matmul" and e["recipe"] == recipe for e in layers)
    expected = _expected(recipe, inputs[0].numpy(), model.moe.w.detach().numpy())
    out = art(*inputs).numpy()
    for i, reference in enumerate(expected):
        assert compare(reference, out[i]).rel_l2_error <= 1e-5, EXPERT_NAMES[i]


def test_batched_experts_equal_separate_matmuls_and_shrink_nvfp4() -> None:
    """The MoE model (a Linear, two batched expert matmuls) bit for bit as the same model written
    with one 2-D weight per expert; its nvfp4 artifact far below ``none``."""
    model, inputs = moe.batched()
    art = compiler.compile(model, inputs, recipe="nvfp4")
    layers = art.metadata["layers"]
    assert [e["layer"] for e in layers] == ["proj", *EXPERT_NAMES, *EXPERT_NAMES]
    assert all(e["matmul"] == "scaled_matmul" and e["recipe"] == "nvfp4" for e in layers)
    separate, same_inputs = moe.separate()
    reference = compiler.compile(separate, same_inputs, recipe="nvfp4")
    np.testing.assert_array_equal(art(*inputs).numpy(), reference(*same_inputs).numpy())
    none = compiler.compile(model, inputs, recipe="none")
    assert len(art.vmfb) < 0.5 * len(none.vmfb)


def _decisions(**options: object) -> list[tuple[str, str, str]]:
    """(layer, matmul, recipe) of each matmul of the MoE model after the recipe pass alone."""
    model, inputs = moe.batched()
    text = import_program(export_model(ModelSource("moe", model, inputs)))
    with ir.Context():
        module = ir.Module.parse(text)
        QuantizeMatmuls(get_recipe("nvfp4"), **options).apply(module)  # type: ignore[arg-type]
        return [(e.layer, e.matmul, e.recipe) for e in layer_map(module)]


def test_globs_pick_experts() -> None:
    chosen = _decisions(
        exclude=("moe.expert1",), layer_recipes=(("*.expert2", get_recipe("mxfp8")),)
    )
    by_expert = {layer: (matmul, recipe) for layer, matmul, recipe in chosen}
    assert by_expert == {
        "proj": ("scaled_matmul", "nvfp4"),
        "moe.expert0": ("scaled_matmul", "nvfp4"),
        "moe.expert1": ("torch.aten.mm", "none"),
        "moe.expert2": ("scaled_matmul", "mxfp8"),
        "moe.expert3": ("scaled_matmul", "nvfp4"),
    }
    # the matmul's own layer name picks every expert: the bmm stays whole
    kept = _decisions(exclude=("moe",))
    assert kept[1:] == [("moe", "torch.aten.bmm", "none")] * 2


def test_report_lists_each_expert() -> None:
    """``qmlir report`` measures each expert as the 2-D matmul the compiler makes of it."""
    model, inputs = moe.batched()
    report = build_report(ModelSource("moe", model, inputs), get_recipe("mxfp8"))
    assert [e.layer for e in report.layers] == ["proj", *EXPERT_NAMES, *EXPERT_NAMES]
    assert all(e.quantized and e.shapes[0][0] == moe.TOKENS for e in report.layers)
