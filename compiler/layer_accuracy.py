"""``qmlir report``: how much each layer's matmul loses to its recipe, measured on real inputs.

The layer decisions are the compiler's own: the model is exported and imported and the recipe
pass runs with the user's ``--exclude``/``--layer-recipe``, exactly as ``qmlir compile`` would.
The exported program then runs in f32 on the given inputs, recording every matmul's operands and
output. Each operand of a quantized matmul goes through the recipe's compiled quantize core
(``compiler.quantize``: the same IR as the artifact) and back (``dequantize``); the layer is
recomputed with the dequantized operands and compared with its f32 output. So a layer's output
SQNR isolates its own quantization error: its inputs are the f32 model's.

fp8-delayed activations are assessed in the steady state on these inputs: the compiled core
runs twice on each, so that its amax history holds this input's amax (``operand_stats.py``).
The f32 run is ``matmul_capture.py``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import torch
from iree.compiler import ir

from compiler.export import export_model
from compiler.importer import import_program
from compiler.matmul_capture import MatmulCall, as_tensor, capture_matmuls
from compiler.metrics import compare
from compiler.model_source import ModelSource
from compiler.operand_stats import OperandStats, quantize_operand
from compiler.pipeline import layer_map
from passes.base.errors import QmlirError
from passes.quantize_matmuls import QuantizeMatmuls
from passes.recipes import Recipe, Role, ScalingRecipe


@dataclass
class LayerReport:
    layer: str  # module path; "" for matmuls of the top-level module
    op: str
    recipe: str
    note: str
    shapes: tuple[tuple[int, ...], tuple[int, ...]]
    weight: OperandStats | None = None
    activation: OperandStats | None = None
    output_sqnr_db: float | None = None
    extra: list[OperandStats] = field(default_factory=list)  # a second activation operand

    @property
    def quantized(self) -> bool:
        return self.output_sqnr_db is not None


@dataclass
class Report:
    model: str
    recipe: dict[str, Any]
    layers: list[LayerReport]

    def suggest_excludes(self, threshold_db: float) -> list[str]:
        """Layers whose output SQNR is below ``threshold_db``, each once, in model order:
        excluded (kept in high precision), every remaining layer is above the threshold."""
        out: list[str] = []
        for entry in self.layers:
            weak = entry.quantized and entry.output_sqnr_db < threshold_db  # type: ignore[operator]
            if weak and entry.layer not in out:
                out.append(entry.layer)
        return out


def build_report(
    source: ModelSource,
    recipe: Recipe,
    inputs: tuple[Any, ...] | None = None,
    exclude: tuple[str, ...] = (),
    layer_recipes: tuple[tuple[str, Recipe], ...] = (),
    quantize_all_matmuls: bool = False,
) -> Report:
    args = tuple(source.example_inputs) if inputs is None else tuple(as_tensor(x) for x in inputs)
    if inputs is not None and source.program is None:  # export at the calibration shapes
        source = dataclasses.replace(source, example_inputs=args)
    program = export_model(source)
    captured = capture_matmuls(program, args)  # first: the importer rewrites the graph
    decisions = _decisions(program, recipe, exclude, layer_recipes, quantize_all_matmuls)
    if len(captured) != len(decisions):
        raise QmlirError(
            f"internal: {len(captured)} matmuls ran in torch but the recipe pass saw "
            f"{len(decisions)}"
        )
    recipes = {recipe.name: recipe, **{r.name: r for _, r in layer_recipes}}
    layers = []
    for call, decision in zip(captured, decisions, strict=True):
        if call.layer != decision["layer"]:
            raise QmlirError(
                f"internal: matmul of '{call.layer}' in torch met '{decision['layer']}' in the IR"
            )
        chosen = recipes.get(decision["recipe"])
        layers.append(_layer_report(call, decision, chosen))
    return Report(source.name, recipe.to_dict(), layers)


def _decisions(
    program: torch.export.ExportedProgram,
    recipe: Recipe,
    exclude: tuple[str, ...],
    layer_recipes: tuple[tuple[str, Recipe], ...],
    quantize_all: bool,
) -> list[dict[str, str]]:
    """Per matmul, in program order: the recipe ``qmlir compile`` would give it, and why."""
    text = import_program(program)
    with ir.Context():
        module = ir.Module.parse(text)
        QuantizeMatmuls(recipe, quantize_all, exclude, layer_recipes).apply(module)
        return layer_map(module)


def _layer_report(call: MatmulCall, decision: dict[str, str], recipe: Recipe | None) -> LayerReport:
    a, b = _operands(call)
    entry = LayerReport(
        layer=decision["layer"],
        op=call.op,
        recipe=decision["recipe"],
        note=decision["note"],
        shapes=(tuple(a.shape), tuple(b.shape)),
    )
    if decision["matmul"] != "scaled_matmul" or not isinstance(recipe, ScalingRecipe):
        return entry
    # Both operands as [..., rows, K]: the contraction runs along the last axis (a [K, N]
    # operand's columnwise blocks are the rowwise blocks of its transpose).
    a_rows = a
    b_rows = b if call.op == "linear" else b.transpose(-1, -2)
    a_is_weight, b_is_weight = call.weight_operands
    qa, a_stats = quantize_operand(a_rows, recipe, _role(a_is_weight))
    qb, b_stats = quantize_operand(b_rows, recipe, _role(b_is_weight))
    a_deq = qa
    b_deq = qb if call.op == "linear" else qb.transpose(-1, -2)
    output = _recompute(call, a_deq, b_deq)
    entry.output_sqnr_db = compare(call.output.numpy(), output.numpy()).sqnr_db
    stats = [a_stats, b_stats]
    weights = [s for s in stats if s.role == "weight"]
    activations = [s for s in stats if s.role == "activation"]
    entry.weight = weights[0] if weights else None
    entry.activation = activations[0] if activations else None
    entry.extra = activations[1:]
    return entry


def _role(is_weight: bool) -> Role:
    return Role.WEIGHT if is_weight else Role.ACTIVATION


def _operands(call: MatmulCall) -> tuple[torch.Tensor, torch.Tensor]:
    if call.op == "addmm":
        return call.args[1], call.args[2]
    return call.args[0], call.args[1]


def _recompute(call: MatmulCall, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    args = list(call.args)
    if call.op == "addmm":
        args[1], args[2] = a, b
    else:
        args[0], args[1] = a, b
    with torch.no_grad():
        return call.target(*args)
