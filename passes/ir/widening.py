"""bf16 tensors widened to f32 exactly, by their bits, in a form IREE neither folds into a GEMM nor
keeps from hoisting (``widen-bf16-matmuls``; ``decode-gemv`` sees a weight through it)."""

from __future__ import annotations

import string
from pathlib import Path

from iree.compiler import ir

from passes.ir import torch_ops
from passes.ir.functions import add_function, function_names
from passes.ir.named_ops import variant_suffix
from passes.ir.types import DYNAMIC, tensor_info

TEMPLATE = string.Template((Path(__file__).parent / "templates" / "widen_bf16.mlir").read_text())
WIDEN_PREFIX = "qmlir.widen_bf16."


class Widener:
    """Widens bf16 tensors to f32 by their bits, one ``func.func private`` per tensor type: a
    ``linalg.generic`` of scalar ``arith.bitcast``s (a ``tensor.bitcast`` between them, what
    ``torch.aten.view.dtype`` becomes, is not hoisted out of a weight's decode by IREE when the
    weight is a parameter)."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self.functions = function_names(module)

    def widen(self, value: ir.Value) -> ir.Value:
        """``value`` (a bf16 vtensor) as an f32 vtensor, exactly; inserted at the current point."""
        info = tensor_info(value.type, dynamic=True)
        assert info is not None
        builtin = torch_ops.to_builtin(value)
        wide = info.with_dtype("f32")
        name = self._function(builtin.type, wide.builtin())
        call = ir.Operation.create(
            "func.call",
            results=[wide.builtin()],
            operands=[builtin],
            attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
        )
        return torch_ops.from_builtin(call.result, wide)

    def _function(self, narrow: ir.Type, wide: ir.Type) -> str:
        info = tensor_info(narrow, dynamic=True)
        assert info is not None
        name = WIDEN_PREFIX + variant_suffix(info.shape)
        if name in self.functions:
            return name
        rank = info.rank
        dynamic = [i for i, d in enumerate(info.shape) if d == DYNAMIC]
        dims = "\n".join(
            f"  %c{i} = arith.constant {i} : index\n  %d{i} = tensor.dim %x, %c{i} : {narrow}"
            for i in dynamic
        )
        loops = ", ".join(f"d{i}" for i in range(rank))
        definition = TEMPLATE.substitute(
            name=name,
            in_type=narrow,
            out_type=wide,
            dims=dims,
            dim_values=", ".join(f"%d{i}" for i in dynamic),
            map=f"affine_map<({loops}) -> ({loops})>",
            iterators=", ".join(['"parallel"'] * rank),
        )
        add_function(self.module, self.functions, name, definition)
        return name


def widened_from(value: ir.Value) -> ir.Value | None:
    """The bf16 vtensor a :class:`Widener` widened into ``value`` (a builtin tensor), else None."""
    op = torch_ops.defining_op(value)
    if op is None or op.name != "func.call":
        return None
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    if not callee.startswith(WIDEN_PREFIX):
        return None
    source = torch_ops.defining_op(op.operands[0])
    return (
        source.operands[0]
        if source is not None and source.name == "torch_c.to_builtin_tensor"
        else None
    )


# where a weight comes from: a literal (inline) or a module global (a parameter)
WEIGHT_SOURCES = ("torch.vtensor.literal", "util.global.load")


def is_weight(value: ir.Value) -> bool:
    """Whether ``value`` is a weight: a literal or a global, through torch's conversions and
    a bf16 weight's widening (``decode-gemv``, ``bf16-decode-gemv``)."""
    op = torch_ops.defining_op(value)
    while op is not None and op.name == "torch_c.from_builtin_tensor":
        widened = widened_from(op.operands[0])  # a bf16 weight widened (widen-bf16-matmuls)
        op = torch_ops.defining_op(op.operands[0] if widened is None else widened)
    return op is not None and op.name in WEIGHT_SOURCES
