"""A causal LM's final norm applied to the last position only, while a compile traces the
next-token logits (``checkpoint.NextTokenLogits``, ``cached_decoder.CachedDecoder``).

transformers normalizes every position's hidden state, then its head takes the last one
(``logits_to_keep=1``). IREE moves that slice up into the norm's dispatch, where, in AVX2 code
with dynamic rows, the bf16 hidden states widened to f32 were sliced out of a tile kept on the
stack: 8 rows of the hidden size in f32, 64 KiB for a 1.1B Llama (2048) and 128 KiB for an 8B
(4096), past IREE's stack limit (64 KiB here; its CPU workers' stacks are 128 KiB), so an 8B
Llama folder did not compile under nvfp4 (benchmarks/RESULTS.md). The final norm (RMSNorm or
LayerNorm) works on each position alone, so normalizing the last position alone gives the same
values, and the slice then comes before the widening. The hook lives only for the call that
registers it: a caller's own model is left as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from torch import nn

# the final norm's attribute on transformers' base models (Llama, Mistral, Qwen, Gemma, Phi-3:
# ``norm``; GPT-NeoX, OPT: ``final_layer_norm``; GPT-2, Falcon, Bloom: ``ln_f``; Phi:
# ``final_layernorm``)
FINAL_NORMS = ("norm", "final_layer_norm", "ln_f", "final_layernorm")


def final_norm(lm: nn.Module) -> nn.Module | None:
    """The module of ``lm``'s base model that normalizes its last hidden states, else None."""
    get_decoder = getattr(lm, "get_decoder", None)
    base = get_decoder() if callable(get_decoder) else None
    if not isinstance(base, nn.Module):
        return None
    for name in FINAL_NORMS:
        module = getattr(base, name, None)
        if isinstance(module, nn.Module):
            return module
    return None


def _last_position(_module: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    hidden = args[0] if args else None
    if hidden is None or getattr(hidden, "dim", lambda: 0)() != 3:
        return None  # not [batch, positions, hidden]: left as it is
    return (hidden[:, -1:, :], *args[1:])


@contextmanager
def final_norm_on_last_position(lm: nn.Module) -> Iterator[None]:
    """Within the block, ``lm``'s final norm (:func:`final_norm`) takes the last position of
    its input only; nothing changes for a model without a known one."""
    norm = final_norm(lm)
    if norm is None:
        yield
        return
    handle = norm.register_forward_pre_hook(_last_position)
    try:
        yield
    finally:
        handle.remove()
