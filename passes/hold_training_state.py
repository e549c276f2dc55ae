"""Pass ``hold-training-state``: a training step's parameters and optimizer state live in the
module, so one call of ``@main`` is one step.

Expects the imported training step (``compiler/training_capture.py``):

    @main(state..., inputs...) -> (loss, new state..., gradients...)

where ``state`` names the leading arguments (the parameters, then the optimizer's state) and the
last ``gradients`` results are the parameters' gradients. Each state argument becomes a private
mutable ``util.global @qmlir.train.<name>`` holding its initial value (the model's parameters,
zeros for an optimizer's moments; zeros where the pass is given none, as in the lit tests),
loaded where ``@main`` read the argument; each new value is stored back before ``@main``
returns, each gradient into ``@qmlir.grad.<name>``. ``@main`` then takes the inputs and returns
the loss. Public functions move the state in and out: ``@qmlir.get_train_state() -> (state...)``,
``@qmlir.set_train_state(state...)`` and ``@qmlir.get_gradients() -> (gradients...)``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import func

from passes.base.abi import GET_GRADIENTS, GET_TRAIN_STATE, SET_TRAIN_STATE
from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.named_ops import (
    NamedOpBuilder,
    entry_function,
    load_global,
    store_global,
    str_attr,
)
from passes.ir.types import tensor_info

TRAIN_ATTR = "qmlir.train"


@register_pass
@dataclasses.dataclass(frozen=True)
class HoldTrainingState(ModulePass):
    name = "hold-training-state"

    state: tuple[str, ...] = ()
    gradients: tuple[str, ...] = ()
    initial: tuple[np.ndarray, ...] = ()  # one per state entry; empty: zeros

    @classmethod
    def from_options(cls, options: dict[str, str]) -> HoldTrainingState:
        """``state=l1.weight,...,adam.l1.weight.exp_avg gradients=l1.weight,...``."""
        unknown = set(options) - {"state", "gradients"}
        if unknown:
            raise QmlirError(f"pass '{cls.name}' has no option '{sorted(unknown)[0]}'")
        names = {k: tuple(n for n in options.get(k, "").split(",") if n) for k in options}
        return cls(names.get("state", ()), names.get("gradients", ()))

    def apply(self, module: ir.Module) -> None:
        entry = entry_function(module)
        block = entry.regions[0].blocks[0]
        count = len(self.state)
        if self.initial and len(self.initial) != count:
            raise QmlirError(f"{len(self.initial)} initial values for {count} state entries")
        ret = block.operations[len(block.operations) - 1]
        results = list(ret.operands)
        if len(block.arguments) < count or len(results) != 1 + count + len(self.gradients):
            raise QmlirError(
                f"@main has {len(block.arguments)} arguments and {len(results)} results: a "
                f"training step with {count} state entries and {len(self.gradients)} gradients "
                f"returns {1 + count + len(self.gradients)}"
            )
        with entry.location:
            results[1 + count :] = [_isolated(block, g) for g in results[1 + count :]]
        ops = NamedOpBuilder(module)
        with ir.Location.unknown():
            state_globals, grad_globals = self._globals(ops, block, results[1 + count :])
        with ir.InsertionPoint.at_block_begin(block), entry.location:
            for symbol, arg in zip(state_globals, block.arguments, strict=False):
                info = tensor_info(arg.type)
                assert info is not None
                arg.replace_all_uses_with(
                    torch_ops.from_builtin(load_global(symbol, info.builtin()), info)
                )
        with ir.InsertionPoint(ret), entry.location:
            for symbol, value in zip(state_globals + grad_globals, results[1:], strict=True):
                store_global(symbol, torch_ops.to_builtin(value))
            func.ReturnOp([results[0]])
        ret.erase()
        for index in reversed(range(count)):
            block.erase_argument(index)
        inputs = [arg.type for arg in block.arguments]
        entry.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(inputs, [results[0].type])
        )
        for key in ("arg_attrs", "res_attrs"):
            if key in entry.attributes:
                del entry.attributes[key]
        _accessors(module, state_globals, grad_globals)

    def _globals(
        self, ops: NamedOpBuilder, block: ir.Block, gradients: list[ir.Value]
    ) -> tuple[list[str], list[str]]:
        state = [
            self._global(ops, f"qmlir.train.{name}", "state", name, arg.type, i)
            for i, (name, arg) in enumerate(zip(self.state, block.arguments, strict=False))
        ]
        grads = [
            self._global(ops, f"qmlir.grad.{name}", "gradient", name, value.type, None)
            for name, value in zip(self.gradients, gradients, strict=True)
        ]
        return state, grads

    def _global(
        self,
        ops: NamedOpBuilder,
        symbol: str,
        kind: str,
        name: str,
        vtensor: ir.Type,
        index: int | None,
    ) -> str:
        info = tensor_info(vtensor)
        if info is None:
            raise QmlirError(f"training state '{name}' has no static tensor type ({vtensor})")
        builtin = info.builtin()
        if index is not None and self.initial:
            value = np.array(self.initial[index], dtype=np.float32, order="C")
            if list(value.shape) != list(info.shape):
                raise QmlirError(
                    f"initial value of '{name}' has shape {list(value.shape)}, "
                    f"@main takes {list(info.shape)}"
                )
            initial = ir.DenseElementsAttr.get(value, type=ir.ShapedType(builtin).element_type)
        else:
            zero = ir.FloatAttr.get(ir.ShapedType(builtin).element_type, 0.0)
            initial = ir.DenseElementsAttr.get_splat(builtin, zero)
        return ops.add_global(
            symbol, initial, {"name": str_attr(name), "kind": str_attr(kind)}, tag=TRAIN_ATTR
        )


def _isolated(block: ir.Block, gradient: ir.Value) -> ir.Value:
    """``gradient`` behind a ``util.optimization_barrier``, for every user but the return: the
    optimizer's update then runs in dispatches of its own. Fused into the wgrad GEMM's dispatch
    (a data-tiled matmul with its unpack and several elementwise results), IREE's llvm-cpu
    backend fails to vectorize it ("operations with large vector sizes") at width 1024."""
    info = tensor_info(gradient.type)
    assert info is not None
    users = [(u.owner, u.operand_number) for u in gradient.uses if u.owner.name != "func.return"]
    owners = [owner for owner, _ in users]
    first = next(op for op in block.operations if op in owners or op.name == "func.return")
    with ir.InsertionPoint(first):
        builtin = torch_ops.to_builtin(gradient)
        barrier = ir.Operation.create(
            "util.optimization_barrier", results=[builtin.type], operands=[builtin]
        ).result
        isolated = torch_ops.from_builtin(barrier, info)
    for owner, index in users:
        owner.operands[index] = isolated
    return isolated


def _accessors(module: ir.Module, state: list[str], gradients: list[str]) -> None:
    types = {s: _global_type(module, s) for s in state + gradients}
    with ir.InsertionPoint(module.body), ir.Location.unknown():
        for name, symbols in ((GET_TRAIN_STATE, state), (GET_GRADIENTS, gradients)):
            getter = func.FuncOp(name, ir.FunctionType.get([], [types[s] for s in symbols]))
            with ir.InsertionPoint(getter.add_entry_block()):
                func.ReturnOp([load_global(s, types[s]) for s in symbols])
        setter = func.FuncOp(SET_TRAIN_STATE, ir.FunctionType.get([types[s] for s in state], []))
        block = setter.add_entry_block()
        with ir.InsertionPoint(block):
            for symbol, arg in zip(state, block.arguments, strict=True):
                store_global(symbol, arg)
            func.ReturnOp([])


def _global_type(module: ir.Module, symbol: str) -> ir.Type:
    for op in module.body.operations:
        attrs = op.operation.attributes
        if op.operation.name == "util.global" and ir.StringAttr(attrs["sym_name"]).value == symbol:
            return ir.TypeAttr(attrs["type"]).value
    raise QmlirError(f"internal: no global @{symbol}")
