"""Attention as two batched matmuls and a softmax: the decomposition of
``aten.scaled_dot_product_attention`` that ``export`` applies before import.

Why: torch-mlir imports SDPA as one ``iree_linalg_ext.attention`` op, which IREE's llvm-cpu backend
runs at a few GFLOP/s (about 60-70% of MiniLM's and the decoder's time on an AVX2 host), while
the same work as ``bmm → softmax → bmm`` runs at IREE's GEMM speed (``benchmarks/RESULTS.md``).
The two GEMMs are then ordinary ``aten.bmm`` ops, so ``--quantize-all-matmuls`` quantizes them
like any activation × activation matmul (``Q·Kᵀ`` and ``P·V``).

Semantics are torch's math reference (``torch.nn.functional.scaled_dot_product_attention``'s
documented equivalent): scores = Q·Kᵀ × scale (scale = 1/√E unless given); ``is_causal`` masks
the upper triangle (top-left aligned) with -inf; a bool mask keeps where True, -inf elsewhere;
a float mask is added; softmax over the last dim; then × V. With bf16/f16 inputs all of it is
computed in f32 (Q, K, V widened exactly) and the result rounded back once, as torch's CPU
attention kernels accumulate in f32; IREE also fails on the bf16 form with dynamic dims
("exceeded stack allocation limit", measured on a bf16 Llama). A query row the mask closes to
every key gives 0, as torch's SDPA does since torch 2.5 (its "safe" softmax) and the decode
step's kernel does (``passes/decode_attention.py``): the softmax's 0 / 0 there is replaced
by 0. Left as NaN, such a row (a left-padded prompt's padding, under transformers' causal and
padding mask) made every later layer's keys and values at that position NaN, and every query
that reads them: the whole padded sequence's output was NaN, where torch gives the real
tokens' logits. Dropout must be 0 (inference).

GQA (``enable_gqa``, each K/V head shared by a group of query heads): the query heads are
grouped by their K/V head, never K and V repeated. Each K/V head's GEMMs take its group's query
rows together (``[kv_heads, group × L, E] · [kv_heads, S, E]ᵀ``), so K and V are read once, in
their own dtype: IREE fuses the widening to f32 into the GEMM's operand. Repeated, a KV cache
was widened and copied once per query head on every call: at a generator's decode step that
copy and its pack were a third of the step (0.35B Llama, 4 query heads per K/V head,
``benchmarks/RESULTS.md``). The sums are the same products in another order.

A dynamic key length (a symbolic size at export) is padded to a multiple of ``PAD_MULTIPLE`` keys:
K and V get zero rows, the masks keep those keys out (exp(-inf) = 0, so each weighs exactly 0),
and the padded length is made as a product by ``PAD_MULTIPLE``, which ``passes/assume_multiples.py``
tells IREE. IREE's CPU code for a reduction over a dynamic size peeled every softmax row into a
vector body and a scalar remainder; over a known multiple it runs whole vectors (MiniLM's dynamic
softmax 37 -> 8.6 ms a call, its artifact 1.49x -> 1.16x the static one's time on an AVX2 host,
``benchmarks/RESULTS.md``). A static key length is left as it is.
"""

from __future__ import annotations

import math

import torch

from passes.base.errors import QmlirError

SDPA = torch.ops.aten.scaled_dot_product_attention.default


def sdpa_as_matmuls(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> torch.Tensor:
    if dropout_p != 0.0:
        raise QmlirError(f"scaled_dot_product_attention with dropout_p={dropout_p} (inference)")
    if is_causal and attn_mask is not None:
        raise QmlirError("scaled_dot_product_attention with both is_causal and attn_mask")
    masked = attn_mask is not None  # a mask the caller gave: a row of it may close every key
    group = 1
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        group = query.size(-3) // key.size(-3)
    factor = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    dtype = value.dtype
    if dtype in (torch.bfloat16, torch.float16):
        query, key, value = query.float(), key.float(), value.float()
    heads, length, source = query.size(-3) if query.dim() >= 3 else 1, query.size(-2), key.size(-2)
    padded = _padded_length(source)
    real = None  # [padded] bool: which keys are the model's, where K and V are padded
    if padded is not source:  # K and V padded with zero rows to a multiple of PAD_MULTIPLE
        key, value = _pad(key, -2, padded), _pad(value, -2, padded)
        real = torch.arange(padded, device=key.device) < source
    if group > 1:  # [..., heads, L, E] -> [..., kv_heads, group x L, E]: a group's rows together
        query = query.reshape(*query.shape[:-3], heads // group, group * length, query.size(-1))
    scores = torch.matmul(query, key.transpose(-2, -1)) * factor
    if real is not None and not is_causal:  # the padding's keys masked out: exp(-inf) = 0
        attn_mask = _mask_padding(attn_mask, real, padded)
    if group > 1:  # [..., kv_heads, group, L, S]: the masks broadcast over the heads as given
        scores = scores.unflatten(-2, (group, length))
        if attn_mask is not None and attn_mask.dim() >= 3:
            attn_mask = (
                attn_mask.unflatten(-3, (heads // group, group))
                if attn_mask.size(-3) == heads and heads > 1
                else attn_mask.unsqueeze(-3)
            )
    if is_causal:
        keep = torch.ones(length, padded, dtype=torch.bool, device=query.device).tril()
        if real is not None:  # a query past the last key keeps only the real ones
            keep = keep & real
        scores = scores.masked_fill(keep.logical_not(), NEG_INF)
    elif attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), NEG_INF)
        else:
            scores = scores + attn_mask.to(scores.dtype)
    probabilities = torch.softmax(scores, dim=-1)
    if masked and attn_mask is not None:  # torch's safe softmax: a closed row weighs nothing
        probabilities = probabilities.masked_fill(_closed_rows(attn_mask), 0.0)
    if group > 1:
        probabilities = probabilities.flatten(-3, -2)
    out = torch.matmul(probabilities, value)
    if group > 1:  # back to [..., heads, L, E]
        out = out.reshape(*out.shape[:-3], heads, length, out.size(-1))
    return out.to(dtype)


def _closed_rows(mask: torch.Tensor) -> torch.Tensor:
    """``[..., L, 1]`` bool: the query rows ``mask`` (bool: keep where True; float: added)
    closes to every key, whose softmax is 0 / 0."""
    if mask.dtype == torch.bool:
        return mask.logical_not().all(-1, keepdim=True)
    return (mask == NEG_INF).all(-1, keepdim=True)


NEG_INF = float("-inf")
# a dynamic key length is padded to a multiple of this many keys (AVX2's f32 lanes)
PAD_MULTIPLE = 8


def _padded_length(source: int | torch.SymInt) -> int | torch.SymInt:
    """``source`` rounded up to a multiple of ``PAD_MULTIPLE`` when it is symbolic (a dynamic
    dim), itself otherwise."""
    if isinstance(source, int):
        return source
    return (source + PAD_MULTIPLE - 1) // PAD_MULTIPLE * PAD_MULTIPLE


def _pad(
    x: torch.Tensor, dim: int, size: int | torch.SymInt, fill: float | bool = 0
) -> torch.Tensor:
    """``x`` with ``fill`` after its own values along ``dim`` (-1 or -2), ``size`` in all, viewed
    at that size: the padded dim is then ``size`` itself in the IR (where IREE sees it as a
    multiple: ``passes/assume_multiples.py``), not ``x``'s size plus a pad amount."""
    extra = size - x.size(dim)
    padded = torch.nn.functional.pad(x, (0, extra) if dim == -1 else (0, 0, 0, extra), value=fill)
    shape = list(x.shape)
    shape[dim] = size
    return padded.view(shape)


def _mask_padding(
    mask: torch.Tensor | None, real: torch.Tensor, padded: torch.SymInt
) -> torch.Tensor:
    """An attention mask over ``padded`` keys that also masks the padding's (``real``: which
    keys are the model's): ``mask`` padded with False (a bool mask) or -inf (a float mask), or
    ``real`` itself where there is no mask, or combined with it where ``mask`` broadcasts over
    the keys. The mask is an operand of the scores' masking, never index arithmetic on them
    (IREE computes that per element, a remainder by the dynamic key length in scalar code)."""
    if mask is None:
        return real
    if mask.size(-1) == 1:  # broadcast over the keys
        return mask & real if mask.dtype == torch.bool else mask.masked_fill(~real, NEG_INF)
    return _pad(mask, -1, padded, False if mask.dtype == torch.bool else NEG_INF)
