"""``qmlir report``: per-layer accuracy of a recipe on a model, as a table and an HTML page."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from compiler.cli.common import parse_layer_recipes, parse_options, print_table, read_inputs
from compiler.extras import COMPILE
from compiler.runtime.summary import convolution_text
from passes.base.errors import QmlirError
from passes.base.files import write_atomically

NAME = "report"
HELP = "per-layer accuracy of a recipe on a model: table, HTML with plots"
NEEDS = COMPILE


def add_arguments(rp: argparse.ArgumentParser) -> None:
    rp.add_argument("model", help="file.py[:function] (default function: build) or a .pt2 file")
    rp.add_argument(
        "--recipe",
        default=None,
        help="scaling recipe (see `qmlir recipes`; default fp8-current, or a quantized checkpoint "
        "folder's own)",
    )
    rp.add_argument("-O", "--recipe-option", action="append", default=[], metavar="KEY=VALUE")
    rp.add_argument(
        "--inputs",
        action="append",
        default=[],
        metavar="FILE",
        help="calibration inputs: .npz keyed by the model's forward parameter names (or arg0, "
        "arg1, ...) or .npy (default: the model's example inputs); repeatable: one batch per "
        "file, of any size the artifact takes (see --dynamic), the figures over all of them",
    )
    rp.add_argument(
        "--dynamic",
        action="append",
        default=[],
        metavar="INPUT:DIM=NAME[:MIN..MAX]",
        help="make a dim of an input dynamic, as for compile (repeatable)",
    )
    rp.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    rp.add_argument("--layer-recipe", action="append", default=[], metavar="GLOB=RECIPE")
    rp.add_argument("--quantize-all-matmuls", action="store_true")
    rp.add_argument(
        "--suggest",
        type=float,
        metavar="DB",
        help="list the layers to exclude so every layer's output SQNR is at least DB",
    )
    rp.add_argument(
        "--html", metavar="PATH", help="HTML report path (default: <model>.<recipe>.report.html)"
    )
    rp.add_argument("--no-html", action="store_true", help="print the table only")


def run(args: argparse.Namespace) -> int:
    # a report runs the torch model and the recipes (torch, iree.compiler); run/inspect must not
    from compiler.analysis.layer_accuracy import Calibration, build_report
    from compiler.analysis.report_render import (  # same reason
        render_html,
        suggestion_line,
        table_rows,
    )
    from compiler.frontend.dynamic_dims import dynamic_shapes_from_flags  # same reason
    from compiler.frontend.model_loader import load_model  # same reason
    from compiler.frontend.quantized_formats import folder_recipe  # same reason
    from passes.recipes import get_recipe  # same reason

    folder = Path(args.model) if Path(args.model).is_dir() else None
    recipe = get_recipe(*folder_recipe(folder, args.recipe, parse_options(args.recipe_option)))
    if not recipe.quantizes:
        raise QmlirError(f"recipe '{recipe.name}' quantizes nothing: there is nothing to report")
    if args.suggest is not None and not np.isfinite(args.suggest):
        raise QmlirError("--suggest takes a finite threshold in dB")
    html_path = None if args.no_html else Path(args.html or _default_report(args.model, recipe))
    if html_path is not None and html_path.is_dir():
        raise QmlirError(f"output '{html_path}' is a directory")
    source = load_model(args.model, materialize=True)  # a folder's weights: report runs it
    if args.dynamic:
        source.dynamic_shapes = dynamic_shapes_from_flags(source, args.dynamic)
    specs = [{"name": name} for name in source.input_names()]
    batches = [
        Calibration(f"'{path}'", tuple(read_inputs(Path(path), specs))) for path in args.inputs
    ]
    report = build_report(
        source,
        recipe,
        batches,
        exclude=tuple(args.exclude),
        layer_recipes=parse_layer_recipes(args.layer_recipe),
        quantize_all_matmuls=args.quantize_all_matmuls,
    )
    over = f", {report.batches} calibration batches" if report.batches > 1 else ""
    print(
        f"per-layer accuracy of recipe {recipe.name} on {report.model}{over} (SQNR in dB vs f32):"
    )
    print_table(table_rows(report))
    if report.convolutions:
        print(convolution_text(report.convolutions))
    if args.suggest is not None:
        line = suggestion_line(report, args.suggest)
        print(f"\nto keep every layer at or above {args.suggest:g} dB, exclude:")
        print(f"  {line}" if line else "  nothing: every quantized layer is above it")
    if html_path is not None:
        write_atomically(html_path, render_html(report, args.suggest).encode())
        print(f"\nwrote {html_path}")
    return 0


def _default_report(model: str, recipe: Any) -> str:
    return f"{Path(model.partition(':')[0]).stem}.{recipe.name}.report.html"
