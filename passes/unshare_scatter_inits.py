"""Pass ``unshare-scatter-inits``: a scatter into a constant-filled tensor with dynamic dims
gets an init of its own, the fill plus a ``-0`` computed from the scatter's indices.

IREE 3.13 miscompiles scatters (``iree_linalg_ext.scatter``, from ``index_put``, ``scatter*``,
``index_add``) whose inits are the same fill with dynamic dims: two layers' ``zeros_like`` of one
shape are one value after CSE, both scatters update it in place, and one result holds both
layers' writes (found in MoE layers, ``compiler/frontend/moe.py``; ``docs/maintaining.md``).
Two different fills, a fill used once, a static shape and a computed (non-constant) init are
all compiled right.

For each such scatter whose first operand (the tensor written into) comes from a filling op
(``zeros_like``, ``full``, ``new_zeros``, ...) and has a dynamic dim, the pass adds to that
operand ``-|sum(float(indices) * 0)|``: ``-0`` (the additive identity of every float, +0
included; 0 for integers), but computed from data, so no fold or CSE makes two of them one.
The values written are unchanged; the cost is one elementwise pass over the init and a
reduction over the indices.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.types import DYNAMIC, TORCH_DTYPE_CODES, tensor_info
from passes.ir.walk import ops_where

# scatter op -> the position of its indices operand (a tensor, or index_put's list of them)
SCATTERS = {
    "torch.aten.index_put": 1,
    "torch.aten.index_put.hacked_twin": 1,
    "torch.aten._index_put_impl": 1,
    "torch.aten.scatter.src": 2,
    "torch.aten.scatter.value": 2,
    "torch.aten.scatter_add": 2,
    "torch.aten.scatter_reduce.two": 2,
    "torch.aten.index_add": 2,
    "torch.aten.index_copy": 2,
}
FILLS = (
    "torch.aten.zeros_like",
    "torch.aten.ones_like",
    "torch.aten.full_like",
    "torch.aten.empty_like",
    "torch.aten.zeros",
    "torch.aten.ones",
    "torch.aten.full",
    "torch.aten.empty.memory_format",
    "torch.aten.new_zeros",
    "torch.aten.new_ones",
    "torch.aten.new_full",
    "torch.aten.new_empty",
)


def _indices(op: ir.Operation) -> ir.Value | None:
    """The scatter's (first) indices tensor."""
    value = op.operands[SCATTERS[op.name]]
    if tensor_info(value.type, dynamic=True) is not None:
        return value
    listed = torch_ops.defining_op(value)
    if listed is None or listed.name != "torch.prim.ListConstruct":
        return None
    tensors = [v for v in listed.operands if tensor_info(v.type, dynamic=True) is not None]
    return tensors[0] if tensors else None


def _negative_zero(indices: ir.Value, dtype: str) -> ir.Value:
    """``-|sum(float(indices) * 0)|`` as a 0-d tensor of ``dtype``."""
    info = tensor_info(indices.type, dynamic=True)
    assert info is not None
    f32 = info.with_dtype("f32")
    scalar = dataclasses.replace(f32, shape=())
    floats = torch_ops.convert_dtype(indices, "f32")
    zero = ir.Operation.create(
        "torch.constant.float",
        results=[ir.Type.parse("!torch.float")],
        attributes={"value": ir.FloatAttr.get(ir.F64Type.get(), 0.0)},
    ).result
    none = ir.Operation.create("torch.constant.none", results=[ir.Type.parse("!torch.none")])
    value = ir.Operation.create(
        "torch.aten.mul.Scalar", results=[f32.vtensor()], operands=[floats, zero]
    ).result
    value = ir.Operation.create(
        "torch.aten.sum", results=[scalar.vtensor()], operands=[value, none.result]
    ).result
    for name in ("torch.aten.abs", "torch.aten.neg"):
        value = ir.Operation.create(name, results=[scalar.vtensor()], operands=[value]).result
    return torch_ops.convert_dtype(value, dtype)


@register_pass
@dataclasses.dataclass(frozen=True)
class UnshareScatterInits(ModulePass):
    name = "unshare-scatter-inits"

    def apply(self, module: ir.Module) -> None:
        found = ops_where(module.operation, lambda op: op.name in SCATTERS)
        for op in found:
            init = op.operands[0]
            info = tensor_info(init.type, dynamic=True)
            fill = torch_ops.defining_op(init)
            if info is None or DYNAMIC not in info.shape or fill is None:
                continue
            if fill.name not in FILLS or info.dtype not in TORCH_DTYPE_CODES:
                continue
            indices = _indices(op)
            if indices is None:
                continue
            with ir.InsertionPoint(op), op.location:
                own = torch_ops.add_tensors(init, _negative_zero(indices, info.dtype))
            op.operands[0] = own
