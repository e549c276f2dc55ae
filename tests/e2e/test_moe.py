"""Mixture-of-experts models (Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V3): they compile with
transformers' default experts, every expert's two GEMMs quantized as a layer of its own (named
``experts.expert<e>.gate_up_proj``/``.down_proj``), the router kept in high precision; under
``none`` the outputs are torch's (each expert over its routed tokens, ``compiler/frontend/moe.py``,
computes what transformers' routed loop does), under a recipe within its usual SQNR."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.analysis.metrics import compare
from compiler.frontend import moe
from compiler.frontend.moe import experts_as_layers, is_experts_module
from tests.e2e import checkpoints
from tests.e2e.filecheck import filecheck

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


def test_every_form_computes_what_transformers_routing_does() -> None:
    """In torch, before any compile: the routed, padded and dense forwards' logits equal
    transformers' routed loop's within f32 rounding (measured 1.2e-7: a matmul over other rows
    may sum in another order), and the patch is undone afterwards."""
    for arch in checkpoints.MOE:
        lm = checkpoints.moe(arch)
        ids = _ids(seed=3)
        with torch.no_grad():
            reference = lm(ids).logits
            for form in moe.FORMS:
                with experts_as_layers(lm, form) as patched:
                    logits = lm(ids).logits
                assert patched == len(_experts(lm)) > 0
                torch.testing.assert_close(logits, reference, rtol=0, atol=1e-6, msg=form)
        assert not any(n.endswith("expert0") for n, _ in lm.named_modules()), arch


def _mixtral_block(hidden: int = 128) -> torch.nn.Module:
    """One random Mixtral sparse-MoE block: 4 experts, top-2."""
    import transformers

    config = transformers.MixtralConfig(
        hidden_size=hidden, intermediate_size=96, num_local_experts=4, num_experts_per_tok=2
    )
    torch.manual_seed(0)
    block = transformers.models.mixtral.modeling_mixtral.MixtralSparseMoeBlock(config).eval()
    for p in block.parameters():
        torch.nn.init.normal_(p, std=0.1)
    return block


def test_each_expert_multiplies_only_its_routed_rows(tmp_path: Path) -> None:
    """The grouped GEMM: with 16 tokens (static), each expert's quantize and scaled matmul run
    over a dynamic number of rows, read back from the routing (``aten.item``), not over all 16."""
    block = _mixtral_block()
    compiler.compile(block, (torch.randn(1, 16, 128),), "fp8-current", dump_ir=tmp_path)
    filecheck(
        "CHECK: torch.aten.item\n"
        "CHECK: call @qmlir.quantize.e4m3.per_tensor.Dx128({{.*}}qmlir.layer = "
        '"experts.expert0.gate_up_proj"{{.*}}(tensor<?x128xf32>\n'
        "CHECK: call @qmlir.scaled_matmul.{{.*}}qmlir.layer = "
        '"experts.expert0.gate_up_proj"{{.*}} -> tensor<?x192xf32>\n'
        "CHECK: call @qmlir.scaled_matmul.{{.*}}qmlir.layer = "
        '"experts.expert3.down_proj"{{.*}} -> tensor<?x128xf32>\n'
        "CHECK-NOT: tensor<16x192xf32>\n",
        tmp_path / "02-recipe.mlir",
    )


@pytest.mark.parametrize(
    "recipe", ["none", "fp8-current", "fp8-delayed", "fp8-block", "fp8-rowwise", "mxfp8", "nvfp4"]
)
def test_routed_experts_quantize_as_the_dense_ones(recipe: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The routed (grouped) experts compile to what the dense, masked ones compute, and so do
    the padded ones (cuda's: a spare zero row an expert): each expert's activation scales come
    from the same rows (a different row set would move the outputs by the FP8 step, ~1e-2; they
    agree to f32 accumulation order, the GEMMs' M differing), at every token count of a dynamic
    dimension: one token leaves two of the four experts without rows; fp8-delayed's per-expert
    amax histories advance alike."""
    block = _mixtral_block()
    tokens = torch.export.Dim("tokens", min=1, max=64)
    example, dynamic = (torch.randn(1, 16, 128),), ({1: tokens},)
    routed = compiler.compile(block, example, recipe, dynamic_shapes=dynamic)
    dense = compiler.compile(block, example, recipe, dynamic_shapes=dynamic, experts="dense")
    monkeypatch.setattr(moe, "_routed_forward", moe._padded_forward)  # cuda's form, here
    padded = compiler.compile(block, example, recipe, dynamic_shapes=dynamic)
    for n in (1, 3, 16, 64):
        x = torch.randn(1, n, 128, generator=torch.Generator().manual_seed(n))
        got, want = routed(x.numpy()), dense(x.numpy())
        assert compare(want, got).rel_l2_error < 1e-6, (n, compare(want, got))
        assert compare(want, padded(x.numpy())).rel_l2_error < 1e-6, n
        with torch.no_grad():
            ref = block(x)
        ref = ref[0] if isinstance(ref, tuple) else ref
        # fp8-delayed: scales from past calls; nvfp4: one token's row measured 11.7 dB
        floor = {"none": 100.0, **MIN_SQNR, "nvfp4": 10.0}.get(recipe)
        if floor is not None:
            assert compare(ref.numpy(), got).sqnr_db > floor, (n, compare(ref.numpy(), got))


def test_padded_experts_compile_in_avx2_code(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """In AVX2 code (``--cpu x86-64-v3``, which runs on either host) IREE 3.13 failed to
    compile the padded experts' GEMMs of a dynamic number of rows with their producers fused
    into the packs ("'iree_codegen.workgroup_count_hint' op failed to resolve workgroup count
    hint"); ``separate-gemm-operands{dynamic_only}`` gives those activations a dispatch of their
    own there. The values are torch's."""
    monkeypatch.setattr(moe, "_routed_forward", moe._padded_forward)
    block = _mixtral_block()
    tokens = torch.export.Dim("tokens", min=1, max=64)
    example, dynamic = (torch.randn(1, 16, 128),), ({1: tokens},)
    padded = compiler.compile(block, example, "none", dynamic_shapes=dynamic, cpu="x86-64-v3")
    for n in (1, 16):
        x = torch.randn(1, n, 128, generator=torch.Generator().manual_seed(n))
        with torch.no_grad():
            ref = block(x)
        ref = ref[0] if isinstance(ref, tuple) else ref
        assert compare(ref.numpy(), padded(x.numpy())).sqnr_db > 100.0, n


@pytest.mark.parametrize("arch", checkpoints.MOE)
def test_moe_compiles_with_every_expert_quantized(arch: str) -> None:
    """Under the arch's recipe every expert is quantized and the router kept; DeepSeek-V3's
    group-limited routing is also compiled under ``none``, its logits torch's (Mixtral's are in
    the folder test, Qwen3-MoE's in the generator test)."""
    lm = checkpoints.moe(arch)
    ids = _ids()
    with torch.no_grad():
        ref = lm(ids).logits.numpy()

    if arch == "deepseek_v3":
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
    and stacks them while loading: a folder compiles the same way (weights outside, batch and
    sequence dynamic), its outputs torch's at several sizes: both MoE layers route as torch
    does (IREE's own topk gave the second router wrong experts with dynamic dims)."""
    lm = checkpoints.moe("mixtral")
    folder = checkpoints.save(lm, tmp_path / "mixtral")
    stored = json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"]
    assert "model.layers.0.block_sparse_moe.experts.3.w1.weight" in stored
    art = compiler.compile(folder, recipe="none")
    assert art.parameter_file is not None
    for seed, (batch, seq) in enumerate(((3, 20), (1, 5), (2, 16))):
        ids = _ids(seed=seed, batch=batch, seq=seq)
        with torch.no_grad():
            ref = lm(ids).logits[:, -1].numpy()
        got = compare(ref, _logits(art, ids))
        assert got.rel_l2_error < 1e-5, (batch, seq, got)


def test_a_deepseek_v3_folder_compiles_with_its_stored_router_bias(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """DeepSeek-V3's router adds a stored buffer (``gate.e_score_correction_bias``) to scores
    computed from a parameter: read from the checkpoint like a parameter (not left a real
    buffer beside meta parameters, which torch.export refused: "found at least two devices,
    meta and cpu"), its outputs torch's."""
    lm = checkpoints.moe("deepseek_v3")
    with torch.no_grad():
        lm.model.layers[1].mlp.gate.e_score_correction_bias.uniform_(-0.5, 0.5)
    folder = checkpoints.save(lm, tmp_path / "deepseek")
    stored = json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"]
    assert "model.layers.1.mlp.gate.e_score_correction_bias" in stored
    art = compiler.compile(folder, recipe="none", batch=2, seq=12)
    ids = _ids(seed=4, batch=2, seq=12)
    with torch.no_grad():
        ref = lm(ids).logits[:, -1].numpy()
    got = compare(ref, _logits(art, ids))
    assert got.rel_l2_error < 1e-5, got


def test_a_moe_generator_generates_torch_greedy_tokens() -> None:
    lm = checkpoints.moe("qwen3_moe")
    gen = compiler.compile_generator(lm, recipe="none", max_seq_len=32)
    ids = _ids(seed=7, batch=1, seq=6)
    out = gen.generate(ids.numpy(), 12, eos_token_id=[])
    with torch.no_grad():
        want = lm.generate(ids, max_new_tokens=12, min_new_tokens=12, do_sample=False)
    np.testing.assert_array_equal(out, want.numpy())


def test_two_topk_with_dynamic_rows_give_torch_indices() -> None:
    """IREE 3.13's topk returned wrong indices from the second of two topk ops with dynamic
    dims (values right; up to 59 ids off here): the export decomposes small ones
    (``compiler/frontend/export.py``), so both match torch."""

    class TwoTopk(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
            a, b = torch.topk(x, 2, dim=-1), torch.topk(x * 2.0 + 1.0, 3, dim=-1)
            return a.values, a.indices, b.values, b.indices

    rows = torch.export.Dim("rows", min=2, max=64)
    x = torch.randn(10, 64, generator=torch.Generator().manual_seed(0))
    art = compiler.compile(TwoTopk(), (x,), "none", dynamic_shapes=({0: rows},))
    for n in (10, 37):
        y = torch.randn(n, 64, generator=torch.Generator().manual_seed(n))
        for got, want in zip(art(y.numpy()), TwoTopk()(y), strict=True):
            np.testing.assert_array_equal(got, want.numpy())


@pytest.mark.parametrize(
    ("target", "mode", "form"),
    [
        ("llvm-cpu", "auto", "routed"),
        ("cuda", "auto", "padded"),
        ("cuda", "routed", "padded"),
        ("llvm-cpu", "dense", "dense"),
        ("cuda", "dense", "dense"),
    ],
)
def test_the_experts_mode_picks_the_form(target: str, mode: str, form: str) -> None:
    """``experts``: auto and routed are routed, on cuda padded (no zero-row tensor); the
    export then reads each expert's row count (``item``) or, dense, not; an unknown mode is
    one line."""
    from compiler.frontend.export import export_model
    from compiler.frontend.model_source import ModelSource
    from compiler.pipeline.options import CompileOptions, experts_form
    from compiler.pipeline.target import resolve_target
    from passes.base.errors import QmlirError
    from passes.recipes import get_recipe

    options = CompileOptions(
        recipe=get_recipe("fp8-current"),
        target=resolve_target(target, None, None),
        experts=mode,
    )
    assert experts_form(options) == form
    source = ModelSource("moe", _mixtral_block(), (torch.randn(1, 8, 128),))
    program = export_model(source, experts=form)
    items = [n for n in program.graph.nodes if n.target == torch.ops.aten.item.default]
    assert len(items) == (0 if form == "dense" else 4)  # one row count per expert
    with pytest.raises(QmlirError, match="unknown experts mode 'grouped'"):
        experts_form(dataclasses.replace(options, experts="grouped"))


def test_dense_experts_past_irees_constant_limit_fail_in_one_line() -> None:
    """32 dense experts with a dynamic token count: one fused dispatch of the dense form needs
    more push constants than IREE's CPU loader takes (64), so the artifact cannot load; that
    is one line (not IREE's traceback). The routed form (the default) loads and runs."""
    import transformers

    from passes.base.errors import QmlirError

    config = transformers.MixtralConfig(
        hidden_size=64, intermediate_size=32, num_local_experts=32, num_experts_per_tok=2
    )
    torch.manual_seed(0)
    block = transformers.models.mixtral.modeling_mixtral.MixtralSparseMoeBlock(config).eval()
    for p in block.parameters():
        torch.nn.init.normal_(p, std=0.1)
    tokens = torch.export.Dim("tokens", min=1, max=64)
    example, dynamic = (torch.randn(1, 16, 64),), ({1: tokens},)
    dense = compiler.compile(block, example, "none", dynamic_shapes=dynamic, experts="dense")
    x = torch.randn(1, 5, 64)
    with pytest.raises(
        QmlirError, match=r"IREE cannot load the artifact: .*constants exceeds"
    ) as e:
        dense(x.numpy())  # the module loads at its first call
    assert "\n" not in str(e.value)
    art = compiler.compile(block, example, "none", dynamic_shapes=dynamic)
    with torch.no_grad():
        want = block(x)
    want = want[0] if isinstance(want, tuple) else want
    assert compare(want.numpy(), art(x.numpy())).rel_l2_error < 1e-5
