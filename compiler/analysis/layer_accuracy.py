"""``qmlir report``: how much each layer's matmul loses to its recipe, measured on real inputs.

The layer decisions are the compiler's own: the model is exported and imported as ``qmlir
compile`` would (at the example inputs' shapes, with the model's dynamic dims) and the recipe
pass runs with the user's ``--exclude``/``--layer-recipe``. The exported program then runs in
f32 on each batch of calibration inputs (any size the artifact takes), recording every matmul's
operands and output. Each operand of a quantized matmul goes through the recipe's compiled
quantize core (``compiler.quantize``: the same IR as the artifact) and back (``dequantize``);
the layer is recomputed with the dequantized operands and compared with its f32 output. So a
layer's output SQNR isolates its own quantization error: its inputs are the f32 model's. Over
several batches, every figure is over all their elements together (SQNR from the summed signal
and noise, shares from the summed counts, every scale in the histogram); a weight, the same in
every batch, is quantized once.

fp8-delayed activations are assessed in the steady state on each batch: the compiled core runs
twice on it, so that its amax history holds this batch's amax (``operand_stats.py``).
The f32 run is ``matmul_capture.py``.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from iree.compiler import ir

from compiler.analysis.matmul_capture import MatmulCall, as_tensor, capture_matmuls
from compiler.analysis.metrics import signal_and_noise, sqnr_db
from compiler.analysis.operand_stats import OperandStats, quantize_operand
from compiler.frontend.dynamic_dims import dim_names
from compiler.frontend.export import export_model
from compiler.frontend.importer import import_program
from compiler.frontend.input_roles import input_roles
from compiler.frontend.model_source import ModelSource
from compiler.pipeline.describe import convolution_layers, layer_map
from compiler.runtime.input_check import check_index_ranges, check_shapes
from passes.base.errors import QmlirError
from passes.fold_weight_views import FoldWeightViews
from passes.ir.dialect import OpKind
from passes.quantize_matmuls import QuantizeMatmuls
from passes.recipes import Recipe, Role, ScalingRecipe

Shape = tuple[int | str, ...]  # a dim that varied over the calibration batches: "min..max"


@dataclass(frozen=True)
class Calibration:
    """One batch of calibration inputs, and what errors call it (a file, ``inputs[1]``)."""

    label: str
    inputs: tuple[Any, ...]


@dataclass
class LayerReport:
    layer: str  # module path; "" for matmuls of the top-level module
    op: str
    recipe: str
    note: str
    shapes: tuple[Shape, Shape]  # the operands' shapes over the calibration batches
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
    batches: int = 1  # calibration batches the figures are over
    convolutions: tuple[str, ...] = ()  # their layers: kept in high precision, not in the table

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
    batches: Sequence[Calibration] = (),
    exclude: tuple[str, ...] = (),
    layer_recipes: tuple[tuple[str, Recipe], ...] = (),
    quantize_all_matmuls: bool = False,
) -> Report:
    """``batches``: the calibration inputs (default: the example inputs), each of a size the
    compiled artifact takes (the example's, or any in a dynamic dim's range). A static model
    given from Python whose batches all have one shape is exported at that shape."""
    tensors = [_tensors(batch) for batch in batches]
    one_shape = len({tuple(tuple(x.shape) for x in args) for args in tensors}) == 1
    arity = all(len(args) == len(source.example_inputs) for args in tensors)  # else: _checked
    if one_shape and arity and source.program is None and source.dynamic_shapes is None:
        source = dataclasses.replace(source, example_inputs=tensors[0])
    program = export_model(source)
    specs = _input_specs(source, program)
    runs = [_checked(b, args, specs) for b, args in zip(batches, tensors, strict=True)] or [
        tuple(source.example_inputs)
    ]
    decisions, convolutions = compile_decisions(
        program, recipe, exclude, layer_recipes, quantize_all_matmuls
    )
    recipes = {recipe.name: recipe, **{r.name: r for _, r in layer_recipes}}
    layers = [_LayerStats(d, recipes.get(d["recipe"])) for d in decisions]
    for args in runs:
        captured = capture_matmuls(program, args)
        if len(captured) != len(layers):
            raise QmlirError(
                f"internal: {len(captured)} matmuls ran in torch but the recipe pass saw "
                f"{len(layers)}"
            )
        for call, layer in zip(captured, layers, strict=True):
            layer.add(call)
    results = [x.result() for x in layers]
    return Report(source.name, recipe.to_dict(), results, len(runs), convolutions)


def _input_specs(
    source: ModelSource, program: torch.export.ExportedProgram
) -> list[dict[str, Any]]:
    """Per input, what the artifact's signature says: name, example shape, dynamic dims (by
    the user's names, with their ranges) and the range of token ids."""
    roles = input_roles(program, dim_names(source.dynamic_shapes, source.input_names()))
    return [
        {**role, "shape": list(x.shape)}
        for role, x in zip(roles, source.example_inputs, strict=True)
    ]


def _tensors(batch: Calibration) -> tuple[torch.Tensor, ...]:
    """The batch's inputs as tensors (numpy arrays converted); else a one-line error."""
    for i, x in enumerate(batch.inputs):
        if not isinstance(x, (torch.Tensor, np.ndarray)):
            raise QmlirError(f"{batch.label}: input {i} is a {type(x).__name__}, not a tensor")
    return tuple(as_tensor(x) for x in batch.inputs)


def _checked(
    batch: Calibration, args: tuple[torch.Tensor, ...], specs: list[dict[str, Any]]
) -> tuple[torch.Tensor, ...]:
    """``args`` (the batch's tensors), if the artifact would take them: else a one-line error
    naming the batch."""
    names = ", ".join(spec["name"] for spec in specs)
    if len(args) != len(specs):
        several = "; several batches are a list of tuples" if len(args) > len(specs) else ""
        raise QmlirError(
            f"{batch.label}: {len(args)} inputs, the model takes {len(specs)} ({names}){several}"
        )
    static = not any("dims" in spec for spec in specs)
    try:
        check_shapes(args, specs)
    except QmlirError as e:
        hint = " (the model is static: make a dim dynamic to calibrate at other sizes)"
        raise QmlirError(f"{batch.label}: {e}{hint if static else ''}") from None
    try:
        check_index_ranges(args, specs)
    except QmlirError as e:
        raise QmlirError(f"{batch.label}: {e}") from None
    return args


def matmul_decisions(
    program: torch.export.ExportedProgram,
    recipe: Recipe,
    exclude: tuple[str, ...],
    layer_recipes: tuple[tuple[str, Recipe], ...],
    quantize_all: bool,
) -> list[dict[str, str]]:
    """Per matmul, in program order: the recipe ``qmlir compile`` would give it, and why."""
    return compile_decisions(program, recipe, exclude, layer_recipes, quantize_all)[0]


def compile_decisions(
    program: torch.export.ExportedProgram,
    recipe: Recipe,
    exclude: tuple[str, ...],
    layer_recipes: tuple[tuple[str, Recipe], ...],
    quantize_all: bool,
) -> tuple[list[dict[str, str]], tuple[str, ...]]:
    """:func:`matmul_decisions`, and the layers of the model's convolutions (kept in high
    precision: the recipes quantize matmuls only), as ``qmlir compile`` records them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch's pytree, copying the spec
        program = copy.deepcopy(program)  # the importer rewrites the graph the batches run
    text = import_program(program)
    with ir.Context():
        module = ir.Module.parse(text)
        FoldWeightViews().apply(module)  # as the compile: a weight through views is a weight
        QuantizeMatmuls(recipe, quantize_all, exclude, layer_recipes).apply(module)
        return [layer.to_json() for layer in layer_map(module)], convolution_layers(module)


class _LayerStats:
    """One matmul's figures, added up over the calibration batches."""

    def __init__(self, decision: dict[str, str], recipe: Recipe | None) -> None:
        self.decision = decision
        quantized = decision["matmul"] == OpKind.SCALED_MATMUL.value
        # the recipe that quantizes this matmul; None: it stays in high precision
        self.recipe = recipe if quantized and isinstance(recipe, ScalingRecipe) else None
        self.op = ""
        self.shapes: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        self.operands: list[OperandStats | None] = [None, None]
        self.weights: dict[int, torch.Tensor] = {}  # a weight's dequantized values, by operand
        self.signal = self.noise = 0.0

    def add(self, call: MatmulCall) -> None:
        if call.layer != self.decision["layer"]:
            raise QmlirError(
                f"internal: matmul of '{call.layer}' in torch met '{self.decision['layer']}' "
                "in the IR"
            )
        a, b = matmul_operands(call)
        self.op = call.op
        self.shapes.append((tuple(a.shape), tuple(b.shape)))
        recipe = self.recipe
        if recipe is None:
            return
        # Both operands as [..., rows, K]: the contraction runs along the last axis (a [K, N]
        # operand's columnwise blocks are the rowwise blocks of its transpose).
        linear = call.op == "linear"
        a_is_weight, b_is_weight = call.weight_operands
        a_deq = self._quantized(recipe, 0, a, a_is_weight)
        b_deq = self._quantized(recipe, 1, b if linear else b.transpose(-1, -2), b_is_weight)
        output = recompute_matmul(call, a_deq, b_deq if linear else b_deq.transpose(-1, -2))
        signal, noise = signal_and_noise(call.output.numpy(), output.numpy())
        self.signal += signal
        self.noise += noise

    def _quantized(
        self, recipe: ScalingRecipe, n: int, x: torch.Tensor, is_weight: bool
    ) -> torch.Tensor:
        """Operand ``n`` quantized → dequantized; its stats added to the batches' before. A
        weight is the same in every batch: quantized once."""
        if n in self.weights:
            return self.weights[n]
        deq, stats = quantize_operand(x, recipe, _role(is_weight))
        seen = self.operands[n]
        self.operands[n] = stats if seen is None else seen.merged(stats)
        if is_weight:
            self.weights[n] = deq
        return deq

    def result(self) -> LayerReport:
        entry = LayerReport(
            layer=self.decision["layer"],
            op=self.op,
            recipe=self.decision["recipe"],
            note=self.decision["note"],
            shapes=(
                _over_batches([s[0] for s in self.shapes]),
                _over_batches([s[1] for s in self.shapes]),
            ),
        )
        if self.recipe is None:
            return entry
        entry.output_sqnr_db = sqnr_db(self.signal, self.noise)
        stats = [s for s in self.operands if s is not None]
        weights = [s for s in stats if s.role == "weight"]
        activations = [s for s in stats if s.role == "activation"]
        entry.weight = weights[0] if weights else None
        entry.activation = activations[0] if activations else None
        entry.extra = activations[1:]
        return entry


def _over_batches(shapes: list[tuple[int, ...]]) -> Shape:
    """One operand's shape over the batches: a dim that varied as ``"min..max"``."""
    return tuple(
        sizes[0] if len(set(sizes)) == 1 else f"{min(sizes)}..{max(sizes)}"
        for sizes in zip(*shapes, strict=True)
    )


def _role(is_weight: bool) -> Role:
    return Role.WEIGHT if is_weight else Role.ACTIVATION


def matmul_operands(call: MatmulCall) -> tuple[torch.Tensor, torch.Tensor]:
    if call.op == "addmm":
        return call.args[1], call.args[2]
    return call.args[0], call.args[1]


def recompute_matmul(call: MatmulCall, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    args = list(call.args)
    if call.op == "addmm":
        args[1], args[2] = a, b
    else:
        args[0], args[1] = a, b
    with torch.no_grad():
        return call.target(*args)
