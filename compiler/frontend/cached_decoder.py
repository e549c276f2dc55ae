"""A causal LM with its KV cache in buffers, the form a generator artifact is compiled from.

:class:`CachedDecoder` wraps a transformers causal LM with a static cache
(``transformers.StaticCache``: per layer, keys and values ``[batch, kv_heads, max_seq,
head_dim]`` in the model's dtype) whose tensors are the wrapper's buffers, so ``torch.export``
sees the cache as buffers the forward mutates and the compile keeps them in the module
(``passes/hold_buffers.py``). One forward takes ``T`` tokens per sequence at positions
``start .. start+T-1``, writes their keys and values there, attends to positions ``0 ..
start+T-1`` and returns the logits of the last token: ``T`` = the prompt is the prefill, ``T``
= 1 a decode step. Positions past ``start+T`` hold stale entries from an earlier generation;
the causal mask never reads them, so a new generation needs no reset.

A sliding-window layer's cache (Mistral, Gemma 2/3) is kept at the full length, as
transformers' own export helper does: its attention mask still applies the window.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from passes.base.errors import QmlirError

KEYS, VALUES, LENGTH = "key_cache_{}", "value_cache_{}", "cumulative_length_{}"


class CachedDecoder(nn.Module):
    """``forward(input_ids [batch, T] i64, start [1] i64) -> logits [batch, vocab] f32`` (the
    last position's), the cache held in buffers (see the module docstring)."""

    def __init__(self, lm: nn.Module, max_batch: int, max_seq: int) -> None:
        super().__init__()
        from transformers import StaticCache
        from transformers.cache_utils import StaticLayer, StaticSlidingWindowLayer

        self.lm = lm
        config = lm.config.get_text_config()
        self.cache = StaticCache(max_cache_len=max_seq, config=config)
        for i, layer in enumerate(self.cache.layers):
            if isinstance(layer, StaticSlidingWindowLayer) or type(layer) is not StaticLayer:
                self.cache.layers[i] = StaticLayer(max_seq)
        heads, head_dim = _head_shapes(config)
        weight = next(iter(lm.parameters()))
        # on the weights' device: a folder's model is on the meta device, and so is its cache
        # (it starts at zeros, which the runtime sets: passes/hold_buffers.py)
        self.cache.early_initialization(max_batch, heads, head_dim, weight.dtype, weight.device)
        for i, layer in enumerate(self.cache.layers):
            self.register_buffer(KEYS.format(i), layer.keys, persistent=False)
            self.register_buffer(VALUES.format(i), layer.values, persistent=False)
            self.register_buffer(LENGTH.format(i), layer.cumulative_length, persistent=False)
        self.max_batch, self.max_seq = max_batch, max_seq

    def forward(self, input_ids: torch.Tensor, start: torch.Tensor) -> torch.Tensor:
        # the layers read the buffers through the module (under torch.export's non-strict
        # tracing, the module's attributes are the traced values, the cache's own are not)
        for i, layer in enumerate(self.cache.layers):
            layer.keys = getattr(self, KEYS.format(i))
            layer.values = getattr(self, VALUES.format(i))
            layer.cumulative_length = getattr(self, LENGTH.format(i))
            layer.cumulative_length.copy_(start[0])
        out = self.lm(
            input_ids=input_ids, past_key_values=self.cache, use_cache=True, logits_to_keep=1
        )
        return out.logits[:, -1, :].float()


def _head_shapes(config: Any) -> tuple[int, int]:
    heads = getattr(config, "num_key_value_heads", None) or getattr(
        config, "num_attention_heads", None
    )
    head_dim = getattr(config, "head_dim", None)
    if head_dim is None and heads:
        head_dim = config.hidden_size // config.num_attention_heads
    if not heads or not head_dim:
        raise QmlirError(
            f"{type(config).__name__} names no attention heads: not a decoder qmlir can "
            "give a KV cache"
        )
    return int(heads), int(head_dim)


def is_causal_lm(model: nn.Module) -> bool:
    return type(model).__name__.endswith("ForCausalLM") and hasattr(model, "config")
