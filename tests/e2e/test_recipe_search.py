"""``compiler.search`` / ``qmlir search``: a recipe per layer under a bits-per-weight budget,
scored on the model's output, solved exactly, compiled back by ``compile --plan``."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import torch
from torch import nn

import compiler
from compiler.analysis import recipe_search
from compiler.analysis.recipe_search import _Layer, _solve, weight_bits
from passes.base.errors import QmlirError
from tests.e2e.cli_runner import run as cli

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

RECIPES = ("none", "fp8-current", "nvfp4")


class TwoHeads(nn.Module):
    """Two linears read one activation (as q, k, v do): they must share a recipe."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(64, 128)
        self.left = nn.Linear(128, 64)
        self.right = nn.Linear(128, 64)
        self.out = nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.inp(x))
        return self.out(torch.relu(self.left(h)) * torch.sigmoid(self.right(h)))


def model_and_inputs() -> tuple[nn.Module, tuple[torch.Tensor]]:
    torch.manual_seed(0)
    model = TwoHeads().eval()
    with torch.no_grad():
        model.out.weight.mul_(4)  # the output layer matters most
    return model, (torch.randn(16, 64),)


def test_weight_bits_count_codes_and_scales() -> None:
    assert weight_bits("none", (64, 128), 16) == 16
    assert weight_bits("fp8-current", (64, 128)) == 8 + 32 / 8192
    assert weight_bits("fp8-block", (256, 256)) == 8 + 32 * 4 / 65536
    assert weight_bits("mxfp8", (64, 128)) == 8.25
    assert weight_bits("mxfp4", (64, 128)) == 4.25
    assert weight_bits("nvfp4", (64, 128)) == 4.5 + 32 / 8192
    assert weight_bits("fp8-rowwise", (64, 128)) == 8 + 32 * 64 / 8192


def _size(groups: list[list[_Layer]], pick: tuple[str, ...]) -> float:
    return sum(
        x.numel * weight_bits(r, x.shape) for g, r in zip(groups, pick, strict=True) for x in g
    )


def test_the_solver_finds_the_best_plan_within_the_budget() -> None:
    """Against every assignment, on random scores: nothing that fits scores less, and the plan
    never exceeds the budget."""
    rng = np.random.default_rng(0)
    names = list(RECIPES)
    for trial in range(20):
        groups = [
            [
                _Layer(f"g{g}.{i}", int(rng.integers(1, 50)) * 64, (64, 64), 32, 1, f"a{g}")
                for i in range(int(rng.integers(1, 3)))
            ]
            for g in range(4)
        ]
        layers = [x for g in groups for x in g]
        scores = {
            x.name: {"none": 0.0} | {r: float(rng.random()) for r in names[1:]} for x in layers
        }
        budget = float(rng.uniform(4.6, 20))
        total = sum(x.numel for x in layers)
        best = math.inf
        for pick in itertools.product(names, repeat=len(groups)):
            if _size(groups, pick) <= budget * total:
                cost = sum(scores[x.name][r] for g, r in zip(groups, pick, strict=True) for x in g)
                best = min(best, cost)
        plan = _solve(groups, names, scores, budget)
        assert _size(groups, tuple(plan[g[0].name] for g in groups)) <= budget * total, trial
        assert all(len({plan[x.name] for x in g}) == 1 for g in groups)  # a group shares one
        got = sum(scores[x.name][plan[x.name]] for x in layers)
        assert got <= best + 1e-12, (trial, got, best)
    with pytest.raises(QmlirError, match="no plan fits 3 bits per weight: the smallest"):
        _solve(groups, names, scores, 3.0)
    # past the exact table's size: units of the budget, rounded up, never over it
    recipe_search.MAX_STATES = 16
    try:
        plan = _solve(groups, names, scores, budget)
    finally:
        recipe_search.MAX_STATES = 1 << 22
    assert _size(groups, tuple(plan[g[0].name] for g in groups)) <= budget * total


def test_a_search_fits_the_budget_and_its_prediction_holds(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    model, inputs = model_and_inputs()
    budget = weight_bits("nvfp4", (128, 64)) + 0.5
    plan = compiler.search(model, inputs, budget, RECIPES)
    assert set(plan) == {"inp", "left", "right", "out"}
    assert plan["left"] == plan["right"] and plan.groups == [["left", "right"]]
    assert plan.effective_bits <= budget
    uniform_bits, uniform_db = plan.uniform["nvfp4"]
    assert uniform_bits <= plan.effective_bits and plan.predicted_sqnr_db > uniform_db
    assert plan["out"] != "nvfp4"  # the layer that matters most keeps more bits
    assert plan.measured_sqnr_db is not None
    assert abs(plan.measured_sqnr_db - plan.predicted_sqnr_db) < 1.5, plan.to_json()
    # other budgets from the same scores: all nvfp4 at its own size, everything kept at 32
    assert set(plan.at_budget(plan.uniform["nvfp4"][0]).values()) == {"nvfp4"}
    assert set(plan.at_budget(32).values()) == {"none"}
    # the CLI writes the plan compile --plan reads; the artifact's layers follow it
    path = tmp_path / "two_heads.py"
    path.write_text(
        "from tests.e2e.test_recipe_search import model_and_inputs\n"
        "def build():\n"
        "    return model_and_inputs()\n"
    )
    out = tmp_path / "plan.json"  # two candidates: half the scoring runs
    page = tmp_path / "search.html"
    flags = ("--budget-bits", "7", "--recipes", "none,nvfp4", "--no-measure", "--html", str(page))
    code, stdout, _ = cli(capsys, "search", f"{path}:build", *flags, "-o", str(out))
    assert code == 0 and "plan" in stdout, stdout
    assert "the best plan at each budget" in stdout and "exact" in stdout
    assert page.read_text().count('class="uniform"') == 2  # none and nvfp4 on the plot
    written = json.loads(out.read_text())
    assert written["effective_bits"] <= 7 and written["layers"]["out"] == "none"
    assert set(written["layers"].values()) == {"none", "nvfp4"}
    art = tmp_path / "plan.vmfb"
    code, stdout, _ = cli(capsys, "compile", f"{path}:build", "--plan", str(out), "-o", str(art))
    assert code == 0, stdout
    got = {layer.layer: layer.recipe for layer in compiler.load(art).record.layers}
    assert got == written["layers"]
    code, _, stderr = cli(
        capsys, "search", f"{path}:build", "--budget-bits", "2", "-o", str(tmp_path / "x.json")
    )
    assert code != 0 and "no plan fits 2 bits per weight" in stderr


class Parallel(nn.Module):
    """Two linears, each its own output (and its own activation: no shared recipe), for a loss
    that reads one of them."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(64, 32)
        self.second = nn.Linear(64, 48)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.first(x), self.second(torch.tanh(x))


def test_the_fisher_score_is_the_gradient_weighted_output_change() -> None:
    """``search(..., loss=...)`` scores ModelOpt's way, ``Σ (∂loss/∂y ⊙ (y_q - y))²`` per
    layer: under ``loss = Σ first``'s outputs (a gradient of ones) the first layer's score is
    its own output noise, which the output metric measures as noise over signal; the second
    layer, which the loss does not read, scores 0 under every recipe."""
    torch.manual_seed(1)
    model = Parallel().eval()
    x = torch.randn(16, 64)
    with torch.no_grad():
        y_first = model(x)[0]
        signal = float((y_first.double() ** 2).sum() + (model(x)[1].double() ** 2).sum())

    def loss(outputs: tuple[torch.Tensor, torch.Tensor], _: torch.Tensor) -> torch.Tensor:
        return outputs[0].sum()  # the outputs as the model returns them

    fisher = compiler.search(model, (x,), 6.0, RECIPES, measure=False, loss=loss)
    output = compiler.search(model, (x,), 6.0, RECIPES, measure=False)
    assert fisher.metric == "fisher" and output.metric == "sqnr"
    assert fisher.to_json()["metric"].startswith("Fisher")
    for recipe in ("fp8-current", "nvfp4"):
        noise = output.scores["first"][recipe] * signal  # Σ (y_q - y)² of the first output
        assert fisher.scores["first"][recipe] == pytest.approx(noise, rel=1e-6)
        assert fisher.scores["second"][recipe] == 0.0
    # the budget goes to the layer the loss reads: the second stays in nvfp4 for free
    assert fisher["first"] == "fp8-current" and fisher["second"] == "nvfp4"
    assert fisher.at_budget(5.0).metric == "fisher"
    with pytest.raises(QmlirError, match="scalar"):
        compiler.search(model, (x,), 6.0, RECIPES, measure=False, loss=lambda out, _: out[0])
    # argmax-ce (the CLI's --loss, the fisher metric's default): the first output as logits
    # against its own argmax
    named = compiler.search(model, (x,), 6.0, RECIPES, measure=False, metric="fisher")
    assert named.metric == "fisher" and named.scores["second"]["nvfp4"] == 0.0
    assert named.scores["first"]["nvfp4"] > named.scores["first"]["fp8-current"] > 0


def test_the_kl_metric_reads_the_first_output_as_logits() -> None:
    """``metric="kl"``: the KL divergence of the first output's softmax from the f32 model's,
    mean per row; a layer that only the second output reads adds none."""
    torch.manual_seed(1)
    model = Parallel().eval()
    x = torch.randn(16, 64)
    plan = compiler.search(model, (x,), 6.0, RECIPES, measure=False, metric="kl")
    assert plan.metric == "kl" and plan.to_json()["metric"].startswith("KL")
    assert plan.scores["second"]["nvfp4"] == 0.0
    assert plan.scores["first"]["nvfp4"] > plan.scores["first"]["fp8-current"] > 0
    # the score itself: the first layer on nvfp4-dequantized operands (compiler.quantize, the
    # same compiled core), KL per row by torch, mean
    w = model.first.weight.detach().numpy()
    w_q = compiler.quantize(w, "nvfp4", role="weight").dequantize()
    x_q = compiler.quantize(x.numpy(), "nvfp4").dequantize()
    with torch.no_grad():
        ref = torch.log_softmax(model(x)[0].double(), -1)
        got = torch.from_numpy(x_q @ w_q.T).double() + model.first.bias.double()
        got = torch.log_softmax(got, -1)
    want = float((ref.exp() * (ref - got)).sum(-1).mean())
    assert plan.scores["first"]["nvfp4"] == pytest.approx(want, rel=1e-4)
    with pytest.raises(QmlirError, match="no search metric 'l2'"):
        compiler.search(model, (x,), 6.0, RECIPES, measure=False, metric="l2")
    with pytest.raises(QmlirError, match="a loss scores by the fisher metric, not 'kl'"):
        compiler.search(model, (x,), 6.0, RECIPES, measure=False, metric="kl", loss="argmax-ce")


def test_the_cli_scores_by_a_named_loss(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "two_heads.py"
    path.write_text(
        "from tests.e2e.test_recipe_search import model_and_inputs\n"
        "def build():\n"
        "    return model_and_inputs()\n"
    )
    out = tmp_path / "plan.json"
    flags = ("--budget-bits", "7", "--recipes", "none,nvfp4", "--no-measure")
    code, stdout, _ = cli(
        capsys, "search", f"{path}:build", *flags, "--loss", "argmax-ce", "-o", str(out)
    )
    assert code == 0 and "Fisher score alone" in stdout, stdout
    written = json.loads(out.read_text())
    assert written["metric"].startswith("Fisher") and written["effective_bits"] <= 7
    code, stdout, _ = cli(
        capsys, "search", f"{path}:build", *flags, "--metric", "kl", "-o", str(out)
    )
    assert code == 0 and "KL alone" in stdout, stdout
    assert json.loads(out.read_text())["metric"].startswith("KL")
