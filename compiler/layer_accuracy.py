"""``qmlir report``: how much each layer's matmul loses to its recipe, measured on real inputs.

The layer decisions are the compiler's own: the model is exported and imported and the recipe
pass runs with the user's ``--exclude``/``--layer-recipe``, exactly as ``qmlir compile`` would.
The exported program then runs in f32 on the given inputs, recording every matmul's operands and
output. Each operand of a quantized matmul goes through the recipe's compiled quantize core
(``compiler.quantize``: the same IR as the artifact) and back (``dequantize``); the layer is
recomputed with the dequantized operands and compared with its f32 output. So a layer's output
SQNR isolates its own quantization error: its inputs are the f32 model's.

fp8-delayed activations are assessed in the steady state on these inputs (the amax history
holds this input's amax): ``scale = fp8_max / amax / 2^margin``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import torch
from iree.compiler import ir

from compiler.dequantize import decode_elements
from compiler.export import export_model
from compiler.importer import import_program
from compiler.metrics import compare
from compiler.model_source import ModelSource
from compiler.pipeline import layer_map
from compiler.quantize_api import QuantizedTensor, quantize
from passes.errors import QmlirError
from passes.quantize_matmuls import QuantizeMatmuls
from passes.recipes import Recipe

_MATMULS = {
    torch.ops.aten.linear.default: "linear",
    torch.ops.aten.mm.default: "mm",
    torch.ops.aten.addmm.default: "addmm",
    torch.ops.aten.matmul.default: "matmul",
    torch.ops.aten.bmm.default: "bmm",
}
_MAX_CODE = {"e4m3": 448.0, "e5m2": 57344.0, "e2m1": 6.0}
# Half the step below the largest value, relative to it: a value up to this far past the largest
# value rounds to it even in a format with more range, so it is rounded, not clipped.
_HALF_STEP_AT_MAX = {"e4m3": 16.0 / 448.0, "e5m2": 4096.0 / 57344.0, "e2m1": 1.0 / 6.0}


@dataclass
class OperandStats:
    """One quantized operand: SQNR of its dequantized values, the share of its nonzero finite
    elements that became 0 (underflow) and that were clipped to the format's largest value
    (saturated), and the base-2 exponents of its scales (one per block)."""

    role: str
    sqnr_db: float
    underflow: float
    saturated: float
    scale_exponents: np.ndarray


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
    args = tuple(source.example_inputs) if inputs is None else tuple(_as_tensor(x) for x in inputs)
    if inputs is not None and source.program is None:  # export at the calibration shapes
        source = dataclasses.replace(source, example_inputs=args)
    program = export_model(source)
    captured = _capture_matmuls(program, args)  # first: the importer rewrites the graph
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


@dataclass
class _MatmulCall:
    op: str
    target: Any
    args: tuple[Any, ...]
    output: torch.Tensor
    weight_operands: tuple[bool, bool]  # (a, b) is a parameter, buffer or constant
    layer: str  # the module path, as the importer names the op's location


class _Recorder(torch.fx.Interpreter):
    def __init__(self, gm: torch.fx.GraphModule, constants: set[str]) -> None:
        super().__init__(gm)
        self.constants = constants
        self.calls: list[_MatmulCall] = []

    def run_node(self, n: torch.fx.Node) -> Any:
        result = super().run_node(n)
        if n.op == "call_function" and n.target in _MATMULS:
            kind = _MATMULS[n.target]
            operands = n.args[1:3] if kind == "addmm" else n.args[0:2]
            flags = tuple(
                isinstance(a, torch.fx.Node) and a.name in self.constants for a in operands
            )
            args = tuple(self.env[a] if isinstance(a, torch.fx.Node) else a for a in n.args)
            stack = n.meta.get("nn_module_stack") or {}
            layer = list(stack.values())[-1][0] if stack else ""
            self.calls.append(_MatmulCall(kind, n.target, args, result, flags, layer))  # type: ignore[arg-type]
        return result


def _capture_matmuls(
    program: torch.export.ExportedProgram, inputs: tuple[Any, ...]
) -> list[_MatmulCall]:
    """Runs the exported program in f32 on ``inputs``; every matmul's operands and output."""
    signature = program.graph_signature
    lifted: list[Any] = []
    constants: set[str] = set()
    user = iter(inputs)
    for spec in signature.input_specs:
        name = spec.arg.name
        if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT:
            try:
                value = next(user)
            except StopIteration:
                raise QmlirError("the model takes more inputs than were given") from None
            lifted.append(_as_f32(value))
            continue
        target = spec.target
        value = program.state_dict.get(target, program.constants.get(target))
        if value is None:
            raise QmlirError(f"internal: no value for the program's input '{target}'")
        lifted.append(_as_f32(value))
        constants.add(name)
    if next(user, None) is not None:
        raise QmlirError(f"the model takes {len(signature.user_inputs)} inputs; more were given")
    recorder = _Recorder(program.graph_module, constants)
    try:
        with torch.no_grad():
            recorder.run(*lifted)
    except Exception as e:
        raise QmlirError(f"the model does not run on these inputs: {_first_line(e)}") from e
    return recorder.calls


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _as_tensor(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return torch.from_numpy(
            np.ascontiguousarray(x.astype(np.float32) if x.dtype.kind == "V" else x)
        )
    return x


def _as_f32(value: Any) -> Any:
    tensor = torch.as_tensor(value) if isinstance(value, np.ndarray) else value
    if isinstance(tensor, torch.Tensor) and tensor.is_floating_point():
        return tensor.detach().float()
    return tensor


def _layer_report(
    call: _MatmulCall, decision: dict[str, str], recipe: Recipe | None
) -> LayerReport:
    a, b = _operands(call)
    entry = LayerReport(
        layer=decision["layer"],
        op=call.op,
        recipe=decision["recipe"],
        note=decision["note"],
        shapes=(tuple(a.shape), tuple(b.shape)),
    )
    if decision["matmul"] != "scaled_matmul" or recipe is None:
        return entry
    # Both operands as [..., rows, K]: the contraction runs along the last axis (a [K, N]
    # operand's columnwise blocks are the rowwise blocks of its transpose).
    a_rows = a
    b_rows = b if call.op == "linear" else b.transpose(-1, -2)
    a_is_weight, b_is_weight = call.weight_operands
    qa, a_stats = _quantize_operand(a_rows, recipe, a_is_weight)
    qb, b_stats = _quantize_operand(b_rows, recipe, b_is_weight)
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


def _operands(call: _MatmulCall) -> tuple[torch.Tensor, torch.Tensor]:
    if call.op == "addmm":
        return call.args[1], call.args[2]
    return call.args[0], call.args[1]


def _recompute(call: _MatmulCall, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    args = list(call.args)
    if call.op == "addmm":
        args[1], args[2] = a, b
    else:
        args[0], args[1] = a, b
    with torch.no_grad():
        return call.target(*args)


def _quantize_operand(
    x: torch.Tensor, recipe: Recipe, is_weight: bool
) -> tuple[torch.Tensor, OperandStats]:
    """Quantize → dequantize ``x`` (contraction along its last axis) as ``recipe`` does."""
    role = "weight" if is_weight else "activation"
    values = x.detach().float().contiguous().numpy()
    if recipe.name == "fp8-delayed" and not is_weight:
        deq, codes_max, exponents = _delayed_steady_state(values, recipe)
        fmt_name = recipe.element_format.name  # type: ignore[attr-defined]
    else:
        q = quantize(values, recipe, role=role)
        deq = q.dequantize()
        codes_max = _at_max_code(q).reshape(values.shape)
        fmt_name = q.element_format
        exponents = _scale_exponents(q)
    deq = deq.reshape(values.shape)
    stats = OperandStats(
        role=role,
        sqnr_db=compare(values, deq).sqnr_db,
        underflow=_share((values != 0) & np.isfinite(values) & (deq == 0), values),
        saturated=_share(codes_max & np.isfinite(values) & _clipped(values, deq, fmt_name), values),
        scale_exponents=exponents,
    )
    return torch.from_numpy(deq), stats


def _clipped(values: np.ndarray, deq: np.ndarray, fmt: str) -> np.ndarray:
    """At the max code, ``|x|`` beyond it by more than half a step: clipped, not rounded."""
    limit = np.abs(deq).astype(np.float64) * (1.0 + _HALF_STEP_AT_MAX[fmt])
    return np.abs(values).astype(np.float64) > limit


def _share(mask: np.ndarray, values: np.ndarray) -> float:
    nonzero = int(np.count_nonzero(values))
    return float(np.count_nonzero(mask)) / nonzero if nonzero else 0.0


def _at_max_code(q: QuantizedTensor) -> np.ndarray:
    """Elements whose code is ± the format's largest finite value, ``[rows, K]``."""
    rows, columns = q.quantized_shape
    values = decode_elements(q.data.reshape(rows, -1), q.element_format, columns)
    return np.abs(values) == _MAX_CODE[q.element_format]


def _scale_exponents(q: QuantizedTensor) -> np.ndarray:
    """log2 of each (decode) scale, rounded down: where the recipe put each block's range."""
    if q.scale_format == "e8m0":
        codes = q.scale.astype(np.int32).ravel()
        return (codes[codes != 0xFF] - 127).astype(np.int32)
    if q.scale_format == "e4m3":
        scales = q.scale.view(ml_dtypes.float8_e4m3fn).astype(np.float64).ravel()
        if q.global_scale is not None:
            scales = scales * float(q.global_scale.reshape(()))
    else:
        scales = q.scale.astype(np.float64).ravel()
    scales = scales[np.isfinite(scales) & (scales > 0)]
    return np.floor(np.log2(scales)).astype(np.int32)


def _delayed_steady_state(values: np.ndarray, recipe: Recipe) -> tuple[np.ndarray, ...]:
    fmt = recipe.element_format  # type: ignore[attr-defined]
    finite = np.abs(values[np.isfinite(values)])
    amax = float(finite.max()) if finite.size else 0.0
    margin = float(recipe.margin)  # type: ignore[attr-defined]
    scale = np.float32(fmt.max_finite / amax / 2.0**margin) if amax > 0 else np.float32(1.0)
    scaled = np.clip(values * scale, -fmt.max_finite, fmt.max_finite)
    codes = scaled.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    deq = (codes * (np.float32(1.0) / scale)).astype(np.float32)
    exponent = np.array([math.floor(math.log2(1.0 / float(scale)))], dtype=np.int32)
    return deq, np.abs(codes) == fmt.max_finite, exponent
