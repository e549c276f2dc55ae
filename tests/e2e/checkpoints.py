"""Small checkpoint folders for the tests, written by transformers' own ``save_pretrained``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from samples import moe_lm

for _name in ("transformers", "torchao", "torch.utils._pytree"):
    logging.getLogger(_name).setLevel(logging.ERROR)


def llama(
    seed: int = 0, dtype: torch.dtype = torch.float32, tied: bool = False, **overrides: int
) -> torch.nn.Module:
    """A seeded, tiny ``LlamaForCausalLM`` (GQA; its head tied to the embedding if ``tied``)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    sizes = {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 256,
        "max_position_embeddings": 64,
        **overrides,
    }
    config = LlamaConfig(tie_word_embeddings=tied, **sizes)
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval().to(dtype)


def bert(seed: int = 0) -> torch.nn.Module:
    """A seeded, tiny ``BertModel``."""
    from transformers import BertConfig, BertModel

    config = BertConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        vocab_size=300,
        max_position_embeddings=64,
    )
    torch.manual_seed(seed)
    return BertModel(config, add_pooling_layer=False).eval()


def byte_tokenizer() -> Any:
    """A transformers fast tokenizer of the 256 byte-level symbols and no merges (every byte one
    token, ids < 256: the small test models' vocabulary)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok)


def save(model: torch.nn.Module, folder: Path, shard: str = "40KB") -> Path:
    """``model.save_pretrained(folder)`` in several shards (``shard`` bytes each at most)."""
    model.save_pretrained(str(folder), max_shard_size=shard)
    return folder


# small configs of the decoder architectures a generator is tested on (random weights)
_DECODERS = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 16}),
    "mistral": ("MistralConfig", "MistralForCausalLM", {"sliding_window": 32}),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {"pad_token_id": 0}),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", {"head_dim": 16, "sliding_window": 32}),
    "gemma3": ("Gemma3TextConfig", "Gemma3ForCausalLM", {"head_dim": 16, "sliding_window": 32}),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", {"num_key_value_heads": None}),
}
DECODERS = tuple(_DECODERS)


def decoder(arch: str, seed: int = 0) -> torch.nn.Module:
    """A seeded, tiny causal LM of ``arch`` (one of :data:`DECODERS`), f32."""
    import transformers

    config_name, model_name, extra = _DECODERS[arch]
    sizes = {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,  # GQA (GPT-NeoX has none)
        "vocab_size": 256,
        "max_position_embeddings": 128,
        **extra,
    }
    config = getattr(transformers, config_name)(**{k: v for k, v in sizes.items() if v is not None})
    torch.manual_seed(seed)
    return getattr(transformers, model_name)(config).eval()


MOE = moe_lm.ARCHITECTURES


def moe(arch: str, seed: int = 0) -> torch.nn.Module:
    """A seeded, tiny mixture-of-experts causal LM of ``arch`` (``samples/moe_lm.py``)."""
    return moe_lm.make(arch, seed)
