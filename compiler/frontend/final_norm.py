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

``mlp=True`` (a generator, or a folder's next-token logits, whose recipe quantizes each
activation row apart from the others: ``Recipe.rows_apart``) also gives the last decoder layer's
MLP the last position alone: only that position's output reaches the final norm, and the keys
and values the cache needs for every position come before the MLP. In a 512-token prefill of a
1.1B Llama that MLP is 3.5% of the GEMM work (1/22 layers, 77% of a layer's), all for rows whose
outputs nothing reads. Each row's MLP is computed from that row alone, so the last position's
values are the same (its GEMMs, now of one row, may sum in another order); with a per-tensor
activation scale (fp8-current, nvfp4's global one) the scale would come from one row's amax
instead of the prompt's, so those recipes keep every row.
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


def last_mlp(lm: nn.Module) -> nn.Module | None:
    """The MLP of ``lm``'s last decoder layer (``mlp`` on the base model's last ``layers`` or
    ``h`` entry: Llama, Mistral, Qwen, Gemma, Phi-3, GPT-NeoX, GPT-2, Falcon), else None; a
    mixture of experts (an ``experts`` attribute) is left alone."""
    get_decoder = getattr(lm, "get_decoder", None)
    base = get_decoder() if callable(get_decoder) else None
    layers = next(
        (
            getattr(base, name)
            for name in ("layers", "h")
            if isinstance(getattr(base, name, None), nn.ModuleList)
        ),
        None,
    )
    if not layers:
        return None
    mlp = getattr(layers[-1], "mlp", None)
    if not isinstance(mlp, nn.Module) or hasattr(mlp, "experts"):
        return None
    return mlp


def _last_position(_module: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    hidden = args[0] if args else None
    if hidden is None or getattr(hidden, "dim", lambda: 0)() != 3:
        return None  # not [batch, positions, hidden]: left as it is
    return (hidden[:, -1:, :], *args[1:])


@contextmanager
def final_norm_on_last_position(lm: nn.Module, mlp: bool = False) -> Iterator[None]:
    """Within the block, ``lm``'s final norm (:func:`final_norm`) takes the last position of
    its input only, and with ``mlp`` so does its last layer's MLP (:func:`last_mlp`, where the
    final norm is known); nothing changes for a model without a known final norm."""
    norm = final_norm(lm)
    if norm is None:
        yield
        return
    modules = [norm]
    last = last_mlp(lm) if mlp else None
    if last is not None:
        modules.append(last)
    handles = [module.register_forward_pre_hook(_last_position) for module in modules]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
