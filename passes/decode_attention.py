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
mask over the query heads, dynamic shapes: a prefill) stays decomposed.

The pipeline runs it where ``decode-gemv`` runs (``decode_gemv="auto"`` on a CPU with its
instructions), after ``widen-bf16-matmuls``.
"""

from __future__ import annotations

import dataclasses
import math

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.base.numbers import f32_hex
from passes.ir import torch_ops
from passes.ir.functions import function_names
from passes.ir.types import TensorInfo, shape_text, tensor_info
from passes.ir.walk import ops_where
from passes.ir.widening import widened_from
from passes.lowering.cpu.common import definition, fragment

PREFIX = "qmlir.decode_attention."
RESHAPES = ("torch.aten.view", "torch.aten._unsafe_view", "torch.aten.reshape")
WIDENINGS = ("torch.aten._to_copy", "torch.prims.convert_element_type")
NEG_INF = float("-inf")


@dataclasses.dataclass(frozen=True)
class _Site:
    q: ir.Value  # f32 [B, KVH, g, E] (grouped) or [B, H, 1, E]
    k: ir.Value  # [B, KVH, S, E], bf16 as the cache holds it or f32
    v: ir.Value
    mask: ir.Value | None  # masked_fill's (i1, True = masked) or the added f32 mask
    fill: bool  # a masked_fill mask (else added)
    factor: float
    out: ir.Operation  # the matmul of the softmax by V, whose result the call replaces


@register_pass
@dataclasses.dataclass(frozen=True)
class DecodeAttention(ModulePass):
    name = "decode-attention"

    def apply(self, module: ir.Module) -> None:
        softmaxes = ops_where(module.operation, lambda op: op.name == "torch.aten.softmax.int")
        names = function_names(module)
        for op in softmaxes:
            site = _site(op)
            if site is not None:
                _rewrite(module, names, site)


def _op(value: ir.Value, *names: str) -> ir.Operation | None:
    op = torch_ops.defining_op(value)
    return op if op is not None and op.name in names else None


def _only_use(value: ir.Value) -> ir.Operation | None:
    uses = list(value.uses)
    return uses[0].owner if len(uses) == 1 else None


def _info(value: ir.Value) -> TensorInfo | None:
    info = tensor_info(value.type, dynamic=True)
    return info if info is not None and info.is_static else None


def _cache(value: ir.Value) -> ir.Value:
    """The bf16 tensor ``value`` (an f32 K or V) widens, else ``value`` itself."""
    op = _op(value, *WIDENINGS)
    if op is not None:
        source = _info(op.operands[0])
        if source is not None and source.dtype == "bf16":
            return op.operands[0]
    op = _op(value, "torch_c.from_builtin_tensor")
    if op is not None:
        source = widened_from(op.operands[0])
        if source is not None:
            return source
    return value


def _site(softmax: ir.Operation) -> _Site | None:
    """The decomposed attention around ``softmax``, if it is one query position's with static
    shapes, a plain scale and a mask the kernel takes."""
    scores = _info(softmax.results[0])
    dim = torch_ops.constant_number(softmax.operands[1])
    if scores is None or scores.dtype != "f32" or scores.rank not in (4, 5):
        return None
    if dim not in (-1, scores.rank - 1) or scores.shape[-2] != 1:
        return None
    grouped = scores.rank == 5  # [B, KVH, g, 1, S]
    x, mask, fill = softmax.operands[0], None, True
    masked = _op(x, "torch.aten.masked_fill.Scalar", "torch.aten.add.Tensor")
    if masked is not None:
        x, mask = masked.operands[0], masked.operands[1]
        fill = masked.name == "torch.aten.masked_fill.Scalar"
        if torch_ops.constant_number(masked.operands[2]) != (NEG_INF if fill else 1.0):
            return None
        if not _mask_fits(mask, scores, fill):
            return None
    if grouped:
        view = _op(x, *RESHAPES)
        if view is None:
            return None
        x = view.operands[0]
    scale = _op(x, "torch.aten.mul.Scalar")
    factor = None if scale is None else torch_ops.constant_number(scale.operands[1])
    product = None if scale is None else _op(scale.operands[0], "torch.aten.matmul")
    if factor is None or product is None:
        return None
    q, kt = product.operands
    transpose = _op(kt, "torch.aten.transpose.int")
    if transpose is None:
        return None
    k = transpose.operands[0]
    dims = {torch_ops.constant_number(o) for o in transpose.operands[1:]}
    q_info, k_info = _info(q), _info(k)
    if q_info is None or k_info is None or q_info.dtype != "f32" or k_info.dtype != "f32":
        return None
    if dims not in ({-2.0, -1.0}, {2.0, 3.0}) or q_info.rank != 4 or k_info.rank != 4:
        return None
    b, kvh, s, e = k_info.shape
    heads = q_info.shape[1] * q_info.shape[2]
    if q_info.shape[0] != b or q_info.shape[3] != e or scores.shape[-1] != s:
        return None
    if grouped and q_info.shape[1] != kvh or not grouped and heads % kvh:
        return None
    probabilities = softmax.results[0]
    safe = _only_use(probabilities)  # the decomposition's 0 for a row closed to every key
    if safe is not None and safe.name == "torch.aten.masked_fill.Scalar":
        if mask is None or not _closed_rows_fill(safe, probabilities, mask, fill):
            return None
        probabilities = safe.results[0]
    if grouped:
        view = _only_use(probabilities)
        if view is None or view.name not in RESHAPES:
            return None
        probabilities = view.results[0]
    out = _only_use(probabilities)
    if out is None or out.name != "torch.aten.matmul" or out.operands[0] != probabilities:
        return None
    v_info = _info(out.operands[1])
    out_info = _info(out.results[0])
    if v_info is None or v_info.shape != k_info.shape or v_info.dtype != "f32":
        return None
    if out_info is None or out_info.shape != q_info.shape:
        return None
    k_src, v_src = _cache(k), _cache(out.operands[1])
    if _info(k_src).dtype != _info(v_src).dtype:  # type: ignore[union-attr]
        k_src, v_src = k, out.operands[1]
    return _Site(q, k_src, v_src, mask, fill, factor, out)


def _closed_rows_fill(
    op: ir.Operation, probabilities: ir.Value, mask: ir.Value, fill: bool
) -> bool:
    """Whether ``op`` is the decomposition's ``masked_fill(probabilities, closed, 0)`` with
    ``closed`` the rows ``mask`` closes to every key (``all`` over the keys of the same
    ``logical_not`` as the masked_fill's, or of the added mask ``== -inf``): what the kernel
    gives for such a row (``compiler/frontend/attention.py``)."""
    if op.operands[0] != probabilities or torch_ops.constant_number(op.operands[2]) != 0.0:
        return False
    every = _op(op.operands[1], "torch.aten.all.dim")
    if every is None or torch_ops.constant_number(every.operands[1]) != -1.0:
        return False
    source = every.operands[0]
    if fill:
        closed, kept = _op(source, "torch.aten.logical_not"), _op(mask, "torch.aten.logical_not")
        return source == mask or (
            closed is not None and kept is not None and closed.operands[0] == kept.operands[0]
        )
    equal = _op(source, "torch.aten.eq.Scalar")
    if equal is None or torch_ops.constant_number(equal.operands[1]) != NEG_INF:
        return False
    widened = _op(mask, "torch.aten.to.dtype", "torch.aten._to_copy")
    return equal.operands[0] == mask or (
        widened is not None and widened.operands[0] == equal.operands[0]
    )


def _mask_fits(mask: ir.Value, scores: TensorInfo, fill: bool) -> bool:
    """A mask the kernel takes: i1 (masked_fill) or f32 (added), over the keys (its last dim
    the scores'), the same for every head and query (its other dims 1, but the batch)."""
    info = _info(mask)
    if info is None or info.dtype != ("i1" if fill else "f32") or info.rank > scores.rank:
        return False
    if info.shape[-1] != scores.shape[-1]:
        return False
    lead = info.shape[:-1]
    batch_dim = info.rank == scores.rank
    inner = lead[1:] if batch_dim else lead
    if any(d != 1 for d in inner):
        return False
    return not batch_dim or lead[0] in (1, scores.shape[0])


def _rewrite(module: ir.Module, names: set[str], site: _Site) -> None:
    """The attention as the kernel's call, its result replacing the output matmul's."""
    q = _info(site.q)
    k = _info(site.k)
    mask = None if site.mask is None else _info(site.mask)
    assert q is not None and k is not None
    name = _name(q, k, mask, site.fill)
    if name not in names:
        for text in attention_definitions(name, q, k, mask, site.fill, site.factor):
            module.body.append(ir.Operation.parse(text))
        names.add(name)
    out = site.out
    with ir.InsertionPoint(out), out.location:
        operands = [torch_ops.to_builtin(v) for v in (site.q, site.k, site.v)]
        if site.mask is not None:
            operands.append(torch_ops.to_builtin(site.mask))
        call = ir.Operation.create(
            "func.call",
            results=[q.builtin()],
            operands=operands,
            attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
        )
        result = torch_ops.from_builtin(call.result, q)
        if result.type != out.results[0].type:
            result = ir.Operation.create(
                "torch.tensor_static_info_cast", results=[out.results[0].type], operands=[result]
            ).result
    out.results[0].replace_all_uses_with(result)
    torch_ops.erase_unused(out)  # the decomposition, back to what else uses its inputs


def _name(q: TensorInfo, k: TensorInfo, mask: TensorInfo | None, fill: bool) -> str:
    mask_key = "nomask" if mask is None else f"{'fill' if fill else 'add'}{shape_text(mask.shape)}"
    return f"{PREFIX}{shape_text(q.shape)}.{shape_text(k.shape)}{k.dtype}.{mask_key}"


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
    value = (
        "    %a = arith.select %m, %neg_inf, %zero : f32"
        if mask is None or fill
        else "    %a = arith.addf %m, %zero : f32"
    )
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
