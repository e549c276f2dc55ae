"""Small builders and matchers for the torch-dialect ops the passes touch."""

from __future__ import annotations

from iree.compiler import ir

from passes.ir_types import TORCH_DTYPE_CODES, TensorInfo, tensor_info


def defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def is_literal(value: ir.Value) -> bool:
    op = defining_op(value)
    return op is not None and op.name == "torch.vtensor.literal"


def is_none(value: ir.Value) -> bool:
    op = defining_op(value)
    return op is not None and op.name == "torch.constant.none"


def constant_number(value: ir.Value) -> float | None:
    """Value of a ``torch.constant.int``/``torch.constant.float``, else None."""
    op = defining_op(value)
    if op is None or op.name not in ("torch.constant.int", "torch.constant.float"):
        return None
    attr = op.attributes["value"]
    if op.name == "torch.constant.int":
        return float(ir.IntegerAttr(attr).value)
    return ir.FloatAttr(attr).value


def constant_int(value: int) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    return ir.Operation.create(
        "torch.constant.int",
        results=[ir.Type.parse("!torch.int")],
        attributes={"value": ir.IntegerAttr.get(i64, value)},
    ).result


def convert_dtype(value: ir.Value, dtype: str) -> ir.Value:
    """``torch.prims.convert_element_type`` unless ``value`` already has ``dtype``."""
    info = tensor_info(value.type)
    assert info is not None
    if info.dtype == dtype:
        return value
    return ir.Operation.create(
        "torch.prims.convert_element_type",
        results=[info.with_dtype(dtype).vtensor()],
        operands=[value, constant_int(TORCH_DTYPE_CODES[dtype])],
    ).result


def to_builtin(value: ir.Value) -> ir.Value:
    info = tensor_info(value.type)
    assert info is not None
    return ir.Operation.create(
        "torch_c.to_builtin_tensor", results=[info.builtin()], operands=[value]
    ).result


def from_builtin(value: ir.Value, info: TensorInfo) -> ir.Value:
    return ir.Operation.create(
        "torch_c.from_builtin_tensor", results=[info.vtensor()], operands=[value]
    ).result


def add_tensors(lhs: ir.Value, rhs: ir.Value) -> ir.Value:
    return ir.Operation.create(
        "torch.aten.add.Tensor", results=[lhs.type], operands=[lhs, rhs, constant_int(1)]
    ).result
