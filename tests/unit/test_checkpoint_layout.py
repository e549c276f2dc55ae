"""transformers' conversion mapping followed for a checkpoint's names: renamings and experts
stacked (``compiler/frontend/checkpoint_layout.py``), checked against transformers' own
mapping for the MoE architectures."""

from __future__ import annotations

from compiler.frontend.checkpoint_layout import Layout, Merged


def _mixtral_names(experts: int) -> list[str]:
    names = ["model.layers.0.block_sparse_moe.gate.weight", "model.norm.weight"]
    for e in range(experts):
        names += [f"model.layers.0.block_sparse_moe.experts.{e}.w{i}.weight" for i in (1, 2, 3)]
    return names


def test_mixtral_renames_and_merges() -> None:
    layout = Layout("mixtral", _mixtral_names(2))
    assert layout.find("model.layers.0.mlp.gate.weight") == (
        "model.layers.0.block_sparse_moe.gate.weight"
    )
    assert layout.find("model.norm.weight") == "model.norm.weight"
    stored = "model.layers.0.block_sparse_moe.experts.{}.w{}.weight"
    assert layout.merged("model.layers.0.mlp.experts.gate_up_proj", 2) == Merged(
        ((stored.format(0, 1), stored.format(1, 1)), (stored.format(0, 3), stored.format(1, 3))),
        concat=True,
    )
    assert layout.merged("model.layers.0.mlp.experts.down_proj", 2) == Merged(
        ((stored.format(0, 2), stored.format(1, 2)),), concat=False
    )


def test_a_missing_expert_or_an_unknown_architecture_merges_nothing() -> None:
    names = _mixtral_names(2)
    names.remove("model.layers.0.block_sparse_moe.experts.1.w3.weight")
    assert Layout("mixtral", names).merged("model.layers.0.mlp.experts.gate_up_proj", 2) is None
    assert Layout("mixtral", names).merged("model.layers.0.mlp.experts.gate_up_proj", 3) is None
    plain = Layout("llama", ["model.norm.weight"])
    assert plain.find("model.norm.weight") == "model.norm.weight"
    assert plain.merged("model.layers.0.mlp.experts.gate_up_proj", 2) is None
    assert Layout("no-such-model-type", ["a"]).find("a") == "a"


def test_qwen_moe_names_merge_gate_before_up() -> None:
    names = [
        f"model.layers.1.mlp.experts.{e}.{p}_proj.weight"
        for e in range(3)
        for p in ("gate", "up", "down")
    ]
    merged = Layout("qwen3_moe", names).merged("model.layers.1.mlp.experts.gate_up_proj", 3)
    assert merged is not None and merged.concat
    assert [n.split(".")[-2] for n in merged.parts[0]] == ["gate_proj"] * 3
    assert [n.split(".")[-2] for n in merged.parts[1]] == ["up_proj"] * 3
