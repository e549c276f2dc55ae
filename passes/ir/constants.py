"""Constant chains of the IR: the values a weight literal or folded constant reaches an op
with, and erasing what is left of them."""

from __future__ import annotations

import numpy as np
from iree.compiler import ir

from passes.ir.elements import elements_to_numpy
from passes.ir.parameters import parameter_ref
from passes.ir.torch_ops import defining_op

# Ops that may be erased once nothing uses them (pure producers of the constant chains).
_ERASABLE = (
    "torch.vtensor.literal",
    "torch.prims.convert_element_type",
    "torch_c.to_builtin_tensor",
    "torch.constant.int",
    "arith.constant",
    "linalg.transpose",
    "tensor.empty",
)


def constant_value(value: ir.Value, known: dict[ir.Value, np.ndarray]) -> np.ndarray | None:
    """``value``'s elements where it is a dense constant, through ``to_builtin_tensor``,
    ``linalg.transpose`` and a cast to f32; ``known``: values found so far (updated)."""
    if value in known:
        return known[value]
    op = defining_op(value)
    if op is None:
        return None
    result: np.ndarray | None = None
    if parameter_ref(op) is not None:  # a weight held outside the IR: no values here
        return None
    if op.name in ("torch.vtensor.literal", "arith.constant"):
        result = elements_to_numpy(op.attributes["value"])
    elif op.name == "torch_c.to_builtin_tensor":
        result = constant_value(op.operands[0], known)
    elif op.name == "linalg.transpose":
        source = constant_value(op.operands[0], known)
        if source is not None:
            permutation = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
            result = np.ascontiguousarray(np.transpose(source, permutation))
    elif op.name == "torch.prims.convert_element_type":
        source = constant_value(op.operands[0], known)
        if source is not None and "f32" in str(value.type):
            result = source.astype(np.float32)
    if result is not None:
        known[value] = result
    return result


def make_constant(array: np.ndarray, result_type: ir.Type) -> ir.Value:
    shaped = ir.ShapedType(result_type)
    shape = list(shaped.shape)
    data = np.ascontiguousarray(array.view(np.int8) if str(shaped.element_type) == "i8" else array)
    attr = ir.DenseElementsAttr.get(data.reshape(shape), type=shaped.element_type, shape=shape)
    return ir.Operation.create(
        "arith.constant", results=[result_type], attributes={"value": attr}
    ).result


def erase_dead(module: ir.Module) -> None:
    while dead := dead_ops(module):
        for op in dead:
            op.erase()


def dead_ops(module: ir.Module) -> list[ir.Operation]:
    dead: list[ir.Operation] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name in _ERASABLE and all(_unused(r) for r in op.results):
            dead.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    return dead


def _unused(value: ir.Value) -> bool:
    return next(iter(value.uses), None) is None
