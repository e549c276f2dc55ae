"""Pass ``decode-attention`` (llvm-cpu): the attention of one query position (a generator's
decode step) as a hand-written kernel that reads the KV cache as stored.

SDPA is decomposed into ``matmul → × scale → mask → softmax → matmul``
(``compiler/frontend/attention.py``). At a decode step IREE then widened the whole bf16 cache to
f32, packed it into its GEMM tiles (both K and V, every position up to ``max_seq``, every step)
and multiplied one query row by it: at 0.35B with a 512-position cache that was a tenth of an
FP8 step's CPU time (``benchmarks/RESULTS.md``), and it grows with the cache, not with the
tokens generated. Here each such attention with static shapes and one query position
(``[B, KVH, g, 1, S]`` scores for grouped-query attention, ``[B, H, 1, S]`` otherwise) becomes a
call of ``lowering/cpu/templates/decode_attention_executable.mlir``: per query row, each open
position's score (q · k, × scale, + mask), softmax's ``exp(score - max) / sum`` and the sum of
the weighted values, K and V read as the cache holds them (bf16 widened in registers, exactly;
f32 as they are). A masked position (mask ``-inf``: the bool mask's False, the float mask's
``-inf``) is skipped: its key and value are not read, so positions past the sequence cost
nothing (a stale non-finite value there cannot reach the output, as in torch's fused SDPA
kernels; the decomposition multiplied it by a weight of 0). A query row whose every position is
masked is 0, as torch's SDPA gives (its "safe" softmax since torch 2.5) and the decomposition
(``compiler/frontend/attention.py``).

The values are the decomposition's up to the order of the f32 sums (q · k reassociated, the
weighted values summed position by position) and the mask's addition (a bool mask's open
positions add 0). The attention a pattern does not match (softcapping, an ALiBi bias per head, a
mask over the query heads) stays decomposed; a prefill's (dynamic shapes) is
``prefill-attention``'s.

The pipeline runs it where ``decode-gemv`` runs (``decode_gemv="auto"`` on a CPU with its
instructions), after ``widen-bf16-matmuls``.
"""

from __future__ import annotations

import dataclasses
import math

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.base.numbers import f32_hex
from passes.ir.attention_sites import (
    AttentionSite,
    additive_mask,
    find_site,
    replace_with_call,
)
from passes.ir.functions import function_names
from passes.ir.types import TensorInfo, shape_text
from passes.ir.walk import ops_where
from passes.lowering.cpu.common import definition, fragment

PREFIX = "qmlir.decode_attention."


@register_pass
@dataclasses.dataclass(frozen=True)
class DecodeAttention(ModulePass):
    name = "decode-attention"

    def apply(self, module: ir.Module) -> None:
        softmaxes = ops_where(module.operation, lambda op: op.name == "torch.aten.softmax.int")
        names = function_names(module)
        for op in softmaxes:
            site = find_site(op)
            if site is not None and not site.per_position:
                replace_with_call(module, names, site, PREFIX, _definitions)


def _definitions(name: str, site: AttentionSite) -> list[str]:
    q, k, mask = site.shapes()
    return attention_definitions(name, q, k, mask, site.fill, site.factor)


def attention_definitions(
    name: str,
    q: TensorInfo,
    k: TensorInfo,
    mask: TensorInfo | None,
    fill: bool,
    factor: float,
) -> list[str]:
    """The text of the kernel's executable and of ``@name``, the function dispatching it: q
    ``[B, KVH, g, E]`` or ``[B, H, 1, E]`` f32, K and V ``[B, KVH, S, E]`` (``k.dtype``), the
    mask (``None``, an i1 mask for masked_fill, an f32 one added) broadcast over the scores."""
    b, kvh, s, e = k.shape
    heads = q.shape[1] * q.shape[2]
    exe, fn = f"{name}$executable", f"{name}$attention"
    kv_elem = k.dtype
    row = f"decode_attention_row_{kv_elem}.mlir"
    fields = {"BK": b * kvh, "S": s, "E": e}
    executable = fragment(
        "decode_attention_executable.mlir",
        exe=exe,
        fn=fn,
        B=b,
        BH=b * heads,
        H=heads,
        G=heads // kvh,
        KVH=kvh,
        kv_elem=kv_elem,
        factor=f32_hex(factor),
        lanes=8 if s % 8 == 0 else 1,
        k_row=fragment(row, p="k_", cache="%k", **fields),
        v_row=fragment(row, p="v_", cache="%v", **fields),
        widen_doc="are bf16 widened in registers (exact)" if kv_elem == "bf16" else "are f32",
        **fields,
    )
    if mask is None:
        mask_elem, mask_shape, mb = "i1", (1, s), 1
        mask_rows = f"  %mask_rows = arith.constant dense<false> : tensor<1x{s}xi1>"
        mask_arg, mask_doc = "", "none: every position open"
    else:
        mask_elem, mask_shape = mask.dtype, mask.shape
        mb = math.prod(mask.shape[:-1])
        mask_arg = f", %mask: tensor<{shape_text(mask.shape)}x{mask_elem}>"
        mask_doc = "True: masked" if fill else "added to the scores"
        if mask.rank == 1:
            mask_rows = (
                f"  %mask_rows = tensor.expand_shape %mask [[0, 1]] output_shape [1, {s}]"
                f" : tensor<{s}x{mask_elem}> into tensor<1x{s}x{mask_elem}>"
            )
        else:
            lead = ", ".join(str(i) for i in range(mask.rank - 1))
            mask_rows = (
                f"  %mask_rows = tensor.collapse_shape %mask [[{lead}], [{mask.rank - 1}]]"
                f" : tensor<{shape_text(mask.shape)}x{mask_elem}>"
                f" into tensor<{mb}x{s}x{mask_elem}>"
            )
    value = additive_mask(mask is not None, fill)
    function = definition(
        "decode_attention.mlir",
        name=name,
        exe=exe,
        fn=fn,
        B=b,
        KVH=kvh,
        S=s,
        E=e,
        BH=b * heads,
        BK=b * kvh,
        MB=mb,
        kv_elem=kv_elem,
        q_shape=shape_text(q.shape),
        q_sizes=", ".join(str(d) for d in q.shape),
        mask_shape=shape_text(mask_shape),
        mask_elem=mask_elem,
        mask_doc=mask_doc,
        mask_arg=mask_arg,
        mask_rows=mask_rows,
        mask_b="0" if mb == 1 else "b",
        mask_value=value,
    )
    return [executable, function]
