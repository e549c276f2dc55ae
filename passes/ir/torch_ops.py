"""Small builders and matchers for the torch-dialect ops the passes touch."""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, iree_tensor_ext, tensor

from passes.ir.types import DYNAMIC, TORCH_DTYPE_CODES, TensorInfo, tensor_info

# shape-only ops: row-major reshapes (the result's static shape says it all) and permutations
RESHAPES = (
    "torch.aten.unsqueeze",
    "torch.aten.squeeze.dim",
    "torch.aten.view",
    "torch.aten.reshape",
    "torch.aten._unsafe_view",
    "torch.aten.flatten.using_ints",
)
PERMUTES = ("torch.aten.permute", "torch.aten.transpose.int", "torch.aten.t", "torch.aten.numpy_T")
MATMUL_OPS = (
    "torch.aten.linear",
    "torch.aten.mm",
    "torch.aten.addmm",
    "torch.aten.matmul",
    "torch.aten.bmm",
)


def defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def defining_op_named(value: ir.Value, *names: str) -> ir.Operation | None:
    """The op defining ``value`` if it is one of ``names``, else None."""
    op = defining_op(value)
    return op if op is not None and op.name in names else None


def erase_unused(op: ir.Operation) -> None:
    """``op`` if nothing uses it, then each op making its operands that it alone used (a
    literal stays: a weight). An op is erased once, when nothing uses it any more: one that
    makes two operands (``arange(n, none, none)``'s ``none``), or the operands of two erased
    ops, is never touched after its erasure."""
    pending = [op]
    while pending:
        op = pending.pop()
        if any(True for result in op.results for _ in result.uses):
            continue
        producers = [defining_op(v) for v in op.operands]
        op.erase()
        for producer in producers:
            if producer is None or producer.name == "torch.vtensor.literal":
                continue
            if not any(producer == other for other in pending):
                pending.append(producer)


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


def constant_ints(value: ir.Value) -> list[int] | None:
    """The ints of a ``torch.prim.ListConstruct`` of ``torch.constant.int``s, else None."""
    op = defining_op(value)
    if op is None or op.name != "torch.prim.ListConstruct":
        return None
    items = [constant_number(v) for v in op.operands]
    return None if any(i is None for i in items) else [int(i) for i in items if i is not None]


def constant_int(value: int) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    return ir.Operation.create(
        "torch.constant.int",
        results=[ir.Type.parse("!torch.int")],
        attributes={"value": ir.IntegerAttr.get(i64, value)},
    ).result


def convert_dtype(value: ir.Value, dtype: str) -> ir.Value:
    """``torch.prims.convert_element_type`` unless ``value`` already has ``dtype``."""
    info = tensor_info(value.type, dynamic=True)
    assert info is not None
    if info.dtype == dtype:
        return value
    return ir.Operation.create(
        "torch.prims.convert_element_type",
        results=[info.with_dtype(dtype).vtensor()],
        operands=[value, constant_int(TORCH_DTYPE_CODES[dtype])],
    ).result


def to_builtin(value: ir.Value) -> ir.Value:
    info = tensor_info(value.type, dynamic=True)
    assert info is not None
    return ir.Operation.create(
        "torch_c.to_builtin_tensor", results=[info.builtin()], operands=[value]
    ).result


def from_builtin(value: ir.Value, info: TensorInfo) -> ir.Value:
    return ir.Operation.create(
        "torch_c.from_builtin_tensor", results=[info.vtensor()], operands=[value]
    ).result


def through_compute_barrier(value: ir.Value) -> ir.Value:
    """``value`` (a torch tensor) through ``iree_tensor_ext.compute_barrier.start``, as a torch
    tensor again: IREE fuses nothing across it, and unlike ``util.optimization_barrier`` it is
    gone before IREE builds the host program (no wait between the dispatches)."""
    info = tensor_info(value.type, dynamic=True)
    assert info is not None
    builtin = to_builtin(value)
    sizes = [
        tensor.dim(builtin, arith.constant(ir.IndexType.get(), i))
        for i, d in enumerate(info.shape)
        if d == DYNAMIC
    ]
    barrier = iree_tensor_ext.compute_barrier_start(info.builtin(), builtin, sizes)
    return from_builtin(barrier, info)


def from_builtin_as(value: ir.Value, result: ir.Type) -> ir.Value:
    """``value`` (a builtin tensor) as a ``!torch.vtensor`` of ``result``'s dtype and its own
    shape, cast to ``result`` where the shapes' static dims differ (a result type the op it
    replaces kept less refined than its operands: a generator's decode function)."""
    want = tensor_info(result, dynamic=True)
    have = tensor_info(value.type, dynamic=True)
    assert want is not None and have is not None, (result, value.type)
    out = from_builtin(value, have.with_dtype(want.dtype))
    if out.type == result:
        return out
    return ir.Operation.create(
        "torch.tensor_static_info_cast", results=[result], operands=[out]
    ).result


def add_tensors(lhs: ir.Value, rhs: ir.Value) -> ir.Value:
    return ir.Operation.create(
        "torch.aten.add.Tensor", results=[lhs.type], operands=[lhs, rhs, constant_int(1)]
    ).result


def replace_linear(linear: ir.Operation, call: ir.Operation, dtype: str) -> None:
    """Replaces ``linear`` (a ``torch.aten.linear``) by ``call``'s f32 result (a builtin tensor
    of the product) plus the linear's bias (if any) widened to f32, the sum converted to
    ``dtype`` once (torch's bf16 ``linear``: one rounding after the bias), cast to the linear's
    result type where its static dims differ; the ops go before ``linear``, which is erased."""
    with ir.InsertionPoint(linear), linear.location:
        info = tensor_info(call.results[0].type, dynamic=True)
        assert info is not None
        result = from_builtin(call.results[0], info)
        if not is_none(linear.operands[2]):
            result = add_tensors(result, convert_dtype(linear.operands[2], "f32"))
        result = convert_dtype(result, dtype)
        if result.type != linear.results[0].type:
            result = ir.Operation.create(
                "torch.tensor_static_info_cast", results=[linear.results[0].type], operands=[result]
            ).result
    linear.results[0].replace_all_uses_with(result)
    linear.erase()


def collapse_to_2d(value: ir.Value) -> ir.Value:
    """``[d0, ..., dn-1, K]`` → ``[d0 * ... * dn-1, K]`` (builtin tensors; rows dynamic when a
    leading dim is); 2-D passes."""
    info = tensor_info(value.type, dynamic=True)
    assert info is not None
    if info.rank == 2:
        return value
    rows = flat_rows(info.shape[:-1])
    lead = ", ".join(str(i) for i in range(info.rank - 1))
    return ir.Operation.create(
        "tensor.collapse_shape",
        results=[TensorInfo((rows, info.shape[-1]), info.dtype).builtin()],
        operands=[value],
        attributes={"reassociation": ir.Attribute.parse(f"[[{lead}], [{info.rank - 1}]]")},
    ).result


def flat_rows(lead: tuple[int, ...]) -> int:
    """The product of ``lead`` (:data:`DYNAMIC` when one of them is)."""
    rows = 1
    for d in lead:
        if d == DYNAMIC:
            return DYNAMIC
        rows *= d
    return rows


def expand_from_2d(value: ir.Value, target: TensorInfo, like: ir.Value | None = None) -> ir.Value:
    """The inverse of :func:`collapse_to_2d` for a result of shape ``target``; its dynamic dims
    are those of ``like`` (the N-D operand that was collapsed: same leading dims)."""
    if target.rank == 2:
        return value
    lead = ", ".join(str(i) for i in range(target.rank - 1))
    sizes: list[ir.Value] = []
    for i, d in enumerate(target.shape):
        if d == DYNAMIC:
            assert like is not None and i < target.rank - 1, target
            index = ir.Operation.create(
                "arith.constant",
                results=[ir.IndexType.get()],
                attributes={"value": ir.IntegerAttr.get(ir.IndexType.get(), i)},
            ).result
            sizes.append(
                ir.Operation.create(
                    "tensor.dim", results=[ir.IndexType.get()], operands=[like, index]
                ).result
            )
    static = [ir.ShapedType.get_dynamic_size() if d == DYNAMIC else d for d in target.shape]
    return ir.Operation.create(
        "tensor.expand_shape",
        results=[target.builtin()],
        operands=[value, *sizes],
        attributes={
            "reassociation": ir.Attribute.parse(f"[[{lead}], [{target.rank - 1}]]"),
            "static_output_shape": ir.DenseI64ArrayAttr.get(static),
        },
    ).result
