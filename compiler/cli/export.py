"""``qmlir export``: a model's weights quantized by a recipe, written as a compressed-tensors
checkpoint folder (``compiler/export/compressed_tensors.py``)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from compiler.cli.common import (
    bytes_printer,
    human_size,
    parse_layer_recipe_names,
    parse_options,
)
from compiler.extras import COMPILE

NAME = "export"
HELP = "write a model's quantized weights as a compressed-tensors checkpoint (vLLM, transformers)"
NEEDS = COMPILE


def add_arguments(e: argparse.ArgumentParser) -> None:
    e.add_argument(
        "model", help="a checkpoint folder, or file.py[:function] building a transformers model"
    )
    e.add_argument(
        "--recipe",
        default=None,
        help="fp8-block, fp8-current or mxfp8 (default fp8-current; a quantized checkpoint "
        "folder: its own, its codes kept)",
    )
    e.add_argument("-O", "--recipe-option", action="append", default=[], metavar="KEY=VALUE")
    e.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="keep matching layers (module paths) in high precision: the config's ignore",
    )
    e.add_argument(
        "--layer-recipe",
        action="append",
        default=[],
        metavar="GLOB=RECIPE",
        help="another recipe for matching layers (a config group of its own)",
    )
    e.add_argument(
        "--activation-scales",
        metavar="FILE.json",
        help="qmlir calibrate's scales: fp8-current's activations static (input_scale)",
    )
    e.add_argument("-o", "--output", required=True, help="the folder to write (new or empty)")
    e.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")


def run(args: argparse.Namespace) -> int:
    # exporting runs the compiled quantize core on torch weights (the compile extra)
    from compiler.cli.calibrate import read_scales
    from compiler.export.compressed_tensors import export_checkpoint
    from compiler.frontend.model_source import load_model

    layer_recipes = parse_layer_recipe_names(args.layer_recipe)
    output = Path(args.output)
    start = time.perf_counter()
    model = args.model if Path(args.model).is_dir() else load_model(args.model).module
    folder = export_checkpoint(
        model,
        output,
        args.recipe,
        exclude=tuple(args.exclude),
        layer_recipes=layer_recipes,
        activation_scales=read_scales(args.activation_scales) if args.activation_scales else None,
        progress=bytes_printer(args.quiet),
        **parse_options(args.recipe_option),
    )
    if not args.quiet:
        size = sum(f.stat().st_size for f in folder.iterdir())
        print(
            f"wrote {folder} ({human_size(size)}, compressed-tensors, "
            f"{time.perf_counter() - start:.1f} s)"
        )
    return 0
