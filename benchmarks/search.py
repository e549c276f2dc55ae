"""Searched per-layer plans against uniform recipes and a greedy per-layer rule, on held-out data.

For MiniLM (real weights; searched on the sample's 8 sentences, measured on 8 others) and the
decoder sample (searched on one batch of token ids, measured on another): ``compiler.search``
at budgets of nvfp4's effective bits + 0.5, 6, and uniform fp8-current's effective bits (8 and
its per-tensor scales), each plan compiled and measured; every uniform recipe; and the greedy
rule ``report --suggest`` follows (start from nvfp4, give fp8-current to the layers with the
lowest per-layer SQNR in ``compiler.report``, worst first, while the budget holds) at the first
budget, and for the decoder the plan the Fisher score finds there (``search(..., loss=...)``).
Printed: effective bits, predicted SQNR (the search's), held-out cosine against f32 (mean and
worst row) and held-out SQNR.

    .venv/bin/python benchmarks/search.py [--models minilm,decoder]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

import compiler
from benchmarks.calibration import held_out_models, row_cosines
from compiler.analysis.recipe_search import weight_bits

RECIPES = ("none", "fp8-current", "mxfp8", "nvfp4")


def _compare(art: Any, held_out: tuple[torch.Tensor, ...], reference: np.ndarray) -> str:
    got = np.asarray(art(*[t.numpy() for t in held_out])).reshape(len(reference), -1)
    want = reference.reshape(len(reference), -1)
    cos = row_cosines(got, want)
    sqnr = 10 * np.log10((want.astype(np.float64) ** 2).sum() / ((got - want) ** 2).sum())
    return f"{cos.mean():.5f} | {cos.min():.5f} | {sqnr:.2f}"


def _greedy(
    model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], plan: Any, budget: float
) -> dict[str, str]:
    """nvfp4 everywhere, then fp8-current for the layers with the lowest per-layer SQNR under
    nvfp4 (``report``'s), worst first, while the plan's bits stay within ``budget``."""
    report = compiler.report(model, inputs, "nvfp4")
    sqnr = {e.layer: e.output_sqnr_db for e in report.layers if e.output_sqnr_db is not None}
    sizes = plan.sizes
    chosen = dict.fromkeys(plan, "nvfp4")
    total = sum(n for n, _, _ in sizes.values())

    def bits(assign: dict[str, str]) -> float:
        return sum(n * weight_bits(assign[k], s, d) for k, (n, s, d) in sizes.items()) / total

    for name in sorted(chosen, key=lambda k: sqnr.get(k, np.inf)):
        trial = {**chosen, name: "fp8-current"}
        for group in plan.groups:  # a group moves together
            if name in group:
                trial.update(dict.fromkeys(group, "fp8-current"))
        if bits(trial) <= budget:
            chosen = trial
    return chosen


def _run(
    name: str,
    model: torch.nn.Module,
    calibration: tuple[torch.Tensor, ...],
    held_out: tuple[torch.Tensor, ...],
) -> None:
    with torch.no_grad():
        reference = model(*held_out).float().numpy()
    print(f"\n{name}: held-out accuracy against f32")
    print("| plan | bits/weight | predicted SQNR (dB) | cosine mean | cosine worst | SQNR (dB) |")
    print("| --- | --- | --- | --- | --- | --- |")
    start = time.perf_counter()
    first = compiler.search(model, calibration, 32.0, RECIPES, measure=False)
    print(f"(scores: {time.perf_counter() - start:.0f} s for {len(first)} layers)")
    for recipe, (bits, db) in first.uniform.items():
        art = compiler.compile(model, calibration, recipe)
        print(
            f"| uniform {recipe} | {bits:.3f} | {db:.2f} | {_compare(art, held_out, reference)} |"
        )
    # nvfp4's bits + 0.5, 6, and uniform fp8-current's own size (8 bits and its scales)
    budgets = [first.uniform["nvfp4"][0] + 0.5, 6.0, first.uniform["fp8-current"][0]]
    for budget in budgets:
        plan = first.at_budget(budget)
        art = compiler.compile(model, calibration, "none", layer_recipes=dict(plan))
        print(
            f"| searched, budget {budget:.2f} | {plan.effective_bits:.3f} | "
            f"{plan.predicted_sqnr_db:.2f} | {_compare(art, held_out, reference)} |"
        )
        if budget == budgets[0] and name.startswith("decoder"):
            _fisher_row(model, calibration, held_out, reference, budget)
        if budget == budgets[0]:
            greedy = _greedy(model, calibration, plan, budget)
            bits = sum(
                n * weight_bits(greedy[k], s, d) for k, (n, s, d) in plan.sizes.items()
            ) / sum(n for n, _, _ in plan.sizes.values())
            predicted = -10 * np.log10(sum(plan.scores[k][r] for k, r in greedy.items()))
            art = compiler.compile(model, calibration, "none", layer_recipes=greedy)
            print(
                f"| greedy by report SQNR, budget {budget:.2f} | {bits:.3f} | {predicted:.2f} | "
                f"{_compare(art, held_out, reference)} |"
            )


def _fisher_row(
    model: torch.nn.Module,
    calibration: tuple[torch.Tensor, ...],
    held_out: tuple[torch.Tensor, ...],
    reference: np.ndarray,
    budget: float,
) -> None:
    """The plan the Fisher metric (``search(..., loss=...)``, ModelOpt auto_quantize's score)
    finds at ``budget``; the loss: cross-entropy of the next-token logits against the f32
    model's own choices on the calibration ids (the decoder sample has no labels)."""
    with torch.no_grad():
        labels = model(*calibration).argmax(-1)

    def loss(logits: torch.Tensor, *_: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(logits.float(), labels)

    start = time.perf_counter()
    plan = compiler.search(model, calibration, budget, RECIPES, measure=False, loss=loss)
    took = time.perf_counter() - start
    art = compiler.compile(model, calibration, "none", layer_recipes=dict(plan))
    print(
        f"| searched by Fisher score ({took:.0f} s), budget {budget:.2f} | "
        f"{plan.effective_bits:.3f} | (Fisher) | {_compare(art, held_out, reference)} |"
    )


def main() -> None:
    for name, model, calibration, held_out in held_out_models(__doc__.split("\n")[0]):
        _run(name, model, calibration, held_out)


if __name__ == "__main__":
    main()
