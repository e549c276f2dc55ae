"""The decomposed attention (``compiler/frontend/attention.py``: ``matmul → × scale → mask →
softmax → matmul``) found around a softmax, for the CPU kernels that replace it: one query
position's with static shapes (a generator's decode step: ``passes/decode_attention.py``) or
several positions' (a prefill's dynamic number, or a static one), the rest static
(``passes/prefill_attention.py``).

:func:`find_site` matches the decomposition: scores ``[B, KVH, g, T, S]`` (grouped-query
attention) or ``[B, H, T, S]`` f32, a plain scale, an i1 mask (``masked_fill`` with ``-inf``)
or an f32 one (added) the same for every head (its dims 1 but the batch's, the keys' and, in a
prefill, the query positions'), the safe softmax's ``masked_fill`` of rows closed to every key
(where the mask is given), and K and V ``[B, KVH, S, E]`` as the cache holds them (bf16 or f32).
:func:`replace_with_call` puts a kernel's call in its place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from iree.compiler import ir

from passes.ir import torch_ops
from passes.ir.types import DYNAMIC, TensorInfo, tensor_info
from passes.ir.widening import widened_from

RESHAPES = ("torch.aten.view", "torch.aten._unsafe_view", "torch.aten.reshape")
WIDENINGS = ("torch.aten._to_copy", "torch.prims.convert_element_type")
NEG_INF = float("-inf")


@dataclasses.dataclass(frozen=True)
class AttentionSite:
    q: ir.Value  # f32 [B, KVH, g x T, E] (grouped) or [B, H, T, E]; T = 1: [B, KVH, g, E]
    k: (
        ir.Value
    )  # [B, KVH, S, E]: a decode step's bf16 as the cache holds it or f32; a prefill's f32
    v: ir.Value
    mask: ir.Value | None  # masked_fill's (i1, True = masked) or the added f32 mask
    fill: bool  # a masked_fill mask (else added)
    factor: float
    out: ir.Operation  # the matmul of the softmax by V, whose result the call replaces
    heads: int  # query heads
    per_position: int  # a prefill's: q's rows a position (the group, or 1); 0: a decode step

    def shapes(self) -> tuple[TensorInfo, TensorInfo, TensorInfo | None]:
        """q's, K's and the mask's types (a prefill's with their dynamic dims)."""
        q = tensor_info(self.q.type, dynamic=True)
        k = tensor_info(self.k.type, dynamic=True)
        mask = None if self.mask is None else tensor_info(self.mask.type, dynamic=True)
        assert q is not None and k is not None
        return q, k, mask


def _only_use(value: ir.Value) -> ir.Operation | None:
    uses = list(value.uses)
    return uses[0].owner if len(uses) == 1 else None


def _info(value: ir.Value) -> TensorInfo | None:
    info = tensor_info(value.type, dynamic=True)
    return info if info is not None and info.is_static else None


def _dynamic_at(value: ir.Value, *dims: int) -> TensorInfo | None:
    """``value``'s type, static but (maybe) for its dims ``dims`` (negative: from the end)."""
    info = tensor_info(value.type, dynamic=True)
    if info is None:
        return None
    allowed = {d % info.rank for d in dims if -info.rank <= d < info.rank}
    dynamic = {i for i, d in enumerate(info.shape) if d == DYNAMIC}
    return info if dynamic <= allowed else None


def _cache(value: ir.Value) -> ir.Value:
    """The bf16 tensor ``value`` (an f32 K or V) widens, else ``value`` itself."""
    op = torch_ops.defining_op_named(value, *WIDENINGS)
    if op is not None and _dtype(op.operands[0]) == "bf16":
        return op.operands[0]
    op = torch_ops.defining_op_named(value, "torch_c.from_builtin_tensor")
    if op is not None:
        source = widened_from(op.operands[0])
        if source is not None:
            return source
    return value


def holds_bf16(value: ir.Value) -> bool:
    """Whether ``value`` (f32) is a bf16 tensor widened, through views and copies (the
    decomposition's ``query.float()`` reshaped into grouped rows, a clone and a view;
    ``key.float()``): every value a bf16's."""
    while (
        view := torch_ops.defining_op_named(
            value, *RESHAPES, "torch.aten.clone", "torch.aten.contiguous"
        )
    ) is not None:
        value = view.operands[0]
    return _dtype(_cache(value)) == "bf16"


def find_site(softmax: ir.Operation) -> AttentionSite | None:
    """The decomposed attention around ``softmax``, if it is one query position's with static
    shapes (a decode step) or several positions' (a dynamic number: a prefill) with the rest
    static, a plain scale and a mask the kernels take."""
    scores = _dynamic_at(softmax.results[0], 0, -2, -1)
    dim = torch_ops.constant_number(softmax.operands[1])
    if scores is None or scores.dtype != "f32" or scores.rank not in (4, 5):
        return None
    if dim not in (-1, scores.rank - 1):
        return None
    prefill = scores.shape[-2] != 1  # several query positions (a dynamic number: a prefill)
    if not prefill and not scores.is_static:  # a decode step's kernel takes static shapes
        return None
    grouped = scores.rank == 5  # [B, KVH, g, T, S]
    x, mask, fill = softmax.operands[0], None, True
    masked = torch_ops.defining_op_named(
        x, "torch.aten.masked_fill.Scalar", "torch.aten.add.Tensor"
    )
    if masked is not None:
        x, mask = masked.operands[0], masked.operands[1]
        fill = masked.name == "torch.aten.masked_fill.Scalar"
        if torch_ops.constant_number(masked.operands[2]) != (NEG_INF if fill else 1.0):
            return None
        if not _mask_fits(mask, scores, fill):
            return None
    if grouped:
        view = torch_ops.defining_op_named(x, *RESHAPES)
        if view is None:
            return None
        x = view.operands[0]
    scale = torch_ops.defining_op_named(x, "torch.aten.mul.Scalar")
    factor = None if scale is None else torch_ops.constant_number(scale.operands[1])
    product = (
        None
        if scale is None
        else torch_ops.defining_op_named(scale.operands[0], "torch.aten.matmul")
    )
    if factor is None or product is None:
        return None
    q, kt = product.operands
    transpose = torch_ops.defining_op_named(kt, "torch.aten.transpose.int")
    if transpose is None:
        return None
    k = transpose.operands[0]
    dims = {torch_ops.constant_number(o) for o in transpose.operands[1:]}
    # a prefill's batch, positions and keys may be dynamic (an encoder compiled with --dynamic)
    q_info = _dynamic_at(q, 0, 2) if prefill else _info(q)
    k_info = _dynamic_at(k, 0, 2) if prefill else _info(k)
    if q_info is None or k_info is None or q_info.dtype != "f32" or k_info.dtype != "f32":
        return None
    if dims not in ({-2.0, -1.0}, {2.0, 3.0}) or q_info.rank != 4 or k_info.rank != 4:
        return None
    b, kvh, s, e = k_info.shape
    per_position = scores.shape[2] if grouped else 1  # q's rows a position (its dim 2)
    heads = q_info.shape[1] * per_position if prefill else q_info.shape[1] * q_info.shape[2]
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
    v_info = _dynamic_at(out.operands[1], 0, 2) if prefill else _info(out.operands[1])
    out_info = _dynamic_at(out.results[0], 0, 2) if prefill else _info(out.results[0])
    if v_info is None or v_info.shape != k_info.shape or v_info.dtype != "f32":
        return None
    if out_info is None or out_info.shape != q_info.shape:
        return None
    # a decode step's kernel reads K and V as the cache holds them; a prefill's takes them as
    # the decomposition widened them (it transposes and pads them, once a call, anyway)
    k_src, v_src = (k, out.operands[1]) if prefill else (_cache(k), _cache(out.operands[1]))
    if _dtype(k_src) != _dtype(v_src):
        k_src, v_src = k, out.operands[1]
    return AttentionSite(
        q, k_src, v_src, mask, fill, factor, out, heads, per_position if prefill else 0
    )


def _dtype(value: ir.Value) -> str | None:
    info = tensor_info(value.type, dynamic=True)
    return None if info is None else info.dtype


def _closed_rows_fill(
    op: ir.Operation, probabilities: ir.Value, mask: ir.Value, fill: bool
) -> bool:
    """Whether ``op`` is the decomposition's ``masked_fill(probabilities, closed, 0)`` with
    ``closed`` the rows ``mask`` closes to every key (``all`` over the keys of the same
    ``logical_not`` as the masked_fill's, or of the added mask ``== -inf``): what the kernel
    gives for such a row (``compiler/frontend/attention.py``)."""
    if op.operands[0] != probabilities or torch_ops.constant_number(op.operands[2]) != 0.0:
        return False
    every = torch_ops.defining_op_named(op.operands[1], "torch.aten.all.dim")
    if every is None or torch_ops.constant_number(every.operands[1]) != -1.0:
        return False
    source = every.operands[0]
    if fill:
        closed, kept = (
            torch_ops.defining_op_named(source, "torch.aten.logical_not"),
            torch_ops.defining_op_named(mask, "torch.aten.logical_not"),
        )
        return source == mask or (
            closed is not None and kept is not None and closed.operands[0] == kept.operands[0]
        )
    equal = torch_ops.defining_op_named(source, "torch.aten.eq.Scalar")
    if equal is None or torch_ops.constant_number(equal.operands[1]) != NEG_INF:
        return False
    widened = torch_ops.defining_op_named(mask, "torch.aten.to.dtype", "torch.aten._to_copy")
    return equal.operands[0] == mask or (
        widened is not None and widened.operands[0] == equal.operands[0]
    )


def _mask_fits(mask: ir.Value, scores: TensorInfo, fill: bool) -> bool:
    """A mask the kernel takes: i1 (masked_fill) or f32 (added), over the keys (its last dim
    the scores'), the same for every head (its other dims 1, but the batch and, in a prefill,
    the query positions')."""
    prefill = scores.shape[-2] != 1
    info = _dynamic_at(mask, 0, -2, -1) if prefill else _info(mask)
    if info is None or info.dtype != ("i1" if fill else "f32") or info.rank > scores.rank:
        return False
    if info.shape[-1] != scores.shape[-1]:
        return False
    lead = info.shape[:-1]
    batch_dim = info.rank == scores.rank
    inner = lead[1:] if batch_dim else lead
    if prefill and inner:  # its positions' dim: the scores' (T) or broadcast over them
        inner = inner[:-1]
    if any(d != 1 for d in inner):
        return False
    return not batch_dim or lead[0] in (1, scores.shape[0])


def replace_with_call(
    module: ir.Module,
    names: set[str],
    site: AttentionSite,
    prefix: str,
    definitions: Callable[[str, AttentionSite], list[str]],
) -> None:
    """The attention at ``site`` as a call of ``@<prefix><shapes>``, its result replacing the
    output matmul's; the function and its executable (``definitions(name, site)``: their
    texts) are added to the module once per name."""
    q, k, mask = site.shapes()
    mask_key = "nomask" if mask is None else f"{'fill' if site.fill else 'add'}{_dims(mask.shape)}"
    name = f"{prefix}{_dims(q.shape)}.{_dims(k.shape)}{k.dtype}.{mask_key}"
    if name not in names:
        for text in definitions(name, site):
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


def additive_mask(given: bool, fill: bool) -> str:
    """The body line of a kernel's mask conversion: ``%a``, the additive mask's value for the
    element ``%m`` (an i1 True: masked, -inf; an f32: added as it is; none given: a false
    i1), from ``%neg_inf`` and ``%zero``."""
    if not given or fill:
        return "    %a = arith.select %m, %neg_inf, %zero : f32"
    return "    %a = arith.addf %m, %zero : f32"


def _dims(shape: tuple[int, ...]) -> str:
    """``shape`` for a symbol name: its dynamic dims as ``D``."""
    return "x".join("D" if d == DYNAMIC else str(d) for d in shape)
