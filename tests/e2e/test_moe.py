"""Mixture-of-experts models (Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V3): they compile with
transformers' default experts, every expert's two GEMMs quantized as a layer of its own (named
``experts.expert<e>.gate_up_proj``/``.down_proj``), the router kept in high precision; under
``none`` the outputs are torch's (the dense, masked experts of ``compiler/frontend/moe.py``
compute what transformers' routed loop does), under a recipe within its usual SQNR."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import compiler
from compiler.analysis.metrics import compare
from compiler.frontend.moe import dense_experts, is_experts_module
from passes.base.errors import QmlirError
from tests.e2e import checkpoints

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

# one quantizing recipe per architecture: all four recipes covered between them
RECIPES = {
    "mixtral": "fp8-current",
    "qwen2_moe": "mxfp8",
    "qwen3_moe": "nvfp4",
    "deepseek_v3": "fp8-block",
}
MIN_SQNR = {"fp8-current": 20.0, "fp8-block": 20.0, "mxfp8": 20.0, "nvfp4": 12.0}


def _ids(seed: int = 0, batch: int = 2, seq: int = 16) -> torch.Tensor:
    return torch.randint(0, 256, (batch, seq), generator=torch.Generator().manual_seed(seed))


def _logits(art: compiler.CompiledModule, ids: torch.Tensor) -> np.ndarray:
    out = art(ids.numpy())
    return out["logits"] if isinstance(out, dict) else out


def _experts(lm: torch.nn.Module) -> list[tuple[str, int]]:
    return [(n, m.num_experts) for n, m in lm.named_modules() if is_experts_module(m)]


def test_dense_experts_compute_what_transformers_routing_does() -> None:
    """In torch, before any compile: the dense forward's logits equal the routed loop's within
    f32 rounding (measured 1.2e-7: a matmul over all rows may sum in another order than over
    the routed ones), and the patch is undone afterwards."""
    for arch in checkpoints.MOE:
        lm = checkpoints.moe(arch)
        ids = _ids(seed=3)
        with torch.no_grad():
            routed = lm(ids).logits
            with dense_experts(lm) as patched:
                dense = lm(ids).logits
        assert patched == len(_experts(lm)) > 0
        torch.testing.assert_close(dense, routed, rtol=0, atol=1e-6)
        assert not any(n.endswith("expert0") for n, _ in lm.named_modules()), arch


@pytest.mark.parametrize("arch", checkpoints.MOE)
def test_moe_compiles_with_every_expert_quantized(arch: str) -> None:
    lm = checkpoints.moe(arch)
    ids = _ids()
    with torch.no_grad():
        ref = lm(ids).logits.numpy()

    none = compiler.compile(lm, (ids,), "none")
    exact = compare(ref, _logits(none, ids))
    assert exact.rel_l2_error < 1e-5, exact

    recipe = RECIPES[arch]
    art = compiler.compile(lm, (ids,), recipe)
    got = compare(ref, _logits(art, ids))
    assert got.sqnr_db > MIN_SQNR[recipe], got
    layers = {layer.layer: layer for layer in art.record.layers}
    for path, count in _experts(lm):
        for e in range(count):
            for projection in ("gate_up_proj", "down_proj"):
                layer = layers[f"{path}.expert{e}.{projection}"]
                assert layer.recipe == recipe, layer
        router = layers[path.removesuffix(".experts") + ".gate"]
        assert router.recipe == "none" and "MoE router" in router.note, router


def test_a_moe_folder_compiles_from_its_per_expert_tensors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """transformers saves a Mixtral's experts one matrix each (``block_sparse_moe.experts.3.w1``)
    and stacks them while loading: a folder compiles the same way (weights outside, fixed
    sizes), its outputs torch's. Dynamic dims are refused with one line: IREE 3.13 computes
    wrong outputs past the first MoE layer with them (transformers' own experts too)."""
    lm = checkpoints.moe("mixtral")
    folder = checkpoints.save(lm, tmp_path / "mixtral")
    stored = json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"]
    assert "model.layers.0.block_sparse_moe.experts.3.w1.weight" in stored
    with pytest.raises(QmlirError, match="static shapes only"):
        compiler.compile(folder, recipe="none")
    art = compiler.compile(folder, recipe="none", batch=3, seq=20)
    assert art.parameter_file is not None
    ids = _ids(seed=5, batch=3, seq=20)
    with torch.no_grad():
        ref = lm(ids).logits[:, -1].numpy()
    got = compare(ref, _logits(art, ids))
    assert got.rel_l2_error < 1e-5, got
    with pytest.raises(QmlirError, match="static shapes only"):
        compiler.compile_generator(lm, recipe="none", max_seq_len=32)
