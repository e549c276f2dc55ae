"""Small checkpoint folders for the tests, written by transformers' own ``save_pretrained``."""

from __future__ import annotations

import logging
from pathlib import Path

import torch

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


def save(model: torch.nn.Module, folder: Path, shard: str = "40KB") -> Path:
    """``model.save_pretrained(folder)`` in several shards (``shard`` bytes each at most)."""
    model.save_pretrained(str(folder), max_shard_size=shard)
    return folder
