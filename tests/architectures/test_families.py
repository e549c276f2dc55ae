"""The architecture sweep (issue 30, item 6): one small random config per transformers family a
user brings, compiled under fp8-current as a user would (`compiler.compile`, default settings)
and compared with torch in f32. A regression in any family shows here.

`make test-architectures` runs every family (25 compiles, about 85 s on 2 cores). `make test`
runs the families no other test builds; those its other tests already build (Llama, Qwen2/3,
Mistral, Phi-3, Gemma 2/3 and GPT-NeoX generators, BERT, RoBERTa, a GPT-2 training step, the
MoE families) are marked ``architectures`` and left to the sweep, for the suite's time bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import compiler

pytestmark = pytest.mark.models

VOCAB = 128
TEXT = {"vocab_size": VOCAB, "hidden_size": 64, "num_hidden_layers": 2, "intermediate_size": 128}
HEADS = {"num_attention_heads": 4, "num_key_value_heads": 2}


@dataclasses.dataclass(frozen=True)
class Family:
    config: str  # the transformers config class
    model: str  # the model class
    options: dict[str, Any]
    inputs: Callable[[Any], tuple[torch.Tensor, ...]] = lambda config: (
        torch.randint(0, VOCAB, (2, 16), generator=torch.Generator().manual_seed(1)),
    )
    output: str = "last_hidden_state"  # the field of the model's output compared
    min_sqnr_db: float = 15.0  # fp8-current on two random layers: 20-30 dB measured
    moe: bool = False  # a mixture of experts: its routers stay in high precision


def _pixels(size: int, channels: int = 3) -> Callable[[Any], tuple[torch.Tensor, ...]]:
    return lambda config: (
        torch.randn(2, channels, size, size, generator=torch.Generator().manual_seed(1)),
    )


def _whisper_features(config: Any) -> tuple[torch.Tensor, ...]:
    frames = 2 * config.max_source_positions
    return (
        torch.randn(1, config.num_mel_bins, frames, generator=torch.Generator().manual_seed(1)),
    )


FAMILIES = {
    "llama": Family("LlamaConfig", "LlamaForCausalLM", {**TEXT, **HEADS}, output="logits"),
    "qwen2": Family("Qwen2Config", "Qwen2ForCausalLM", {**TEXT, **HEADS}, output="logits"),
    "qwen3": Family(
        "Qwen3Config", "Qwen3ForCausalLM", {**TEXT, **HEADS, "head_dim": 16}, output="logits"
    ),
    "mistral": Family("MistralConfig", "MistralForCausalLM", {**TEXT, **HEADS}, output="logits"),
    "gemma2": Family(
        "Gemma2Config", "Gemma2ForCausalLM", {**TEXT, **HEADS, "head_dim": 16}, output="logits"
    ),
    "gemma3": Family(
        "Gemma3TextConfig",
        "Gemma3ForCausalLM",
        {**TEXT, **HEADS, "head_dim": 16},
        output="logits",
    ),
    "phi3": Family(
        "Phi3Config", "Phi3ForCausalLM", {**TEXT, **HEADS, "pad_token_id": 0}, output="logits"
    ),
    "gpt_neox": Family(
        "GPTNeoXConfig", "GPTNeoXForCausalLM", {**TEXT, "num_attention_heads": 4}, output="logits"
    ),
    "gpt2": Family(
        "GPT2Config",
        "GPT2LMHeadModel",
        {"vocab_size": VOCAB, "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 64},
        output="logits",
    ),
    "opt": Family(
        "OPTConfig",
        "OPTForCausalLM",
        {
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "ffn_dim": 128,
            "num_attention_heads": 4,
            "word_embed_proj_dim": 64,
            "max_position_embeddings": 64,
        },
        output="logits",
    ),
    "falcon": Family(
        "FalconConfig",
        "FalconForCausalLM",
        {"vocab_size": VOCAB, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4},
        output="logits",
    ),
    "mixtral": Family(
        "MixtralConfig",
        "MixtralForCausalLM",
        {**TEXT, **HEADS, "num_local_experts": 4, "num_experts_per_tok": 2},
        output="logits",
        moe=True,
    ),
    "qwen2_moe": Family(
        "Qwen2MoeConfig",
        "Qwen2MoeForCausalLM",
        {
            **TEXT,
            **HEADS,
            "num_experts": 4,
            "num_experts_per_tok": 2,
            "moe_intermediate_size": 64,
            "shared_expert_intermediate_size": 64,
        },
        output="logits",
        moe=True,
    ),
    "phimoe": Family(  # its router concatenates (torch.concat) and scatters on dim -1
        "PhimoeConfig",
        "PhimoeForCausalLM",
        {**TEXT, **HEADS, "num_local_experts": 4, "num_experts_per_tok": 2},
        output="logits",
        moe=True,
    ),
    "bert": Family("BertConfig", "BertModel", {**TEXT, "num_attention_heads": 4}),
    "roberta": Family("RobertaConfig", "RobertaModel", {**TEXT, "num_attention_heads": 4}),
    "distilbert": Family(
        "DistilBertConfig",
        "DistilBertModel",
        {"vocab_size": VOCAB, "dim": 64, "n_layers": 2, "n_heads": 4, "hidden_dim": 128},
    ),
    "deberta_v2": Family(
        "DebertaV2Config",
        "DebertaV2Model",
        {**TEXT, "num_attention_heads": 4, "relative_attention": True, "position_buckets": 16},
    ),
    "t5_encoder": Family(
        "T5Config",
        "T5EncoderModel",
        {
            "vocab_size": VOCAB,
            "d_model": 64,
            "d_kv": 16,
            "d_ff": 128,
            "num_layers": 2,
            "num_heads": 4,
        },
    ),
    "bart_encoder": Family(
        "BartConfig",
        "BartModel",
        {
            "vocab_size": VOCAB,
            "d_model": 64,
            "encoder_layers": 2,
            "decoder_layers": 1,
            "encoder_attention_heads": 4,
            "decoder_attention_heads": 4,
            "encoder_ffn_dim": 128,
            "decoder_ffn_dim": 128,
            "max_position_embeddings": 64,
        },
        output="encoder_last_hidden_state",
    ),
    "vit": Family(
        "ViTConfig",
        "ViTModel",
        {
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "intermediate_size": 128,
            "image_size": 32,
            "patch_size": 8,
        },
        inputs=_pixels(32),
    ),
    "swin": Family(
        "SwinConfig",
        "SwinModel",
        {
            "image_size": 32,
            "patch_size": 4,
            "embed_dim": 16,
            "depths": [1, 1],
            "num_heads": [2, 4],
            "window_size": 4,
        },
        inputs=_pixels(32),
    ),
    "convnext": Family(
        "ConvNextConfig",
        "ConvNextModel",
        {"hidden_sizes": [16, 32], "depths": [1, 1], "num_stages": 2, "image_size": 32},
        inputs=_pixels(32),
    ),
    "whisper_encoder": Family(
        "WhisperConfig",
        "WhisperModel",
        {
            "vocab_size": VOCAB,
            "d_model": 64,
            "encoder_layers": 2,
            "decoder_layers": 1,
            "encoder_attention_heads": 4,
            "decoder_attention_heads": 4,
            "encoder_ffn_dim": 128,
            "decoder_ffn_dim": 128,
            "num_mel_bins": 16,
            "max_source_positions": 16,
            "pad_token_id": 0,
            "bos_token_id": 1,
            "eos_token_id": 2,
            "decoder_start_token_id": 1,
        },
        inputs=_whisper_features,
    ),
    "mamba": Family(
        "MambaConfig",
        "MambaModel",
        {"vocab_size": VOCAB, "hidden_size": 64, "num_hidden_layers": 2, "state_size": 8},
    ),
}


class _Field(torch.nn.Module):
    """The model's output field ``field`` as one tensor (an encoder-decoder's encoder alone)."""

    def __init__(self, model: torch.nn.Module, field: str) -> None:
        super().__init__()
        self.model, self.field = model, field

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.field == "encoder_last_hidden_state":
            encoder = self.model.get_encoder()
            key = "input_features" if x.is_floating_point() else "input_ids"
            return encoder(**{key: x}).last_hidden_state
        if x.is_floating_point():
            return getattr(self.model(pixel_values=x), self.field)
        return getattr(self.model(input_ids=x, use_cache=False), self.field)


def _build(family: Family) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    import transformers

    torch.manual_seed(0)
    config = getattr(transformers, family.config)(**family.options)
    model = getattr(transformers, family.model)(config).eval()
    field = family.output
    if family.model == "WhisperModel":
        field = "encoder_last_hidden_state"
    return _Field(model, field).eval(), family.inputs(config)


# built by other tests of `make test` (tests/e2e: generation, moe, training, checkpoint folders,
# index checks): only in the sweep
ELSEWHERE = {
    "llama", "qwen2", "qwen3", "mistral", "gemma2", "gemma3", "phi3", "gpt_neox", "gpt2",
    "mixtral", "qwen2_moe", "bert", "roberta",
}  # fmt: skip


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.architectures) if name in ELSEWHERE else name
        for name in FAMILIES
    ],
)
def test_family_compiles_and_runs_close_to_torch(name: str) -> None:
    family = FAMILIES[name]
    model, inputs = _build(family)
    art = compiler.compile(model, inputs, recipe="fp8-current")
    with torch.no_grad():
        want = model(*inputs).float().numpy()
    got = np.asarray(art(*[x.numpy() for x in inputs]), dtype=np.float32)
    assert got.shape == want.shape
    noise = float(np.sum((got - want) ** 2))
    sqnr = 10 * np.log10(float(np.sum(want**2)) / max(noise, 1e-30))
    assert sqnr >= family.min_sqnr_db, f"{name}: {sqnr:.1f} dB"
    quantized = sum(layer.recipe != "none" for layer in art.record.layers)
    assert quantized > 0, f"{name}: no matmul quantized"
    routers = [layer.layer for layer in art.record.layers if "MoE router" in layer.note]
    assert bool(routers) == family.moe, routers
