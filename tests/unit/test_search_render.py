"""The recipe search's accuracy-for-size curve and its HTML page (qmlir search --html)."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np

from compiler.analysis.recipe_search import _Layer, _plan
from compiler.analysis.search_render import render_search_html

RECIPES = ["none", "fp8-current", "nvfp4"]


def _searched(budget: float):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    groups = [
        [_Layer(f"l{i}", 64 * 64 * (i + 1), (64 * (i + 1), 64), 32, 1, f"a{i}")] for i in range(5)
    ]
    scores = {
        g[0].name: {
            "none": 0.0,
            "fp8-current": float(rng.uniform(1e-4, 1e-3)),
            "nvfp4": float(rng.uniform(1e-2, 5e-2)),
        }
        for g in groups
    }
    return _plan(groups, RECIPES, scores, budget)


def test_the_curve_runs_from_the_smallest_recipe_to_exact_and_only_gains() -> None:
    plan = _searched(9.0)
    curve = plan.curve()
    bits = [p.effective_bits for p in curve]
    db = [p.predicted_sqnr_db for p in curve]
    assert set(curve[0].values()) == {"nvfp4"}  # the smallest uniform recipe's size
    assert set(curve[-1].values()) == {"none"} and math.isinf(db[-1])
    assert bits == sorted(bits) and all(b > a for a, b in zip(db, db[1:], strict=False))
    mixed = [p for p in curve if len(set(p.values())) > 1]
    assert mixed  # plans between the uniform ones
    assert all(p.effective_bits <= p.budget_bits for p in curve)


def test_the_page_plots_the_curve_the_uniform_recipes_and_the_plan() -> None:
    plan = _searched(9.0)
    curve = plan.curve()
    page = render_search_html(plan, "m.py", curve)
    svg = ET.fromstring(re.search(r"<svg.*?</svg>", page, re.S).group(0))  # type: ignore[union-attr]
    line = [e for e in svg.iter("polyline") if e.get("class") == "curve"]
    assert len(line) == 1 and len(line[0].get("points", "").split()) == len(curve)
    assert len([e for e in svg.iter("circle") if e.get("class") == "point"]) == len(curve)
    squares = [e for e in svg.iter("rect") if e.get("class") == "uniform"]
    assert sorted(s.findtext("title").split(":")[0] for s in squares) == sorted(RECIPES)  # type: ignore[union-attr]
    chosen = [e for e in svg.iter("circle") if e.get("class") == "chosen"]
    assert len(chosen) == 1
    # higher SQNR is drawn higher (smaller y); "exact" (no noise) on the top edge
    ys = [float(p.split(",")[1]) for p in line[0].get("points", "").split()]
    assert ys == sorted(ys, reverse=True)
    assert "exact" in page and f"{plan.effective_bits:.3f}" in page
