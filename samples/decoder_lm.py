"""A small Llama-style decoder LM (transformers' ``LlamaForCausalLM``) returning next-token logits.

Config: hidden 256, 4 layers, 4 query heads sharing 2 key/value heads (GQA), SwiGLU MLP 688,
RMSNorm, rotary positions, vocabulary 4096, untied input/output embeddings. Random weights,
seeded. The compiled function takes ``input_ids`` (int64 ``[batch, seq]``) and returns the last
position's logits (f32 ``[batch, vocab]``; ``logits_to_keep=1``, as ``generate`` asks, so the
``lm_head`` runs on the last position only); no KV cache.

Random weights need care to make top-1 agreement mean something. At transformers' defaults every
weight is drawn with std 0.02: the residual stream is then dominated by the layers' random updates
rather than the token, the logits are nearly Gaussian over the vocabulary, and the gap between the
two largest is about a tenth of their spread, so any rounding flips the argmax (a larger
``initializer_range`` makes it worse: the random network turns chaotic; scaling the ``lm_head``
alone rescales the gap and the error alike). Two changes, both seeded:

- the token embeddings are drawn with std ``EMBED_STD`` = 1 (PyTorch's ``nn.Embedding`` default),
  so, as in trained models, the residual stream is larger than each layer's update;
- the ``lm_head`` is its random matrix plus ``COPY`` times the embedding table (what a model with
  tied embeddings starts from), all scaled by ``LM_HEAD_SCALE``. Each row's logits then have one
  clear winner, most often the last input token, with the layers deciding the margins and the
  rest: the f32 top-1 stands a median of about 2 standard deviations of the logits above the
  runner-up (``top1_margin``), against an FP8 logit error of about 0.04 of one.

    qmlir compile samples/decoder_lm.py:build --recipe fp8-current -o lm.vmfb
    qmlir run lm.vmfb --compare samples/decoder_lm.py:build
"""

from __future__ import annotations

import logging

import torch
from torch import nn

HIDDEN, LAYERS, HEADS, KV_HEADS, INTERMEDIATE, VOCAB = 256, 4, 4, 2, 688, 4096
EMBED_STD, COPY, LM_HEAD_SCALE = 1.0, 0.008, 4.0


class NextTokenLogits(nn.Module):
    """A causal LM → the logits of the token after the last position."""

    def __init__(self, lm: nn.Module) -> None:
        super().__init__()
        self.lm = lm

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        out = self.lm(input_ids=input_ids, use_cache=False, logits_to_keep=1)
        return out.logits[:, -1, :]


class LanguageModelLoss(nn.Module):
    """A transformers causal LM under the next-token cross-entropy: ``forward(ids, labels)``
    returns the loss (a training step's form)."""

    def __init__(self, lm: nn.Module) -> None:
        super().__init__()
        self.lm = lm

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.lm(input_ids=ids, use_cache=False).logits
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def training_lm(arch: str) -> nn.Module:
    """A fresh one-layer random ``qwen2`` or (untied) ``gpt2`` LM, vocabulary 256, width 64,
    under :class:`LanguageModelLoss`: the models whose 8 x 32-token training steps needed IREE
    retries (tests/e2e/test_training.py, benchmarks/training_families.py)."""
    import transformers

    if arch == "qwen2":
        config = transformers.Qwen2Config(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=1,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
        )
        return LanguageModelLoss(transformers.Qwen2ForCausalLM(config))
    config = transformers.GPT2Config(
        vocab_size=256,
        n_embd=64,
        n_layer=1,
        n_head=4,
        n_positions=64,
        attn_pdrop=0.0,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        tie_word_embeddings=False,
        bos_token_id=0,
        eos_token_id=0,
    )
    return LanguageModelLoss(transformers.GPT2LMHeadModel(config))


def make_lm(layers: int = LAYERS, seed: int = 0, vocab: int = VOCAB) -> nn.Module:
    """The seeded ``LlamaForCausalLM`` (eval mode, SDPA attention, no cache); ``layers`` and
    ``vocab`` shrink it (the cuda probe's generators)."""
    for name in ("torchao", "transformers", "torch.utils._pytree"):
        logging.getLogger(name).setLevel(logging.ERROR)  # optional-kernel load chatter
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=HIDDEN,
        intermediate_size=INTERMEDIATE,
        num_hidden_layers=layers,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        max_position_embeddings=512,
        tie_word_embeddings=False,
        use_cache=False,
        attn_implementation="sdpa",
    )
    torch.manual_seed(seed)
    lm = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        embed = lm.model.embed_tokens.weight.normal_(0.0, EMBED_STD)
        lm.lm_head.weight.add_(COPY * embed).mul_(LM_HEAD_SCALE)
    return lm


def token_ids(batch: int, seq: int, seed: int = 1) -> torch.Tensor:
    """Deterministic token ids in ``[0, VOCAB)``."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (batch, seq), generator=g, dtype=torch.int64)


def build(batch: int = 32, seq: int = 64) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return NextTokenLogits(make_lm()).eval(), (token_ids(batch, seq),)


def build_small() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The same model on 32 sequences of 16 tokens: quicker to run (tests)."""
    return build(batch=32, seq=16)


def top1_margin(logits: torch.Tensor) -> torch.Tensor:
    """Per row: (largest - second largest logit) / the logits' standard deviation."""
    top2 = logits.topk(2, dim=-1).values
    return (top2[:, 0] - top2[:, 1]) / logits.std(dim=-1)
