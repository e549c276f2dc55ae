"""``compiler.search``: one recipe per layer under a size budget, chosen by the model's output.

1. **Scores on the output.** The exported program runs in f32 on the calibration batches (the
   reference), then once per candidate layer and recipe with only that layer's operands through
   the recipe's compiled quantize core and back (``operand_stats.quantize_operand``, the
   artifact's IR), the rest of the model in f32. A layer's score under a recipe is the noise it
   adds to the model's output: ``Σ (y - y_ref)² / Σ y_ref²`` over every output element of every
   batch (a noise-to-signal ratio). Scores add up across layers, as small independent errors do:
   the predicted output SQNR of a plan is ``-10 log10(Σ its layers' scores)``. Given a
   ``loss``, the score is ModelOpt ``auto_quantize``'s Fisher estimate instead
   (:func:`_fisher_scores`: one f32 forward and backward per batch, then each layer and recipe
   on that layer's own output), and the "predicted SQNR" is ``-10 log10`` of its sum;
   ``metric="kl"`` scores by the KL divergence of the first output's softmax (logits) from the
   f32 model's, mean per row, likewise.
2. **Size.** A layer's weight costs ``numel x bits``, bits per recipe counting the weight's
   codes and its scales over its element count (:func:`weight_bits`: fp8-current 8 + 32/n,
   fp8-block 8 + 32 per 128x128 block, mxfp8 8 + 8/32, mxfp4 4 + 8/32, nvfp4 4 + 8/16 + 32/n,
   fp8-rowwise 8 + 32 per row, ``none`` the weight's own dtype). A plan's effective bits per
   weight are its layers' bits over their element count.
3. **Exact solver.** Layers reading one activation (q, k, v of an attention; the matmuls the
   recipe pass would cast the same input for) form a group that takes one recipe. A dynamic
   program over the groups finds the assignment of least total score whose size fits ``budget
   x elements`` bits, sizes in units of their greatest common divisor (exact); a model whose
   table would pass :data:`MAX_STATES` states counts in 1/:data:`UNITS` of the budget, each
   size rounded up (never over the budget, optimal over those units).
4. **Measured.** With ``measure`` (the API's compile), the plan is compiled (``compile(...,
   "none", layer_recipes=plan)``) and run on the batches: its output SQNR against the f32
   model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from compiler.analysis.layer_accuracy import (
    Calibration,
    matmul_decisions,
    matmul_operands,
    recompute_matmul,
)
from compiler.analysis.matmul_capture import (
    MATMULS,
    WEIGHT_VIEWS,
    MatmulCall,
    as_f32,
    as_tensor,
)
from compiler.analysis.operand_stats import quantize_operand
from compiler.frontend.export import export_model
from compiler.frontend.model_source import ModelSource
from passes.base.errors import QmlirError
from passes.ir.dialect import OpKind
from passes.recipes import Role, ScalingRecipe, get_recipe

MAX_STATES = 1 << 22  # the exact dynamic program's largest table
OUTPUT, KL, FISHER = "sqnr", "kl", "fisher"
METRICS = {
    OUTPUT: "output SQNR (noise-to-signal of the model's output, summed over layers)",
    KL: "KL divergence of the first output's softmax from the f32 model's (mean per row, "
    "summed over layers)",
    FISHER: "Fisher (sum of (dloss/dy * (y_q - y))^2 per layer output y, summed over layers)",
}
UNITS = 4096  # past it: the budget's resolution
# bits of a weight element as the model holds it, for ``none``
_DTYPE_BITS = {torch.float32: 32, torch.bfloat16: 16, torch.float16: 16, torch.float64: 64}


class SearchPlan(dict):
    """Layer → recipe (``compile(..., layer_recipes=plan)`` takes it as it is), with what the
    search found: ``budget_bits``, ``effective_bits`` (weight and scale bits over the weight
    elements), ``predicted_sqnr_db`` (from the layers' scores), ``measured_sqnr_db`` (the
    compiled plan's, or None), ``scores`` (layer → recipe → output noise-to-signal),
    ``uniform`` (recipe → (effective bits, predicted SQNR) of every layer in that recipe) and
    ``groups`` (the layers that share a recipe)."""

    budget_bits: float
    effective_bits: float
    metric: str  # what the scores are: OUTPUT, KL or FISHER
    predicted_sqnr_db: float
    measured_sqnr_db: float | None
    scores: dict[str, dict[str, float]]
    uniform: dict[str, tuple[float, float]]
    groups: list[list[str]]
    sizes: dict[str, tuple[int, tuple[int, ...], int]]  # layer: (elements, shape, dtype bits)
    _candidates: list[list[_Layer]]
    _recipes: list[str]

    def at_budget(self, budget_bits: float) -> SearchPlan:
        """The best plan at another budget, from the same scores (no model runs): points of
        the accuracy-for-size curve."""
        plan = _plan(self._candidates, self._recipes, self.scores, budget_bits)
        plan.metric = self.metric
        return plan

    def curve(self, points: int = 33) -> list[SearchPlan]:
        """The accuracy-for-size curve: the best plans at ``points`` budgets spread evenly from
        the smallest uniform recipe's bits to the largest's, each once, every one more
        accurate than any smaller (a plan no more accurate than a smaller one is left out)."""
        sizes = [bits for bits, _ in self.uniform.values()]
        low, high = min(sizes), max(sizes)
        found: dict[tuple[str, ...], SearchPlan] = {}
        for i in range(points):
            budget = low + (high - low) * i / max(points - 1, 1)
            plan = self.at_budget(budget * (1 + 1e-12))  # the uniform sizes themselves fit
            found.setdefault(tuple(plan[k] for k in sorted(plan)), plan)
        curve: list[SearchPlan] = []
        for plan in sorted(found.values(), key=lambda p: (p.effective_bits, -p.predicted_sqnr_db)):
            if not curve or plan.predicted_sqnr_db > curve[-1].predicted_sqnr_db:
                curve.append(plan)
        return curve

    def to_json(self) -> dict[str, Any]:
        return {
            "budget_bits": self.budget_bits,
            "effective_bits": self.effective_bits,
            "predicted_sqnr_db": self.predicted_sqnr_db,
            "measured_sqnr_db": self.measured_sqnr_db,
            "metric": METRICS[self.metric],
            "layers": dict(self),
            "uniform": {
                r: {"effective_bits": b, "predicted_sqnr_db": s}
                for r, (b, s) in self.uniform.items()
            },
            "groups": self.groups,
            "scores": self.scores,
        }


@dataclass
class _Layer:
    name: str
    numel: int
    shape: tuple[int, ...]  # the weight's, as the matmul reads it
    dtype_bits: int
    weight_side: int  # which operand is the weight (0: a, 1: b)
    activation: str  # the fx node of its activation operand (a group's key)


def weight_bits(recipe: str, shape: tuple[int, ...], dtype_bits: int = 32) -> float:
    """Bits per weight element under ``recipe``: codes plus scales over the element count (a
    2-D weight ``[rows, K]`` with K the contraction; block scales per 128x128 / 1x32 / 1x16)."""
    n = max(int(np.prod(shape)), 1)
    rows, k = (shape[0], shape[-1]) if len(shape) >= 2 else (1, shape[0])
    if recipe == "none":
        return float(dtype_bits)
    if recipe in ("fp8-current", "fp8-delayed"):
        return 8 + 32 / n
    if recipe == "fp8-block":
        return 8 + 32 * math.ceil(rows / 128) * math.ceil(k / 128) / n
    if recipe == "fp8-rowwise":
        return 8 + 32 * rows / n
    if recipe == "mxfp8":
        return 8 + 8 / 32
    if recipe == "mxfp4":
        return 4 + 8 / 32
    if recipe == "nvfp4":
        return 4 + 8 / 16 + 32 / n
    raise QmlirError(f"no size rule for recipe '{recipe}'")


class _Runner(torch.fx.Interpreter):
    """The program in f32, the matmuls of ``plan``'s layers on quantized-dequantized operands;
    records each matmul's layer, weight and activation node."""

    def __init__(self, gm: torch.fx.GraphModule, constants: set[str], plan: dict) -> None:
        super().__init__(gm)
        self.constants = set(constants)
        self.plan = plan
        self.layers: list[_Layer] = []
        self.weights: dict[tuple[str, str], torch.Tensor] = {}  # (layer, recipe): dequantized
        self.dtypes: dict[str, torch.dtype] = {}  # a weight node's dtype as the model holds it
        self.record: list[_WeightMatmul] | None = None  # the Fisher pass: every weight matmul

    def run_node(self, n: torch.fx.Node) -> Any:
        result = super().run_node(n)
        if n.op == "call_function" and n.target in WEIGHT_VIEWS and self._weight(n.args[0]):
            self.constants.add(n.name)
        if n.op != "call_function" or n.target not in MATMULS:
            return result
        kind = MATMULS[n.target]
        nodes = n.args[1:3] if kind == "addmm" else n.args[0:2]
        flags = [self._weight(a) for a in nodes]
        if flags.count(True) != 1:
            return result
        side = flags.index(True)
        args = tuple(self.env[a] if isinstance(a, torch.fx.Node) else a for a in n.args)
        stack = n.meta.get("nn_module_stack") or {}
        layer = list(stack.values())[-1][0] if stack else ""
        call = MatmulCall(kind, n.target, args, result, (side == 0, side == 1), layer)
        # both operands as [..., rows, K], the contraction along the last axis (a [K, N] b
        # operand's columnwise blocks are the rowwise blocks of its transpose)
        a, b = matmul_operands(call)
        linear = kind == "linear"
        b_rows = b if linear else b.transpose(-1, -2)
        weight = (a, b_rows)[side]
        dtype = self.dtypes.get(nodes[side].name, torch.float32)
        self.layers.append(
            _Layer(
                layer,
                weight.numel(),
                tuple(weight.shape),
                _DTYPE_BITS.get(dtype, 32),
                side,
                nodes[1 - side].name,
            )
        )
        matmul = _WeightMatmul(layer, call, a, b_rows, side)
        if self.record is not None:
            self.record.append(matmul)
        recipe = self.plan.get(layer)
        if recipe is None:
            return result
        return matmul.quantized(recipe, self.weights)

    def _weight(self, value: Any) -> bool:
        return isinstance(value, torch.fx.Node) and value.name in self.constants


@dataclass
class _WeightMatmul:
    """A weight matmul as the program ran it: its operands as ``[..., rows, K]`` (``b_rows``:
    the b operand with the contraction last) and which is the weight (``side``)."""

    layer: str
    call: MatmulCall
    a: torch.Tensor
    b_rows: torch.Tensor
    side: int

    def quantized(
        self, recipe: ScalingRecipe, weights: dict[tuple[str, str], torch.Tensor]
    ) -> torch.Tensor:
        """The matmul on ``recipe``'s quantized-dequantized operands; the weight's kept in
        ``weights`` (the same in every run: quantized once)."""
        key = (self.layer, recipe.name)
        operands = (self.a, self.b_rows)
        if key not in weights:
            weights[key] = quantize_operand(operands[self.side], recipe, Role.WEIGHT)[0]
        x = quantize_operand(operands[1 - self.side], recipe, Role.ACTIVATION)[0]
        a, b = (weights[key], x) if self.side == 0 else (x, weights[key])
        return recompute_matmul(
            self.call, a, b if self.call.op == "linear" else b.transpose(-1, -2)
        )


Loss = Callable[..., torch.Tensor]  # (the model's outputs, *its inputs) -> a scalar


def argmax_cross_entropy(outputs: Any, *_: Any) -> torch.Tensor:
    """The loss ``qmlir search --loss argmax-ce`` names: the cross-entropy of the model's first
    output, read as logits over its last dim, against its own argmax (in the Fisher pass, the
    f32 model's choices): a loss for a classifier or an LM without labels."""
    logits = next(iter(_tensors(outputs)), None)
    if logits is None or logits.dim() < 1 or logits.shape[-1] < 2:
        raise QmlirError("--loss argmax-ce reads the model's first output as logits: it has none")
    flat = logits.float().reshape(-1, logits.shape[-1])
    return torch.nn.functional.cross_entropy(flat, flat.detach().argmax(-1))


LOSSES: dict[str, Loss] = {"argmax-ce": argmax_cross_entropy}


def search_plan(
    source: ModelSource,
    budget_bits: float,
    recipes: Sequence[str],
    batches: Sequence[Calibration] = (),
    measure: Callable[[dict[str, str]], Any] | None = None,
    loss: Loss | str | None = None,
    metric: str | None = None,
) -> SearchPlan:
    """The search of the module's docstring on ``source`` (its example inputs, or ``batches``);
    ``measure`` compiles a plan (``compile(model, inputs, "none", layer_recipes=plan)``) for
    its measured SQNR. ``metric``: ``sqnr`` (the output's noise, the default), ``kl`` (the KL
    divergence of the first output's softmax over its last dim, logits, from the f32 model's)
    or ``fisher`` (:func:`_fisher_scores` of ``loss``, default ``argmax-ce``; a ``loss`` alone
    implies it)."""
    metric = metric or (FISHER if loss is not None else OUTPUT)
    if metric not in METRICS:
        raise QmlirError(f"no search metric '{metric}' (choose from {', '.join(METRICS)})")
    if loss is not None and metric != FISHER:
        raise QmlirError(f"a loss scores by the fisher metric, not '{metric}'")
    if metric == FISHER and loss is None:
        loss = "argmax-ce"
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise QmlirError(f"no loss named '{loss}' (choose from {', '.join(LOSSES)})")
        loss = LOSSES[loss]
    names = list(dict.fromkeys(recipes))
    scaling = {r: get_recipe(r) for r in names if r != "none"}
    if not scaling:
        raise QmlirError("search needs at least one recipe that quantizes")
    if not all(isinstance(r, ScalingRecipe) for r in scaling.values()):
        raise QmlirError("search takes recipes that quantize, and none")
    program = export_model(source)
    runs = [tuple(as_tensor(x) for x in b.inputs) for b in batches] or [
        tuple(source.example_inputs)
    ]
    default = next(iter(scaling.values()))
    decisions = matmul_decisions(program, default, (), (), False)
    quantized = {d["layer"] for d in decisions if d["matmul"] == OpKind.SCALED_MATMUL.value}
    reference, layers, firsts = _run(program, runs, {})
    candidates = [layer for layer in layers if layer.name in quantized]
    if not candidates:
        raise QmlirError("the model has no matmul with a weight that a recipe quantizes")
    if len({layer.name for layer in candidates}) != len(candidates):
        raise QmlirError("internal: two weight matmuls of one layer; search takes one each")
    signal = sum(float((y.double() ** 2).sum()) for y in reference) or 1.0
    scores: dict[str, dict[str, float]] = {layer.name: {"none": 0.0} for layer in candidates}
    if metric == FISHER:
        assert callable(loss)
        scores = _fisher_scores(program, runs, [c.name for c in candidates], scaling, loss)
    else:
        for layer in candidates:
            for name, recipe in scaling.items():
                outputs, _, got = _run(program, runs, {layer.name: recipe})
                if metric == KL:
                    scores[layer.name][name] = _kl(got, firsts)
                    continue
                noise = sum(
                    float(((y.double() - r.double()) ** 2).sum())
                    for y, r in zip(outputs, reference, strict=True)
                )
                scores[layer.name][name] = noise / signal
    groups: dict[str, list[_Layer]] = {}
    for layer in candidates:
        groups.setdefault(layer.activation, []).append(layer)
    result = _plan(list(groups.values()), names, scores, budget_bits)
    result.metric = metric
    if measure is not None:
        result.measured_sqnr_db = _measure(measure(dict(result)), runs, reference)
    return result


def _fisher_scores(
    program: torch.export.ExportedProgram,
    runs: list[tuple[Any, ...]],
    names: list[str],
    scaling: dict[str, Any],
    loss: Loss,
) -> dict[str, dict[str, float]]:
    """ModelOpt ``auto_quantize``'s gradient score: for layer output ``y`` (its matmul's, in
    f32) and a recipe, ``Σ (∂loss/∂y ⊙ (y_q - y))²`` over every batch, ``y_q`` the matmul on
    the recipe's quantized-dequantized operands (the rest of the model in f32), the gradient
    of ``loss(outputs, *inputs)`` taken once per batch in f32: a diagonal Fisher estimate of
    the loss the layer's quantization adds, each layer alone (no run of the model per layer
    and recipe)."""
    scores = {n: {"none": 0.0, **dict.fromkeys(scaling, 0.0)} for n in names}
    wanted = set(names)
    weights: dict[tuple[str, str], torch.Tensor] = {}
    for args in runs:
        runner, lifted = _runner(program, args, {})
        runner.record = []
        # the weights require gradients so every matmul's result is in autograd's graph
        lifted = [
            v.detach().requires_grad_(True)
            if isinstance(v, torch.Tensor) and v.is_floating_point()
            else v
            for v in lifted
        ]
        with torch.enable_grad():
            outputs = runner.run(*lifted)
            spec = program.call_spec.out_spec
            if spec is not None:  # as the model returns them (a tensor, a tuple, a dict)
                outputs = torch.utils._pytree.tree_unflatten(list(outputs), spec)
            value = loss(outputs, *args)
            if not isinstance(value, torch.Tensor) or value.numel() != 1:
                raise QmlirError("search's loss must return a scalar tensor")
            records = [
                r for r in runner.record if r.layer in wanted and r.call.output.requires_grad
            ]
            grads = torch.autograd.grad(
                value, [r.call.output for r in records], allow_unused=True, materialize_grads=True
            )
        for matmul, grad in zip(records, grads, strict=True):
            y = matmul.call.output.detach().double()
            for name, recipe in scaling.items():
                diff = matmul.quantized(recipe, weights).double() - y
                scores[matmul.layer][name] += float(((grad.double() * diff) ** 2).sum())
    return scores


def _plan(
    groups: list[list[_Layer]], names: list[str], scores: dict, budget_bits: float
) -> SearchPlan:
    """The solved plan with its figures (no measurement)."""
    plan = _solve(groups, names, scores, budget_bits)
    candidates = [x for g in groups for x in g]
    elements = sum(x.numel for x in candidates)
    bits = sum(x.numel * weight_bits(plan[x.name], x.shape, x.dtype_bits) for x in candidates)
    result = SearchPlan(plan)
    result.budget_bits = float(budget_bits)
    result.effective_bits = bits / elements
    result.predicted_sqnr_db = sqnr_db(sum(scores[layer][plan[layer]] for layer in plan))
    result.measured_sqnr_db = None
    result.scores = scores
    result.groups = [[x.name for x in g] for g in groups if len(g) > 1]
    result.sizes = {x.name: (x.numel, x.shape, x.dtype_bits) for x in candidates}
    result.uniform = {
        r: (
            sum(x.numel * weight_bits(r, x.shape, x.dtype_bits) for x in candidates) / elements,
            sqnr_db(sum(scores[x.name][r] for x in candidates)),
        )
        for r in names
    }
    result.metric = OUTPUT
    result._candidates, result._recipes = groups, names
    return result


def sqnr_db(noise_to_signal: float) -> float:
    """An SQNR in dB from a noise-to-signal ratio (inf for no noise)."""
    return math.inf if noise_to_signal <= 0 else -10 * math.log10(noise_to_signal)


def _solve(
    groups: list[list[_Layer]], names: list[str], scores: dict, budget_bits: float
) -> dict[str, str]:
    """The assignment of least total score within the budget: a dynamic program over sizes in
    units of the greatest common divisor of every option's size in bits (exact), or, where that
    takes more than :data:`MAX_STATES` states, in units of 1/:data:`UNITS` of the budget,
    rounded up (never over the budget)."""
    elements = sum(layer.numel for g in groups for layer in g)
    budget = budget_bits * elements
    sizes = [
        [round(sum(x.numel * weight_bits(n, x.shape, x.dtype_bits) for x in g)) for n in names]
        for g in groups
    ]
    common = math.gcd(*(size for row in sizes for size in row))
    if budget / common <= MAX_STATES:
        capacity = math.floor(budget / common + 1e-9)
        units = [[size // common for size in row] for row in sizes]
    else:
        capacity = UNITS
        units = [[math.ceil(size * UNITS / budget - 1e-9) for size in row] for row in sizes]
    inf = math.inf
    best = np.full(capacity + 1, inf)
    best[0] = 0.0
    choices: list[np.ndarray] = []
    for group, row in zip(groups, units, strict=True):
        new = np.full(capacity + 1, inf)
        pick = np.full(capacity + 1, -1, dtype=np.int8)
        for i, name in enumerate(names):
            if row[i] > capacity:
                continue
            cost = sum(scores[x.name][name] for x in group)
            shifted = np.full(capacity + 1, inf)
            shifted[row[i] :] = best[: capacity + 1 - row[i]] + cost
            better = shifted < new
            new[better], pick[better] = shifted[better], i
        choices.append(pick)
        best = new
    if not np.isfinite(best).any():
        smallest = sum(min(row) for row in sizes)
        raise QmlirError(
            f"no plan fits {budget_bits:g} bits per weight: the smallest, every layer in its "
            f"smallest recipe, takes {smallest / elements:.3f} (recipes: {', '.join(names)})"
        )
    at = int(np.argmin(best))
    plan: dict[str, str] = {}
    for group, pick, row in zip(reversed(groups), reversed(choices), reversed(units), strict=True):
        i = int(pick[at])
        plan.update(dict.fromkeys((x.name for x in group), names[i]))
        at -= row[i]
    return {x.name: plan[x.name] for g in groups for x in g}


def _run(
    program: torch.export.ExportedProgram, runs: list[tuple[Any, ...]], plan: dict
) -> tuple[list[torch.Tensor], list[_Layer], list[torch.Tensor]]:
    """The program's outputs (flattened, f32) on every batch with ``plan``'s layers quantized,
    the weight matmuls of the first batch, and each batch's first output as it is (f32)."""
    outputs: list[torch.Tensor] = []
    firsts: list[torch.Tensor] = []
    layers: list[_Layer] = []
    for index, args in enumerate(runs):
        runner, lifted = _runner(program, args, plan)
        with torch.no_grad():
            out = runner.run(*lifted)
        tensors = [t.detach().float() for t in _tensors(out)]
        outputs.append(torch.cat([t.reshape(-1) for t in tensors]) if tensors else torch.zeros(0))
        firsts.append(tensors[0] if tensors else torch.zeros(0))
        if index == 0:
            layers = runner.layers
    return outputs, layers, firsts


def _kl(got: list[torch.Tensor], reference: list[torch.Tensor]) -> float:
    """The mean over every row of every batch of ``KL(softmax(reference) || softmax(got))``,
    the first output's last dim as logits."""
    total, rows = 0.0, 0
    for g, r in zip(got, reference, strict=True):
        if r.dim() < 1 or r.shape[-1] < 2:
            raise QmlirError("the kl metric reads the model's first output as logits: it has none")
        p = torch.log_softmax(r.double().reshape(-1, r.shape[-1]), -1)
        q = torch.log_softmax(g.double().reshape(-1, r.shape[-1]), -1)
        total += float((p.exp() * (p - q)).sum())
        rows += p.shape[0]
    return max(total / max(rows, 1), 0.0)


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value] if value.is_floating_point() else []
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _runner(
    program: torch.export.ExportedProgram, inputs: tuple[Any, ...], plan: dict
) -> tuple[_Runner, list[Any]]:
    signature = program.graph_signature
    lifted: list[Any] = []
    constants: set[str] = set()
    dtypes: dict[str, torch.dtype] = {}
    user = iter(inputs)
    for spec in signature.input_specs:
        name = spec.arg.name
        if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT:
            lifted.append(as_f32(next(user)))
            continue
        value = program.state_dict.get(spec.target, program.constants.get(spec.target))
        if isinstance(value, torch.Tensor):
            dtypes[name] = value.dtype
        lifted.append(as_f32(value))
        constants.add(name)
    runner = _Runner(program.graph_module, constants, plan)
    runner.dtypes = dtypes
    return runner, lifted


def _measure(art: Any, runs: list[tuple[Any, ...]], reference: list[torch.Tensor]) -> float:
    """The compiled plan's output SQNR against the f32 program's, over every batch."""
    signal = noise = 0.0
    for args, ref in zip(runs, reference, strict=True):
        out = art(*[a.numpy() if isinstance(a, torch.Tensor) else a for a in args])
        got = torch.cat([torch.as_tensor(np.asarray(t)).float().reshape(-1) for t in _flat(out)])
        signal += float((ref.double() ** 2).sum())
        noise += float(((got.double() - ref.double()) ** 2).sum())
    return sqnr_db(noise / (signal or 1.0))


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flat(v)]
    return [value]
