"""Pass ``fold-weight-views``: a weight reached through views is a weight literal again.

The recipe pass quantizes a matmul one of whose operands is a ``torch.vtensor.literal`` (a
weight); the rest are activations. ``einsum`` (decomposed before import into permutes, views
and ``bmm``), ``x @ w.t()`` and the like reach their weight through shape-only ops, so the
matmul's operand is no literal and the layer stayed in high precision ("no operand is a
weight"). This pass evaluates those ops on the literal at compile time, in program order (a
chain folds op by op), and gives their users a literal of the result's shape and values:

``unsqueeze``, ``squeeze.dim``, ``view``, ``reshape``, ``_unsafe_view``, ``flatten.using_ints``
(row-major reshapes: the result's static shape says it all), ``permute``, ``transpose.int``,
``t``, ``numpy_T``, and ``select.int`` of the leading dim at a constant index (one expert's
matrix of a mixture-of-experts layer's ``[experts, out, in]`` weight,
``compiler/frontend/moe.py``).

A placeholder literal (a weight held outside the IR, ``passes/ir/parameters.py``) folds to a
placeholder of the same tensor with the view added to its steps.

Runs before the recipe pass. Leaves an op whose operand is not a literal, whose dims are not
constants, or whose result is not static; the original literal stays where it has other users
(the folded copy is what the matmul reads, and what the recipe quantizes).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir.elements import elements_to_numpy, numpy_to_literal
from passes.ir.parameters import ParameterRef, Step, parameter_ref, placeholder_literal
from passes.ir.torch_ops import (
    PERMUTES,
    RESHAPES,
    constant_ints,
    constant_number,
    defining_op,
    is_literal,
)
from passes.ir.types import tensor_info
from passes.ir.walk import ops_where


def _axes(op: ir.Operation, rank: int) -> list[int] | None:
    """The permutation a permute-like ``op`` applies to a tensor of ``rank`` dims."""
    if op.name in ("torch.aten.t", "torch.aten.numpy_T"):
        return list(reversed(range(rank)))
    if op.name == "torch.aten.permute":
        dims = constant_ints(op.operands[1])
        return None if dims is None else [d % rank for d in dims]
    first, second = (constant_number(v) for v in op.operands[1:3])
    if first is None or second is None:
        return None
    axes = list(range(rank))
    a, b = int(first) % rank, int(second) % rank
    axes[a], axes[b] = axes[b], axes[a]
    return axes


SELECT = "torch.aten.select.int"
VIEWS = (*RESHAPES, *PERMUTES, SELECT)


def _leading_index(op: ir.Operation, rank: int) -> int | None:
    """The index a ``select.int`` takes along the leading dim (None: another dim, or not a
    constant)."""
    dim, index = (constant_number(v) for v in op.operands[1:3])
    if dim is None or index is None or int(dim) % rank != 0:
        return None
    return int(index)


def folded(op: ir.Operation) -> np.ndarray | ParameterRef | None:
    """The values of ``op``'s result, where ``op`` is a view of a weight literal (a parameter
    with the view as its last steps, where the literal is a placeholder)."""
    if op.name not in VIEWS or not is_literal(op.operands[0]):
        return None
    out = tensor_info(op.results[0].type)
    source_info = tensor_info(op.operands[0].type)
    if out is None or source_info is None:
        return None
    source = defining_op(op.operands[0])
    assert source is not None
    steps = [Step("reshape", out.shape)]
    if op.name == SELECT:
        index, count = _leading_index(op, source_info.rank), source_info.shape[0]
        if index is None or not -count <= index < count:
            return None
        steps = [Step("index", (index % count,))]
    elif op.name in PERMUTES:
        axes = _axes(op, source_info.rank)
        if axes is None:
            return None
        steps.insert(0, Step("permute", tuple(axes)))
    ref = parameter_ref(source)
    if ref is not None:
        for step in steps:
            ref = ref.then(step)
        return ref
    values = elements_to_numpy(source.attributes["value"])
    for step in steps:
        values = step.apply(values)
    return values


@register_pass
@dataclasses.dataclass(frozen=True)
class FoldWeightViews(ModulePass):
    name = "fold-weight-views"

    def apply(self, module: ir.Module) -> None:
        ops = ops_where(module.operation, lambda op: op.name in VIEWS)
        for op in ops:  # program order: a chain's next op sees this one's literal
            values = folded(op)
            if values is None:
                continue
            out = tensor_info(op.results[0].type)
            assert out is not None
            with ir.InsertionPoint(op), op.location:
                literal = (
                    placeholder_literal(values, out)
                    if isinstance(values, ParameterRef)
                    else numpy_to_literal(values, out.dtype)
                )
            op.results[0].replace_all_uses_with(literal)
            source = defining_op(op.operands[0])
            op.erase()
            if source is not None and not list(source.results[0].uses):
                source.erase()
