"""Stage 2, import: torch-mlir's FX importer → torch-dialect MLIR text.

Two hooks: weights become dense ``torch.vtensor.literal``s readable from Python (the recipe pass
quantizes them), and each op's location is a NameLoc holding its module path (``layers.3.fc1``).
torch-mlir and IREE have separate MLIR builds, so the module crosses over as text.

With ``external=True`` a weight (a parameter or buffer of the program's state) becomes a
*placeholder* literal instead: a zero splat naming the tensor (``passes/ir/parameters.py``), so
neither the importer nor the IR ever holds its bytes, and the program's weights may be on the
meta device.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
from torch.export.graph_signature import InputKind, InputSpec, OutputKind
from torch_mlir import ir as tm_ir
from torch_mlir.dialects import torch as torch_d
from torch_mlir.extras import fx_importer

from compiler.frontend.weights import tensor_numpy
from passes.base.errors import QmlirError, exception_summary
from passes.ir.parameters import PARAMETER_ATTR

_ELEMENT_TYPES = {
    torch.float32: lambda: tm_ir.F32Type.get(),
    torch.bfloat16: lambda: tm_ir.BF16Type.get(),
    torch.float16: lambda: tm_ir.F16Type.get(),
    # index buffers (BERT's position ids): dense, so check-indices can read their range
    torch.int64: lambda: tm_ir.IntegerType.get_signed(64),
    torch.int32: lambda: tm_ir.IntegerType.get_signed(32),
}


_SIGNATURE_DTYPES = {
    torch.float32: "f32",
    torch.bfloat16: "bf16",
    torch.float16: "f16",
    torch.float64: "f64",
    torch.int64: "si64",
    torch.int32: "si32",
    torch.bool: "i1",
    torch.uint8: "ui8",  # an FP8 KV cache's codes and scales
}


class _DenseLiterals(fx_importer.FxImporterHooks):
    """Tensors as dense ``torch.vtensor.literal`` ops, one per tensor and function.

    ``import_frozen_program`` puts a parameter's tensor in place of every use of its
    placeholder and asks for a literal at each use: a weight used E times (an MoE layer's
    ``[experts, out, in]`` parameter, one slice per expert) would be copied into the module E
    times, quadratic in the experts (32 experts of a 1024-wide layer: 13 GB to compile). The
    first literal of a tensor is reused by its later uses in the same function (the first use
    is created earlier in the same block, so it dominates them)."""

    def __init__(self) -> None:
        self._made: dict[tuple[int, int], tuple[torch.Tensor, Any]] = {}

    def resolve_literal(self, gni, literal, info):  # type: ignore[no-untyped-def]
        if not isinstance(literal, torch.Tensor) or literal.dtype not in _ELEMENT_TYPES:
            return None
        if literal.numel() <= 1:
            return None
        key = (id(gni), id(literal))
        made = self._made.get(key)
        if made is not None and made[0] is literal:  # the tensor is held: its id is not reused
            return made[1]
        value = self._dense(gni, literal)
        self._made[key] = (literal, value)
        return value

    def _dense(self, gni, literal):  # type: ignore[no-untyped-def]
        data = literal.detach().contiguous()
        array = (
            data.view(torch.int16).numpy()
            if data.dtype == torch.bfloat16
            else data.numpy().astype(np.dtype(str(data.dtype).removeprefix("torch.")))
        )
        attr = tm_ir.DenseElementsAttr.get(
            array, type=_ELEMENT_TYPES[data.dtype](), shape=list(data.shape)
        )
        vtype = gni._cc.tensor_to_vtensor_type(literal)
        return tm_ir.Operation.create(
            "torch.vtensor.literal", results=[vtype], attributes={"value": attr}
        ).result


class _PlaceholderLiterals(_DenseLiterals):
    """Each state tensor of the program (by identity) as a placeholder naming it; other
    literals (lifted constants) dense, as :class:`_DenseLiterals` makes them."""

    def __init__(self, names: dict[int, str]) -> None:
        super().__init__()
        self._names = names

    def resolve_literal(self, gni, literal, info):  # type: ignore[no-untyped-def]
        name = self._names.get(id(literal)) if isinstance(literal, torch.Tensor) else None
        # integer state (position-id buffers) stays in the module: small, and its range is read
        dense = name is None or not literal.is_floating_point() or literal.numel() == 0
        dense = dense or literal.dtype not in _ELEMENT_TYPES
        if dense or (literal.numel() == 1 and not literal.is_meta):
            if isinstance(literal, torch.Tensor) and literal.is_meta:
                raise QmlirError(f"the model's tensor '{name or '?'}' has no values (meta)")
            return super().resolve_literal(gni, literal, info)
        element = _ELEMENT_TYPES[literal.dtype]()
        splat = tm_ir.DenseElementsAttr.get_splat(
            tm_ir.RankedTensorType.get(list(literal.shape), element),
            tm_ir.FloatAttr.get(element, 0.0),
        )
        return tm_ir.Operation.create(
            "torch.vtensor.literal",
            results=[gni._cc.tensor_to_vtensor_type(literal)],
            attributes={"value": splat, PARAMETER_ATTR: tm_ir.StringAttr.get(name)},
        ).result


class _ModulePathLocations(fx_importer.ContextCache):
    def get_node_location(self, node):  # type: ignore[no-untyped-def]
        stack = node.meta.get("nn_module_stack") or {}
        path = list(stack.values())[-1][0] if stack else ""
        if not path:
            return tm_ir.Location.unknown(self._c)
        return tm_ir.Location.name(path, context=self._c)


def _expose_non_persistent_buffers(program: torch.export.ExportedProgram) -> None:
    """Non-persistent buffers (e.g. BERT's ``position_ids``) live in ``program.constants``, where
    the importer does not look for buffers: copy them into the (freshly exported) program's
    state dict."""
    state = program.state_dict
    for target in program.graph_signature.inputs_to_buffers.values():
        if target not in state and target in program.constants:
            state[target] = program.constants[target]


def _copy_weights_in_lists(program: torch.export.ExportedProgram) -> None:
    """A weight inside an op's list operand (``torch.cat([x, w])``, ``torch.stack``) reaches the
    importer as a tensor among values, which it refuses ("Heterogeneous lists are not
    supported"): such a list gets an ``aten.clone`` of the weight instead (IREE folds it)."""
    graph = program.graph
    lifted = {
        spec.arg.name
        for spec in program.graph_signature.input_specs
        if spec.kind != torch.export.graph_signature.InputKind.USER_INPUT
    }
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        args = list(node.args)
        for i, arg in enumerate(args):
            if isinstance(arg, (list, tuple)) and any(
                isinstance(a, torch.fx.Node) and a.name in lifted for a in arg
            ):
                with graph.inserting_before(node):
                    items = [
                        graph.call_function(torch.ops.aten.clone.default, (a,))
                        if isinstance(a, torch.fx.Node) and a.name in lifted
                        else a
                        for a in arg
                    ]
                for item, a in zip(items, arg, strict=True):
                    if item is not a:
                        item.meta = {**a.meta, "nn_module_stack": node.meta.get("nn_module_stack")}
                args[i] = type(arg)(items)
        node.args = tuple(args)
    graph.lint()


@dataclasses.dataclass(frozen=True)
class MutatedBuffers:
    """The buffers a program mutates, as :func:`lift_mutated_buffers` leaves them: ``@main``'s
    first arguments (``inputs``, their names in order) and first results (``outputs``), and each
    input's initial value (None: zeros), for pass ``hold-buffers``."""

    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    initial: tuple[np.ndarray | None, ...] = ()
    dtypes: tuple[str, ...] = ()  # each input's, as the signature names them (``si64``)


def lift_mutated_buffers(program: torch.export.ExportedProgram) -> MutatedBuffers:
    """Each buffer the (functionalized) program mutates becomes an argument of the imported
    function, before the user's inputs, and its new value a result, before the user's outputs
    (where ``torch.export`` puts buffer mutations), instead of a literal; a program that mutates
    one of its inputs is refused."""
    signature = program.graph_signature
    if signature.user_inputs_to_mutate:
        (name,) = list(signature.user_inputs_to_mutate.values())[:1]
        raise QmlirError(
            f"the model writes into its input '{name}' in place: return the new value instead"
        )
    mutated = set(signature.buffers_to_mutate.values())
    if not mutated:
        return MutatedBuffers()
    state = {**program.constants, **program.state_dict}
    inputs, initial, dtypes = [], [], []
    for i, spec in enumerate(signature.input_specs):
        if spec.kind == InputKind.BUFFER and spec.target in mutated:
            inputs.append(spec.target)
            value = state[spec.target].detach()
            if value.dtype not in _SIGNATURE_DTYPES:
                raise QmlirError(f"the model mutates buffer '{spec.target}' of {value.dtype}")
            dtypes.append(_SIGNATURE_DTYPES[value.dtype])
            # zeros: None (a buffer on the meta device, as a folder's KV cache, starts at zeros)
            nonzero = not value.is_meta and bool(value.count_nonzero())
            initial.append(tensor_numpy(value) if nonzero else None)
            signature.input_specs[i] = InputSpec(InputKind.USER_INPUT, spec.arg, None)
    outputs = [s.target for s in signature.output_specs if s.kind == OutputKind.BUFFER_MUTATION]
    assert all(s.kind == OutputKind.USER_OUTPUT for s in signature.output_specs[len(outputs) :]), (
        "buffer mutations come first"
    )
    return MutatedBuffers(tuple(inputs), tuple(outputs), tuple(initial), tuple(dtypes))


def import_program(program: torch.export.ExportedProgram, external: bool = False) -> str:
    """Imports an exported program as ``func.func @main``; returns the module's text.
    ``external``: its state tensors as placeholder literals naming them. Call
    :func:`lift_mutated_buffers` first on a program that mutates buffers."""
    _expose_non_persistent_buffers(program)
    _copy_weights_in_lists(program)
    hooks: fx_importer.FxImporterHooks = _DenseLiterals()
    if external:
        state = {**program.constants, **program.state_dict}
        hooks = _PlaceholderLiterals({id(t): name for name, t in state.items()})
    importer = _importer(hooks)
    try:
        importer.import_frozen_program(program, func_name="main")
    except Exception as e:
        raise QmlirError(f"torch-mlir could not import the model: {exception_summary(e)}") from e
    return importer.module.operation.get_asm(enable_debug_info=True)


def import_graphs(graphs: dict[str, torch.fx.GraphModule]) -> str:
    """Imports traced, functional graphs (a training step's: every tensor they read is an
    argument, or a constant) as one module, ``func.func @<name>`` each; returns its text."""
    importer = _importer()
    try:
        for name, graph in graphs.items():
            importer.import_graph_module(graph, func_name=name)
    except Exception as e:
        raise QmlirError(f"torch-mlir could not import the step: {exception_summary(e)}") from e
    return importer.module.operation.get_asm(enable_debug_info=True)


def _importer(hooks: fx_importer.FxImporterHooks | None = None) -> fx_importer.FxImporter:
    context = tm_ir.Context()
    torch_d.register_dialect(context)
    importer = fx_importer.FxImporter(context=context, hooks=hooks or _DenseLiterals())
    importer._cc = _ModulePathLocations(context, py_attr_tracker=importer._py_attr_tracker)
    return importer
