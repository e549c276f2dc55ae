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

``kv_cache="fp8"``: each layer keeps its keys and values as E4M3 codes (``uint8``) with one
E8M0 scale per 32 values of a head vector (``compiler/frontend/kv_codes.py``): a token's keys
and values are quantized once, when they are written (prefill or decode step), and the layer
attends to the whole cache dequantized, the tokens just written included, so a decode step and
a prefill over the same tokens see the same keys and values.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from compiler.frontend.final_norm import final_norm_on_last_position
from passes.base.errors import QmlirError

KEYS, VALUES, LENGTH = "key_cache_{}", "value_cache_{}", "cumulative_length_{}"
KEY_SCALES, VALUE_SCALES = "key_scales_{}", "value_scales_{}"  # an FP8 cache's E8M0 scales
KV_CACHES = ("model", "fp8")  # checked by compile_generator (compiler/pipeline/generation.py)


class CachedDecoder(nn.Module):
    """``forward(input_ids [batch, T] i64, start [1] i64) -> logits [batch, vocab] f32`` (the
    last position's), the cache held in buffers (see the module docstring); ``batch`` up to the
    cache's ``max_batch``: the call writes and reads the cache's first ``batch`` rows."""

    def __init__(
        self,
        lm: nn.Module,
        max_batch: int,
        max_seq: int,
        kv_cache: str = "model",
        last_mlp: bool = False,
    ) -> None:
        super().__init__()
        from transformers import StaticCache
        from transformers.cache_utils import StaticLayer, StaticSlidingWindowLayer

        # last_mlp: the last layer's MLP over the last position alone (final_norm.py)
        self.lm, self.kv_cache, self.last_mlp = lm, kv_cache, last_mlp
        config = lm.config.get_text_config()
        self.cache = StaticCache(max_cache_len=max_seq, config=config)
        layer_class = _fp8_layer_class() if kv_cache == "fp8" else _rows_layer_class()
        for i, layer in enumerate(self.cache.layers):
            if isinstance(layer, (StaticSlidingWindowLayer, StaticLayer)):
                self.cache.layers[i] = layer_class(max_seq)
        heads, head_dim = _head_shapes(config)
        weight = next(iter(lm.parameters()))
        # on the weights' device: a folder's model is on the meta device, and so is its cache
        # (it starts at zeros, which the runtime sets: passes/hold_buffers.py)
        self.cache.early_initialization(max_batch, heads, head_dim, weight.dtype, weight.device)
        for i, layer in enumerate(self.cache.layers):
            self.register_buffer(KEYS.format(i), layer.keys, persistent=False)
            self.register_buffer(VALUES.format(i), layer.values, persistent=False)
            if kv_cache == "fp8":
                self.register_buffer(KEY_SCALES.format(i), layer.key_scales, persistent=False)
                self.register_buffer(VALUE_SCALES.format(i), layer.value_scales, persistent=False)
            self.register_buffer(LENGTH.format(i), layer.cumulative_length, persistent=False)
        self.max_batch, self.max_seq = max_batch, max_seq

    def forward(self, input_ids: torch.Tensor, start: torch.Tensor) -> torch.Tensor:
        # the layers read the buffers through the module (under torch.export's non-strict
        # tracing, the module's attributes are the traced values, the cache's own are not)
        for i, layer in enumerate(self.cache.layers):
            layer.keys = getattr(self, KEYS.format(i))
            layer.values = getattr(self, VALUES.format(i))
            if self.kv_cache == "fp8":
                layer.key_scales = getattr(self, KEY_SCALES.format(i))
                layer.value_scales = getattr(self, VALUE_SCALES.format(i))
            layer.cumulative_length = getattr(self, LENGTH.format(i))
            layer.cumulative_length.copy_(start[0])
        # the same values (final_norm.py)
        with final_norm_on_last_position(self.lm, self.last_mlp):
            out = self.lm(
                input_ids=input_ids, past_key_values=self.cache, use_cache=True, logits_to_keep=1
            )
        return out.logits[:, -1, :].float()


def _positions(
    layer: Any, key_states: torch.Tensor, value_states: torch.Tensor
) -> tuple[int, torch.Tensor]:
    """A cache layer's update, first steps: the call's rows, and the positions its tokens take
    (``cumulative_length ..``, which then counts them), as transformers' ``StaticLayer`` does.
    The positions are taken modulo the cache's length: the same values, since the runtime checks
    that a call's positions fit the cache (``Generator.step``), and a form ``check-indices``
    knows to be within the cache, so the call carries no index check (on ``cuda`` each check
    is a wait for the device in the middle of the call: ``passes/check_indices.py``)."""
    if not layer.is_initialized:
        layer.lazy_initialization(key_states, value_states)
    kv_length = key_states.shape[-2]
    position = torch.arange(kv_length, device=layer.device) + layer.cumulative_length
    position = torch.remainder(position, layer.keys.shape[2])
    layer.cumulative_length.add_(kv_length)
    return key_states.shape[0], position


def _all_rows(states: torch.Tensor, max_batch: int) -> torch.Tensor:
    """``states`` ``[batch, ...]`` with zero rows up to ``max_batch``: the cache is written whole
    (IREE 3.13 cannot write a dynamic number of a global's rows in place: "write affecting
    operations on global resources are restricted to workgroup distributed contexts"); the rows
    past the call's batch are other sequences' slots, which the call never reads."""
    # a pad, not a cat with zeros: cat guards on whether the zeros are empty, which would
    # specialize the batch to the traced example's
    pad = [0, 0] * (states.dim() - 1) + [0, max_batch - states.shape[0]]
    return torch.nn.functional.pad(states, pad)


def _rows_layer_class() -> type:
    """transformers' ``StaticLayer`` that writes and returns the call's rows only (the first
    ``batch`` of the cache's ``max_batch``): a call with fewer sequences computes only theirs."""
    from transformers.cache_utils import StaticLayer

    class RowsStaticLayer(StaticLayer):  # type: ignore[misc]
        def update(
            self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
        ) -> tuple[torch.Tensor, torch.Tensor]:
            rows, position = _positions(self, key_states, value_states)
            self.keys.index_copy_(2, position, _all_rows(key_states, self.keys.shape[0]))
            self.values.index_copy_(2, position, _all_rows(value_states, self.values.shape[0]))
            return self.keys[:rows], self.values[:rows]

    return RowsStaticLayer


def _fp8_layer_class() -> type:
    """transformers' ``StaticLayer`` holding E4M3 codes and E8M0 scales (see the module
    docstring); built on first use (transformers is imported lazily)."""
    from transformers.cache_utils import StaticLayer

    from compiler.frontend.kv_codes import kv_dequantize, kv_quantize, scale_columns

    class Fp8StaticLayer(StaticLayer):  # type: ignore[misc]
        key_scales: torch.Tensor
        value_scales: torch.Tensor

        def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
            super().lazy_initialization(key_states, value_states)
            self.keys = torch.zeros_like(self.keys, dtype=torch.uint8)
            self.values = torch.zeros_like(self.values, dtype=torch.uint8)
            shape = self.keys.shape[:-1]
            self.key_scales = self.keys.new_zeros((*shape, scale_columns(self.k_head_dim)))
            self.value_scales = self.values.new_zeros((*shape, scale_columns(self.v_head_dim)))

        def update(
            self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
        ) -> tuple[torch.Tensor, torch.Tensor]:
            rows, position = _positions(self, key_states, value_states)
            out = []
            for states, codes, scales in (
                (key_states, self.keys, self.key_scales),
                (value_states, self.values, self.value_scales),
            ):
                new_codes, new_scales = kv_quantize(states.float())
                codes.index_copy_(2, position, _all_rows(new_codes, codes.shape[0]))
                scales.index_copy_(2, position, _all_rows(new_scales, scales.shape[0]))
                # the whole cache (its dequantize takes static shapes), then the call's rows
                out.append(kv_dequantize(codes, scales)[:rows].to(states.dtype))
            return out[0], out[1]

    return Fp8StaticLayer


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
