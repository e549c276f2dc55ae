"""``qmlir search``: one recipe per layer under a size budget (``compiler.search``), written as
a plan ``qmlir compile --plan`` reads."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from compiler.cli.common import check_output, print_table, read_inputs, read_json
from compiler.extras import COMPILE
from passes.base.errors import QmlirError
from passes.base.files import write_atomically

NAME = "search"
HELP = "choose a recipe per layer under a bits-per-weight budget, by the model's output"
NEEDS = COMPILE


def add_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("model", help="file.py[:function] (default function: build) or a .pt2 file")
    c.add_argument(
        "--budget-bits",
        type=float,
        required=True,
        metavar="BITS",
        help="weight and scale bits per weight element, at most (e.g. 5.0)",
    )
    c.add_argument(
        "--recipes",
        default="none,fp8-current,mxfp8,nvfp4",
        help="the candidates, comma-separated (default none,fp8-current,mxfp8,nvfp4)",
    )
    c.add_argument(
        "--inputs",
        action="append",
        default=[],
        metavar="FILE",
        help="a calibration batch: .npz keyed by the model's forward parameter names "
        "(repeatable; default: the model's example inputs)",
    )
    c.add_argument(
        "--metric",
        choices=["sqnr", "kl", "fisher"],
        default=None,
        help="how a layer's recipe is scored: sqnr (the output's noise, default), kl (the KL "
        "divergence of the first output's softmax, logits, from the f32 model's), fisher "
        "(ModelOpt auto_quantize's: sum of (dloss/dy * (y_q - y))^2 per layer output, of --loss)",
    )
    c.add_argument(
        "--loss",
        choices=["argmax-ce"],
        help="the fisher metric's loss (implies --metric fisher): argmax-ce, the cross-entropy "
        "of the first output, as logits, against its own argmax (the default)",
    )
    c.add_argument(
        "--no-measure", action="store_true", help="do not compile the plan to measure it"
    )
    c.add_argument(
        "--html",
        metavar="FILE",
        help="also write the search as an HTML page: the accuracy-for-size curve plotted",
    )
    c.add_argument("-o", "--output", required=True, help="the plan: a JSON file")


def run(args: argparse.Namespace) -> int:
    # a search runs the torch model and the recipes' quantize cores (torch, iree.compiler)
    from compiler.analysis.layer_accuracy import Calibration
    from compiler.analysis.recipe_search import search_plan
    from compiler.analysis.search_render import db_text, recipe_mix, render_search_html
    from compiler.frontend.model_loader import load_model

    output = Path(args.output)
    check_output(output)
    page = None if args.html is None else Path(args.html)
    if page is not None:
        check_output(page)
    if not math.isfinite(args.budget_bits) or args.budget_bits <= 0:
        raise QmlirError("--budget-bits takes a positive number of bits per weight")
    recipes = [r.strip() for r in args.recipes.split(",") if r.strip()]
    source = load_model(args.model, materialize=True)
    specs = [{"name": name} for name in source.input_names()]
    batches = [
        Calibration(f"'{path}'", tuple(read_inputs(Path(path), specs))) for path in args.inputs
    ]

    def compile_plan(layers: dict[str, str]) -> object:
        from compiler.api.compile import compile as compile_model

        module, inputs = source.module, source.example_inputs
        return compile_model(module, inputs, "none", layer_recipes=layers)

    measure = None if args.no_measure else compile_plan
    plan = search_plan(source, args.budget_bits, recipes, batches, measure, args.loss, args.metric)
    alone = {"sqnr": "output SQNR alone (dB)", "kl": "KL alone (-dB)"}.get(
        plan.metric, "Fisher score alone (-dB)"
    )
    rows = [("layer", "recipe", alone)]
    for layer, recipe in plan.items():
        score = plan.scores[layer][recipe]
        rows.append((layer, recipe, "-" if score <= 0 else f"{-10 * math.log10(score):.1f}"))
    print_table(rows)
    predicted = {"sqnr": "predicted SQNR (dB)", "kl": "predicted, -dB of the KL"}.get(
        plan.metric, "predicted, -dB of the Fisher score"
    )
    print(f"\nrecipe      bits/weight  {predicted}")
    for recipe, (bits, db) in plan.uniform.items():
        print(f"{recipe:<11} {bits:>11.3f}  {db:>19.2f}   (every layer)")
    measured = "" if plan.measured_sqnr_db is None else f", measured {plan.measured_sqnr_db:.2f}"
    print(
        f"{'plan':<11} {plan.effective_bits:>11.3f}  {plan.predicted_sqnr_db:>19.2f}   "
        f"(budget {plan.budget_bits:g}{measured})"
    )
    curve = plan.curve()
    print(f"\nthe best plan at each budget (bits/weight, {predicted}, recipes):")
    for point in curve:
        db = db_text(point.predicted_sqnr_db)
        print(f"  {point.effective_bits:7.3f}  {db:>7}  {recipe_mix(point)}")
    write_atomically(output, (json.dumps(plan.to_json(), indent=1) + "\n").encode())
    print(f"wrote {output}")
    if page is not None:
        write_atomically(page, render_search_html(plan, args.model, curve).encode())
        print(f"wrote {page}")
    return 0


def read_plan(path: str) -> dict[str, str]:
    """A plan's ``{layer: recipe}`` (``qmlir search``'s JSON), checked."""
    data = read_json(path, "plan")
    layers = data.get("layers") if isinstance(data, dict) else None
    if not isinstance(layers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in layers.items()
    ):
        raise QmlirError(f"'{path}' is not a plan: no {{layer: recipe}} 'layers' (qmlir search)")
    return layers
