"""Pass ``separate-rotate-half`` (llvm-cpu): a rotary embedding's ``rotate_half`` (the last dim's
two halves swapped, one negated: ``cat([-x[..., h:], x[..., :h]], -1)``) becomes a dispatch of its
own.

Expects torch-dialect IR. For every ``torch.aten.cat`` along the last dim of two slices of one
tensor along that dim, one of them through ``torch.aten.neg`` (transformers' ``rotate_half``,
Llama's, Qwen's, Mistral's, Phi-3's, Gemma's, GPT-NeoX's rotary part), the result goes through
``iree_tensor_ext.compute_barrier.start`` on its way to its users::

    %r = cat([neg(slice(%x, -1, h, end)), slice(%x, -1, 0, h)], -1)
    → to_builtin_tensor → compute_barrier.start → from_builtin_tensor → q * cos + r * sin

Why: IREE fuses the concatenation into its consumer (``q * cos + rotate_half(q) * sin``,
with the heads' transpose) as a ``tensor.extract`` at ``[..., 1 - i / h, i % h]``, which its
vectorizer cannot prove contiguous and so gathers element by element; with a dynamic sequence
length the gather ran about 5x the static dispatch's time (the decoder sample's query rotation
at 32 x 64 tokens: 3.4-6.4 ms against 0.7 ms static, AVX512-BF16 host). Apart, the concatenation
is a dispatch over the two halves, and the consumer reads the rotated tensor as a plain operand
(benchmarks/RESULTS.md has the figures). Values are unchanged: the pass only moves a dispatch
boundary (the negation and copies are exact).

The pipeline runs it for llvm-cpu artifacts (``compiler.pipeline.core.lower_and_compile``).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.types import tensor_info
from passes.ir.walk import ops_where


def _last_dim(value: ir.Value, rank: int) -> bool:
    """Whether ``value`` (a ``torch.constant.int``) names the last of ``rank`` dims."""
    dim = torch_ops.constant_number(value)
    return dim is not None and int(dim) in (-1, rank - 1)


def _slice_source(piece: ir.Value, rank: int) -> tuple[ir.Value, bool] | None:
    """The tensor ``piece`` slices along its last dim with step 1, and whether ``piece`` is that
    slice negated; None for anything else."""
    op = torch_ops.defining_op(piece)
    negated = op is not None and op.name == "torch.aten.neg"
    if negated:
        assert op is not None
        op = torch_ops.defining_op(op.operands[0])
    if op is None or op.name != "torch.aten.slice.Tensor":
        return None
    if not _last_dim(op.operands[1], rank) or torch_ops.constant_number(op.operands[4]) != 1:
        return None
    return op.operands[0], negated


def is_rotate_half(cat: ir.Operation) -> bool:
    """Whether ``cat`` (a ``torch.aten.cat``) joins two slices of one tensor along its last dim,
    exactly one of them negated."""
    info = tensor_info(cat.results[0].type, dynamic=True)
    pieces = torch_ops.defining_op(cat.operands[0])
    if info is None or pieces is None or pieces.name != "torch.prim.ListConstruct":
        return False
    rank = len(info.shape)
    if len(pieces.operands) != 2 or not _last_dim(cat.operands[1], rank):
        return False
    sources = [_slice_source(piece, rank) for piece in pieces.operands]
    if any(s is None for s in sources):
        return False
    (a, a_neg), (b, b_neg) = (s for s in sources if s is not None)
    return a == b and a_neg != b_neg


@register_pass
@dataclasses.dataclass(frozen=True)
class SeparateRotateHalf(ModulePass):
    name = "separate-rotate-half"

    def apply(self, module: ir.Module) -> None:
        for cat in ops_where(module.operation, lambda op: op.name == "torch.aten.cat"):
            if not is_rotate_half(cat):
                continue
            result = cat.results[0]
            uses = [(use.owner, use.operand_number) for use in result.uses]
            with ir.InsertionPoint.after(cat), cat.location:
                separated = torch_ops.through_compute_barrier(result)
            for owner, index in uses:
                owner.operands[index] = separated
