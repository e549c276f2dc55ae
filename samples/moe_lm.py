"""Small mixture-of-experts causal LMs (transformers' Mixtral, Qwen2-MoE, Qwen3-MoE and
DeepSeek-V3 with random, seeded weights) returning logits: 4 or 8 routed experts, top-2;
Qwen2-MoE and DeepSeek-V3 with a shared expert, DeepSeek-V3 with group-limited routing and its
first layer dense. qmlir compiles every expert's GEMMs (``compiler/frontend/moe.py``).

    qmlir compile samples/moe_lm.py:build --recipe fp8-block -o moe.vmfb --random-inputs \
        --shape input_ids=2x16
"""

from __future__ import annotations

import torch

ARCHITECTURES = ("mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v3")
_COMMON = {
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_experts_per_tok": 2,
    "max_position_embeddings": 64,
    "use_cache": False,
}
_CONFIGS = {
    "mixtral": ("MixtralConfig", "MixtralForCausalLM", {"num_local_experts": 4}),
    "qwen2_moe": (
        "Qwen2MoeConfig",
        "Qwen2MoeForCausalLM",
        {"num_experts": 4, "moe_intermediate_size": 64, "shared_expert_intermediate_size": 128},
    ),
    "qwen3_moe": (
        "Qwen3MoeConfig",
        "Qwen3MoeForCausalLM",
        {"num_experts": 4, "moe_intermediate_size": 64, "head_dim": 16},
    ),
    "deepseek_v3": (
        "DeepseekV3Config",
        "DeepseekV3ForCausalLM",
        {
            "num_key_value_heads": 4,
            "n_routed_experts": 8,
            "n_shared_experts": 1,
            "moe_intermediate_size": 32,
            "first_k_dense_replace": 1,
            "n_group": 2,
            "topk_group": 1,
            "q_lora_rank": 32,
            "kv_lora_rank": 16,
            "qk_rope_head_dim": 8,
            "qk_nope_head_dim": 8,
            "v_head_dim": 16,
        },
    ),
}


def make(arch: str = "mixtral", seed: int = 0) -> torch.nn.Module:
    """The ``arch`` model (one of :data:`ARCHITECTURES`), in eval mode."""
    import transformers

    if arch not in _CONFIGS:
        raise ValueError(f"unknown MoE architecture {arch!r} (known: {', '.join(ARCHITECTURES)})")
    config_name, model_name, extra = _CONFIGS[arch]
    config = getattr(transformers, config_name)(**{**_COMMON, **extra})
    torch.manual_seed(seed)
    return getattr(transformers, model_name)(config).eval()


def build(
    arch: str = "mixtral", batch: int = 2, seq: int = 16
) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """The ``arch`` model and seeded token ids ``[batch, seq]`` to compile it with."""
    ids = torch.randint(
        0, _COMMON["vocab_size"], (batch, seq), generator=torch.Generator().manual_seed(1)
    )
    return make(arch), (ids,)
