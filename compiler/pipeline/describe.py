"""What a module holds after its recipe passes, as the artifact's metadata records it: each
matmul's layer and recipe (:func:`layer_map`), the scaling state, ``@main``'s signature with
its inputs' names and dims; :func:`artifact_metadata` builds the record once, complete."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from iree.compiler import ir

from compiler.backend.artifact import io_signature, public_functions
from compiler.pipeline.options import CompileOptions
from compiler.runtime.metadata import ArtifactMetadata, Layer, Signature, StateEntry, Training
from compiler.version import IREE_VERSION, __version__
from passes.base.abi import DECODE
from passes.base.errors import QmlirError
from passes.expose_scaling_state import state_globals
from passes.ir.dialect import OpKind, decode_kind
from passes.ir.layer_names import layer_name
from passes.ir.named_ops import GEMM_ATTR, LAYER_ATTR, callee_name, is_named_op_decl, symbol_name
from passes.quantize_matmuls import KEPT_ATTR, RECIPE_ATTR, USER_CHOICES, WHY_ATTR


def layer_map(module: ir.Module) -> tuple[Layer, ...]:
    """Each matmul after the recipe pass: its layer, its recipe (``none``: high precision), why."""
    out: list[Layer] = []
    scaled = {
        symbol_name(op.operation)
        for op in module.body.operations
        if is_named_op_decl(op.operation) and decode_kind(op.operation) is OpKind.SCALED_MATMUL
    }

    def visit(op: ir.Operation) -> ir.WalkResult:
        attrs = op.attributes

        def text(name: str) -> str:
            return ir.StringAttr(attrs[name]).value

        gemm = text(GEMM_ATTR) if GEMM_ATTR in attrs else None  # a training step's GEMM
        if op.name == "func.call" and callee_name(op) in scaled:
            layer = text(LAYER_ATTR) if LAYER_ATTR in attrs else ""
            out.append(
                Layer(layer, OpKind.SCALED_MATMUL.value, text(RECIPE_ATTR), text(WHY_ATTR), gemm)
            )
        elif KEPT_ATTR in attrs:
            out.append(Layer(layer_name(op), op.name, "none", text(KEPT_ATTR), gemm))
        return ir.WalkResult.ADVANCE

    for op in module.body.operations:  # a generator's @decode repeats @main's layers
        if op.operation.name != "func.func" or symbol_name(op.operation) != DECODE:
            op.operation.walk(visit)
    return tuple(out)


def check_quantized(options: CompileOptions, layers: tuple[Layer, ...]) -> None:
    """A quantizing recipe that quantized none of the model's matmuls is an error (unless
    ``allow_unquantized``): a user asking for FP8 must not ship an f32 model without a word.
    Matmuls the user kept (``--exclude``, ``--layer-recipe ...=none``) do not count against it."""
    if not options.recipe.quantizes or options.allow_unquantized or not layers:
        return
    if any(layer.matmul == OpKind.SCALED_MATMUL.value for layer in layers):
        return
    kept = [layer.note for layer in layers if not layer.note.startswith(USER_CHOICES)]
    if not kept:
        return
    reasons = ", ".join(f"{n} x {why}" for why, n in Counter(kept).most_common())
    raise QmlirError(
        f"recipe '{options.recipe.name}' quantized none of the model's {len(layers)} matmuls "
        f"({reasons}); --allow-unquantized compiles it in high precision anyway"
    )


def convolution_layers(module: ir.Module) -> tuple[str, ...]:
    """The layers of the model's convolutions (``torch.aten.convolution`` and its variants), in
    module order, each once: kept in high precision, since the recipes quantize matmuls only."""
    out: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith(("torch.aten.conv", "torch.aten._conv")):
            name = layer_name(op)
            if name not in out:
                out.append(name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return tuple(out)


def scaling_state_entries(module: ir.Module) -> tuple[StateEntry, ...]:
    """The state globals in the order ``qmlir.get_scaling_state`` returns them."""
    out = []
    for g in state_globals(module):
        attrs = ir.DictAttr(g.attributes["qmlir.state"])
        info = ir.ShapedType(ir.TypeAttr(g.attributes["type"]).value)
        key, layer = ir.StringAttr(attrs["key"]).value, ir.StringAttr(attrs["layer"]).value
        out.append(StateEntry(key, layer, ir.StringAttr(attrs["kind"]).value, tuple(info.shape)))
    return tuple(out)


def described_signature(
    module: ir.Module,
    roles: list[dict[str, Any]],
    output_dims: list[list[str | None]] | None = None,
    output_tree: Any = None,
    output_names: list[str] | None = None,
) -> Signature:
    """``@main``'s signature, each input with its name and index range
    (``compiler/frontend/input_roles.py``; ``@main`` takes exactly the program's user inputs, in
    order), each dynamic output dim with its expression in the inputs' dim names (``batch``,
    ``2*seq``); where the model returns a structure (``compiler/frontend/output_tree.py``), its
    ``tree`` and each output's ``name``."""
    signature = io_signature(module)
    inputs = signature["inputs"]
    if len(roles) != len(inputs):
        raise QmlirError(
            f"internal: the module takes {len(inputs)} inputs, the program {len(roles)}"
        )
    outputs = []
    for entry, names in zip(signature["outputs"], output_dims or [], strict=False):
        if any(n is not None for n in names):
            entry = {**entry, "dims": [None if n is None else {"name": n} for n in names]}
        outputs.append(entry)
    outputs += signature["outputs"][len(outputs) :]
    described: dict[str, Any] = {
        "inputs": [{**entry, **role} for entry, role in zip(inputs, roles, strict=True)],
        "outputs": outputs,
    }
    if output_tree is not None and output_names and len(output_names) == len(outputs):
        described["outputs"] = [
            {**entry, "name": name} for entry, name in zip(outputs, output_names, strict=True)
        ]
        described["tree"] = output_tree
    return described


def artifact_metadata(
    model: str,
    options: CompileOptions,
    module: ir.Module,
    layers: tuple[Layer, ...],
    signature: Signature,
    gemm_operands: str,
    *,
    attention: str | None = None,
    weights: Mapping[str, int] | None = None,
    training: Training | None = None,
) -> ArtifactMetadata:
    """The artifact's record: what the compile was asked (``options``), what the module holds
    after its recipe passes, and what only the entry point knows (``signature``'s names and
    dims; an inference compile's ``attention`` and ``weights``; a training step's state)."""
    return ArtifactMetadata(
        qmlir_version=__version__,
        iree_version=IREE_VERSION,
        model=model,
        recipe=options.recipe.to_dict(),
        target=options.target,
        quantize_all_matmuls=options.quantize_all_matmuls,
        exclude=options.exclude,
        layer_recipes=tuple((glob, r.to_dict()) for glob, r in options.layer_recipes),
        signature=signature,
        functions=tuple(public_functions(module)),
        layers=layers,
        scaling_state=scaling_state_entries(module),
        convolutions=convolution_layers(module),
        gemm_operands=gemm_operands,
        attention=attention,
        weights=weights,
        training=training,
    )
