"""Batched matmuls with a constant batched weight (MoE experts), split into 2-D matmuls.

``y = bmm(x [E, M, K], w [E, K, N])`` (or ``matmul`` with several batch dims ``[B..., M, K] @
[B..., K, N]``) where ``w`` is a weight literal becomes, for each expert ``i`` (the row-major
index over the batch dims)::

    y_i = mm(select(x, i) [M, K], w_i [K, N])      named "<layer>.expert<i>"
    y   = stack([y_0, ..., y_{E-1}])               (viewed back to [B..., M, N])

with ``w_i`` a literal of its own, so each expert is exactly an ordinary 2-D matmul with a
weight: the recipe pass quantizes it as it would a Linear's (its own amax, blocks, tiles), the
fold pass quantizes ``w_i`` at compile time, and ``--exclude``/``--layer-recipe`` globs pick
experts by name. The expert matmuls carry the name in their location, where the layer map reads
it.
"""

from __future__ import annotations

import itertools

import numpy as np
from iree.compiler import ir

from passes.ir import torch_ops
from passes.ir.elements import elements_to_numpy, numpy_to_literal
from passes.ir.parameters import Step, parameter_ref, placeholder_literal
from passes.ir.types import FLOAT_DTYPES, TensorInfo, tensor_info

BATCHED_OPS = ("torch.aten.bmm", "torch.aten.matmul")


def expert_count(op: ir.Operation) -> int:
    """How many experts ``op`` splits into: 0 unless it is an activation ``[B..., M, K]`` times a
    constant weight ``[B..., K, N]`` (same batch dims, static shapes)."""
    if op.name not in BATCHED_OPS:
        return 0
    a, b = op.operands[0], op.operands[1]
    if torch_ops.is_literal(a) or not torch_ops.is_literal(b):
        return 0
    a_info, b_info = tensor_info(a.type), tensor_info(b.type)
    if a_info is None or b_info is None or b_info.rank < 3 or a_info.rank != b_info.rank:
        return 0
    if a_info.shape[:-2] != b_info.shape[:-2] or not _float_elements(b):
        return 0
    return int(np.prod(b_info.shape[:-2]))


def _float_elements(literal: ir.Value) -> bool:
    """A literal of float values held as dense elements (readable here, unlike a resource)."""
    info = tensor_info(literal.type)
    op = torch_ops.defining_op(literal)
    assert info is not None and op is not None
    return info.dtype in FLOAT_DTYPES and isinstance(op.attributes["value"], ir.DenseElementsAttr)


def expert_name(layer: str, index: int) -> str:
    """``<layer>.expert<i>``; ``expert<i>`` for a matmul of the top-level module."""
    return f"{layer}.expert{index}" if layer else f"expert{index}"


def split_experts(op: ir.Operation, names: list[str]) -> list[ir.Operation]:
    """Replaces ``op`` by one ``torch.aten.mm`` per expert (named ``names[i]``) and a stack of
    their results; returns the ``mm`` ops. The batched weight literal is erased when unused."""
    a, b = op.operands[0], op.operands[1]
    a_info, b_info = tensor_info(a.type), tensor_info(b.type)
    out_info = tensor_info(op.results[0].type)
    assert a_info is not None and b_info is not None and out_info is not None
    literal = torch_ops.defining_op(b)
    assert literal is not None
    ref = parameter_ref(literal)  # a weight held outside the IR: each expert a slice of it
    weights = elements_to_numpy(literal.attributes["value"]) if ref is None else None
    batch = b_info.shape[:-2]
    mms: list[ir.Operation] = []
    with ir.InsertionPoint(op), op.location:
        for name, index in zip(names, itertools.product(*map(range, batch)), strict=True):
            a_i = _select(a, a_info, index)
            w_i = (
                placeholder_literal(
                    ref.then(Step("index", index)), TensorInfo(b_info.shape[-2:], b_info.dtype)
                )
                if ref is not None
                else numpy_to_literal(weights[index], b_info.dtype)
            )
            y_i = TensorInfo(out_info.shape[-2:], out_info.dtype).vtensor()
            mm = ir.Operation.create(
                "torch.aten.mm",
                results=[y_i],
                operands=[a_i, w_i],
                loc=ir.Location.name(name, childLoc=op.location),
            )
            mms.append(mm)
        result = _stack([mm.result for mm in mms], out_info)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    if next(iter(b.uses), None) is None:
        literal.erase()
    return mms


def _select(value: ir.Value, info: TensorInfo, index: tuple[int, ...]) -> ir.Value:
    """``value[index]``: one ``torch.aten.select.int`` on dim 0 per batch dim."""
    shape = info.shape
    for i in index:
        shape = shape[1:]
        value = ir.Operation.create(
            "torch.aten.select.int",
            results=[TensorInfo(shape, info.dtype).vtensor()],
            operands=[value, torch_ops.constant_int(0), torch_ops.constant_int(i)],
        ).result
    return value


def _stack(values: list[ir.Value], out: TensorInfo) -> ir.Value:
    """``torch.aten.stack(values, 0)`` viewed as ``out`` (several batch dims)."""
    items = ir.Operation.create(
        "torch.prim.ListConstruct",
        results=[ir.Type.parse(f"!torch.list<{str(values[0].type).removeprefix('!torch.')}>")],
        operands=values,
    ).result
    flat = TensorInfo((len(values), *out.shape[-2:]), out.dtype)
    stacked = ir.Operation.create(
        "torch.aten.stack",
        results=[flat.vtensor()],
        operands=[items, torch_ops.constant_int(0)],
    ).result
    if flat.shape == out.shape:
        return stacked
    dims = ir.Operation.create(
        "torch.prim.ListConstruct",
        results=[ir.Type.parse("!torch.list<int>")],
        operands=[torch_ops.constant_int(d) for d in out.shape],
    ).result
    return ir.Operation.create(
        "torch.aten.view", results=[out.vtensor()], operands=[stacked, dims]
    ).result
