"""Pass ``expose-scaling-state``: public functions that read and write the module's state.

Expects ``util.global``s tagged ``qmlir.state`` (fp8-delayed's amax histories and scales). Adds
``@qmlir.get_scaling_state() -> (each global, in module order)`` and
``@qmlir.set_scaling_state(each global)``, so the runtime can save, reset and restore the state.
Leaves modules without state untouched.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.abi import GET_STATE, SET_STATE
from passes.base.module_pass import ModulePass, register_pass
from passes.ir.named_ops import STATE_ATTR, add_accessors


def state_globals(module: ir.Module) -> list[ir.Operation]:
    return [
        op.operation
        for op in module.body.operations
        if op.operation.name == "util.global" and STATE_ATTR in op.operation.attributes
    ]


@register_pass
@dataclasses.dataclass(frozen=True)
class ExposeScalingState(ModulePass):
    name = "expose-scaling-state"

    def apply(self, module: ir.Module) -> None:
        globals_ = state_globals(module)
        if not globals_:
            return
        symbols = [ir.StringAttr(g.attributes["sym_name"]).value for g in globals_]
        types = [ir.TypeAttr(g.attributes["type"]).value for g in globals_]
        add_accessors(module, GET_STATE, SET_STATE, list(zip(symbols, types, strict=True)))
