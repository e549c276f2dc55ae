"""Pass ``expose-scaling-state``: public functions that read and write the module's state.

Expects ``util.global``s tagged ``qmlir.state`` (fp8-delayed's amax histories and scales). Adds
``@qmlir.get_scaling_state() -> (each global, in module order)`` and
``@qmlir.set_scaling_state(each global)``, so the runtime can save, reset and restore the state.
Leaves modules without state untouched.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir
from iree.compiler.dialects import func

from passes.base.abi import GET_STATE, SET_STATE
from passes.base.module_pass import ModulePass, register_pass
from passes.ir.named_ops import STATE_ATTR, load_global, store_global


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
        names = [ir.StringAttr(g.attributes["sym_name"]).value for g in globals_]
        types = [ir.TypeAttr(g.attributes["type"]).value for g in globals_]
        with ir.InsertionPoint(module.body), ir.Location.unknown():
            getter = func.FuncOp(GET_STATE, ir.FunctionType.get([], types))
            with ir.InsertionPoint(getter.add_entry_block()):
                func.ReturnOp([load_global(n, t) for n, t in zip(names, types, strict=True)])
            setter = func.FuncOp(SET_STATE, ir.FunctionType.get(types, []))
            block = setter.add_entry_block()
            with ir.InsertionPoint(block):
                for n, arg in zip(names, block.arguments, strict=True):
                    store_global(n, arg)
                func.ReturnOp([])
