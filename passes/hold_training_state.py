"""Pass ``hold-training-state``: a training step's parameters, optimizer state and gradients
live in the module, so a call of ``@main`` and then of ``@qmlir.apply_update`` is one step.

Expects the imported training step (``compiler/frontend/training_capture.py``):

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

from passes.base.abi import APPLY_UPDATE, GET_GRADIENTS, GET_TRAIN_STATE, SET_TRAIN_STATE
from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.ir.held_values import hold_in_globals
from passes.ir.named_ops import (
    NamedOpBuilder,
    add_accessors,
    entry_function,
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

    def options(self) -> dict[str, str]:
        """The names; the initial values are no text (a repro starts from zeros)."""
        named = (("state", self.state), ("gradients", self.gradients))
        return {key: ",".join(names) for key, names in named if names}

    def apply(self, module: ir.Module) -> None:
        count = len(self.gradients)
        if self.state[:count] != self.gradients:
            raise QmlirError("the training state must begin with the parameters, in order")
        if self.initial and len(self.initial) != len(self.state):
            raise QmlirError(
                f"{len(self.initial)} initial values for {len(self.state)} state entries"
            )
        main, update = entry_function(module), entry_function(module, APPLY_UPDATE)
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
        main_results = len(_results(main))
        hold_in_globals(
            main,
            dict(enumerate(state[:count])),
            {main_results - count + i: g for i, g in enumerate(grads)},
        )
        update_args = state[:count] + grads + state[count:]
        hold_in_globals(update, dict(enumerate(update_args)), dict(enumerate(state)))
        grad_types = args[count : 2 * count]
        add_accessors(module, GET_TRAIN_STATE, SET_TRAIN_STATE, _typed(state, state_types))
        add_accessors(module, GET_GRADIENTS, None, _typed(grads, grad_types))

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


def _typed(symbols: list[str], vtensors: list[ir.Type]) -> list[tuple[str, ir.Type]]:
    """Each global with the builtin tensor type it holds."""
    out = []
    for symbol, vtensor in zip(symbols, vtensors, strict=True):
        info = tensor_info(vtensor)
        assert info is not None
        out.append((symbol, info.builtin()))
    return out


def _results(function: ir.Operation) -> list[ir.Value]:
    block = function.regions[0].blocks[0]
    return list(block.operations[len(block.operations) - 1].operands)


def _check(function: ir.Operation, arguments: int, results: int, name: str) -> None:
    block = function.regions[0].blocks[0]
    returned = len(_results(function))
    if len(block.arguments) < arguments or returned != results:
        raise QmlirError(
            f"{name} has {len(block.arguments)} arguments and {returned} results, "
            f"not the training step's {arguments}+ and {results}"
        )
