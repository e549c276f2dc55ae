"""Pass ``hold-buffers``: the buffers a model mutates live in the module, so successive calls
see each other's writes (a KV cache, a counter), as they do in torch.

Expects an imported function whose first arguments are the mutated buffers' values before the
call and whose first results are their values after it (``compiler/frontend/importer.py``,
``lift_mutated_buffers``): ``inputs`` (option ``loaded``) names the arguments, in order,
``outputs`` (option ``stored``) the results, in order (each a name in ``inputs``). Each name
becomes a private mutable ``util.global @qmlir.buffer.<name>`` tagged ``qmlir.buffer``; each
function in ``functions`` loads its arguments from the globals and stores its results into
them, and takes and returns the rest. Public functions move the buffers in and out:
``@qmlir.get_buffers() -> (each)``, ``@qmlir.set_buffers(each)``, and
``@qmlir.initial_buffers() -> (each whose initial value is not zeros)``, in ``inputs`` order.

The globals have no initial value: the runtime sets them (zeros, or ``@qmlir.initial_buffers``'
values) through ``@qmlir.set_buffers`` when it loads the module. IREE 3.13 gives two mutable
globals with equal initial values one storage, and an in-place update of one (a KV cache's
scatter) then writes both: two zero-initialized caches held each other's keys
(``../shared/TOOLCHAIN.md``).
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import func

from passes.base.abi import GET_BUFFERS, INITIAL_BUFFERS, SET_BUFFERS
from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.ir.held_values import hold_in_globals
from passes.ir.named_ops import NamedOpBuilder, add_accessors, entry_function, str_attr
from passes.ir.types import tensor_info

BUFFER_ATTR = "qmlir.buffer"
PREFIX = "qmlir.buffer."


@register_pass
@dataclasses.dataclass(frozen=True)
class HoldBuffers(ModulePass):
    name = "hold-buffers"

    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    functions: tuple[str, ...] = ("main",)
    initial: tuple[np.ndarray | None, ...] = ()  # one per input (None, or none: zeros)

    @classmethod
    def from_options(cls, options: dict[str, str]) -> HoldBuffers:
        """``loaded=a,b stored=b,a functions=main``."""
        unknown = set(options) - {"loaded", "stored", "functions"}
        if unknown:
            raise QmlirError(f"pass '{cls.name}' has no option '{sorted(unknown)[0]}'")
        names = {k: tuple(n for n in v.split(",") if n) for k, v in options.items()}
        functions = names.get("functions", ("main",))
        return cls(names.get("loaded", ()), names.get("stored", ()), functions)

    def options(self) -> dict[str, str]:
        """The names; the initial values are no text (a repro starts from zeros)."""
        named = (("loaded", self.inputs), ("stored", self.outputs))
        out = {key: ",".join(names) for key, names in named if names}
        return {**out, "functions": ",".join(self.functions)}

    def apply(self, module: ir.Module) -> None:
        if not self.inputs:
            return
        missing = set(self.outputs) - set(self.inputs)
        if missing:
            raise QmlirError(f"buffer '{sorted(missing)[0]}' is stored but never loaded")
        if self.initial and len(self.initial) != len(self.inputs):
            raise QmlirError(f"{len(self.initial)} initial values for {len(self.inputs)} buffers")
        functions = [entry_function(module, name) for name in self.functions]
        held: dict[str, tuple[str, ir.Type]] = {}  # name -> (symbol, builtin type)
        ops = NamedOpBuilder(module)
        for function in functions:
            block = function.regions[0].blocks[0]
            ret = block.operations[len(block.operations) - 1]
            name = ir.StringAttr(function.attributes["sym_name"]).value
            if len(block.arguments) < len(self.inputs) or len(ret.operands) < len(self.outputs):
                raise QmlirError(
                    f"@{name} has {len(block.arguments)} arguments and {len(ret.operands)} "
                    f"results, fewer than its {len(self.inputs)} and {len(self.outputs)} buffers"
                )
            for index, buffer in enumerate(self.inputs):
                if buffer not in held:
                    held[buffer] = _global(ops, buffer, block.arguments[index].type)
            hold_in_globals(
                function,
                {i: held[b][0] for i, b in enumerate(self.inputs)},
                {i: held[b][0] for i, b in enumerate(self.outputs)},
            )
        globals_ = [held[b] for b in self.inputs]
        add_accessors(module, GET_BUFFERS, SET_BUFFERS, globals_)
        self._add_initial(module, globals_)

    def _add_initial(self, module: ir.Module, globals_: list[tuple[str, ir.Type]]) -> None:
        values = [
            _dense(np.asarray(value), ir.RankedTensorType(t), buffer)
            for buffer, value, (_, t) in zip(self.inputs, self.initial, globals_, strict=False)
            if value is not None
        ]
        types = [ir.DenseElementsAttr(v).type for v in values]
        with ir.InsertionPoint(module.body), ir.Location.unknown():
            initial = func.FuncOp(INITIAL_BUFFERS, ir.FunctionType.get([], types))
            with ir.InsertionPoint(initial.add_entry_block()):
                constants = [
                    ir.Operation.create("arith.constant", results=[t], attributes={"value": v})
                    for v, t in zip(values, types, strict=True)
                ]
                func.ReturnOp([c.result for c in constants])


def _global(ops: NamedOpBuilder, buffer: str, vtensor: ir.Type) -> tuple[str, ir.Type]:
    info = tensor_info(vtensor)
    if info is None:
        raise QmlirError(f"buffer '{buffer}' has no static tensor type ({vtensor})")
    builtin = info.builtin()
    attrs = {"name": str_attr(buffer)}
    return ops.add_global(f"{PREFIX}{buffer}", builtin, attrs, BUFFER_ATTR), builtin


def _dense(value: np.ndarray, builtin: ir.RankedTensorType, buffer: str) -> ir.Attribute:
    if list(value.shape) != list(builtin.shape):
        raise QmlirError(
            f"initial value of buffer '{buffer}' has shape {list(value.shape)}, "
            f"the module holds {list(builtin.shape)}"
        )
    if value.dtype == ml_dtypes.bfloat16:
        value = value.view(np.int16)
    return ir.DenseElementsAttr.get(
        np.ascontiguousarray(value), type=builtin.element_type, shape=list(value.shape)
    )


def buffer_types(module: ir.Module) -> dict[str, ir.RankedTensorType]:
    """Each held buffer's type, by name, in module order."""
    out = {}
    for op in module.body.operations:
        attrs = op.operation.attributes
        if op.operation.name == "util.global" and BUFFER_ATTR in attrs:
            name = ir.StringAttr(ir.DictAttr(attrs[BUFFER_ATTR])["name"]).value
            out[name] = ir.RankedTensorType(ir.TypeAttr(attrs["type"]).value)
    return out
