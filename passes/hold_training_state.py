"""Pass ``hold-training-state``: a training step's parameters, optimizer state and gradients
live in the module, so a call of ``@main`` and then of ``@qmlir.apply_update`` is one step.

Expects the imported training step (``compiler/training_capture.py``):

    @main(parameters..., inputs...) -> (loss, gradients...)
    @qmlir.apply_update(parameters..., gradients..., optimizer state...)
        -> (new parameters..., new optimizer state...)

``state`` names the parameters, then the optimizer's state; ``gradients`` the parameters whose
gradients ``@main`` returns (all of them, in order). Each becomes a private mutable
``util.global``: ``@qmlir.train.<name>`` holding its initial value (the model's parameters,
zeros for an optimizer's moments; zeros where the pass is given none, as in the lit tests) and
``@qmlir.grad.<name>`` (zeros). Each function loads what it took as arguments and stores what it
returned: ``@main`` then takes the inputs and returns the loss, storing the gradients;
``@qmlir.apply_update`` takes and returns nothing. Public functions move the state in and out:
``@qmlir.get_train_state() -> (state...)``, ``@qmlir.set_train_state(state...)`` and
``@qmlir.get_gradients() -> (gradients...)``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import func

from passes.base.abi import APPLY_UPDATE, GET_GRADIENTS, GET_TRAIN_STATE, SET_TRAIN_STATE
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
        """``state=l1.weight,...,adamw.step,... gradients=l1.weight,...``."""
        unknown = set(options) - {"state", "gradients"}
        if unknown:
            raise QmlirError(f"pass '{cls.name}' has no option '{sorted(unknown)[0]}'")
        names = {k: tuple(n for n in options.get(k, "").split(",") if n) for k in options}
        return cls(names.get("state", ()), names.get("gradients", ()))

    def apply(self, module: ir.Module) -> None:
        count = len(self.gradients)
        if self.state[:count] != self.gradients:
            raise QmlirError("the training state must begin with the parameters, in order")
        if self.initial and len(self.initial) != len(self.state):
            raise QmlirError(
                f"{len(self.initial)} initial values for {len(self.state)} state entries"
            )
        main, update = entry_function(module), _function(module, APPLY_UPDATE)
        _check(main, count, 1 + count, "@main")
        _check(update, len(self.state) + count, len(self.state), f"@{APPLY_UPDATE}")
        ops = NamedOpBuilder(module)
        args = [a.type for a in update.regions[0].blocks[0].arguments]
        state_types = args[:count] + args[2 * count :]
        with ir.Location.unknown():
            state = [
                self._global(ops, "train", name, t, i)
                for i, (name, t) in enumerate(zip(self.state, state_types, strict=True))
            ]
            grads = [
                self._global(ops, "grad", name, t, None)
                for name, t in zip(self.gradients, args[count : 2 * count], strict=True)
            ]
        _hold(main, state[:count], grads)
        update_args = state[:count] + grads + state[count:]
        _hold(update, update_args, state)
        _accessors(module, state, grads)

    def _global(
        self, ops: NamedOpBuilder, kind: str, name: str, vtensor: ir.Type, index: int | None
    ) -> str:
        info = tensor_info(vtensor)
        if info is None:
            raise QmlirError(f"training state '{name}' has no static tensor type ({vtensor})")
        builtin = info.builtin()
        element = ir.ShapedType(builtin).element_type
        if index is not None and self.initial:
            value = np.array(self.initial[index], dtype=np.float32, order="C")
            if list(value.shape) != list(info.shape):
                raise QmlirError(
                    f"initial value of '{name}' has shape {list(value.shape)}, "
                    f"the step takes {list(info.shape)}"
                )
            initial = ir.DenseElementsAttr.get(value, type=element)
        else:
            initial = ir.DenseElementsAttr.get_splat(builtin, ir.FloatAttr.get(element, 0.0))
        role = "gradient" if kind == "grad" else "state"
        attrs = {"name": str_attr(name), "kind": str_attr(role)}
        return ops.add_global(f"qmlir.{kind}.{name}", initial, attrs, tag=TRAIN_ATTR)


def _function(module: ir.Module, name: str) -> ir.Operation:
    for op in module.body.operations:
        attrs = op.operation.attributes
        if op.operation.name == "func.func" and ir.StringAttr(attrs["sym_name"]).value == name:
            return op.operation
    raise QmlirError(f"the module has no @{name}")


def _check(function: ir.Operation, arguments: int, results: int, name: str) -> None:
    block = function.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    if len(block.arguments) < arguments or len(ret.operands) != results:
        raise QmlirError(
            f"{name} has {len(block.arguments)} arguments and {len(ret.operands)} results, "
            f"not the training step's {arguments}+ and {results}"
        )


def _hold(function: ir.Operation, loaded: list[str], stored: list[str]) -> None:
    """``function``'s first arguments become loads of the ``loaded`` globals, and its results
    but the first (``@main``'s loss) or all (the update) stores into ``stored``."""
    block = function.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    results = list(ret.operands)
    kept = results[: len(results) - len(stored)]
    with ir.InsertionPoint.at_block_begin(block), function.location:
        for symbol, arg in zip(loaded, block.arguments, strict=False):
            info = tensor_info(arg.type)
            assert info is not None
            arg.replace_all_uses_with(
                torch_ops.from_builtin(load_global(symbol, info.builtin()), info)
            )
    with ir.InsertionPoint(ret), function.location:
        for symbol, value in zip(stored, results[len(kept) :], strict=True):
            store_global(symbol, torch_ops.to_builtin(value))
        func.ReturnOp(kept)
    ret.erase()
    for index in reversed(range(len(loaded))):
        block.erase_argument(index)
    function.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], [v.type for v in kept])
    )
    for key in ("arg_attrs", "res_attrs"):
        if key in function.attributes:
            del function.attributes[key]


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
