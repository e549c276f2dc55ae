"""``qmlir calibrate``: static activation scales by max calibration (``compiler.calibrate``),
written as JSON for ``qmlir compile --activation-scales`` and ``qmlir export``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from compiler.cli.common import check_output, read_inputs, read_json
from compiler.extras import COMPILE
from passes.base.errors import QmlirError
from passes.base.files import write_atomically

NAME = "calibrate"
HELP = "measure static activation scales (max calibration) on sample inputs"
NEEDS = COMPILE


def add_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("model", help="file.py[:function], a .pt2 or a checkpoint folder")
    c.add_argument(
        "--inputs",
        action="append",
        default=[],
        required=True,
        metavar="FILE",
        help="a batch: .npz keyed by the model's forward parameter names (repeatable)",
    )
    c.add_argument(
        "--recipe",
        default="fp8-current",
        choices=("fp8-current", "nvfp4"),
        help="whose scale: fp8-current (amax / 448, default) or nvfp4 (amax / 2688, the global)",
    )
    c.add_argument(
        "--method",
        default="max",
        choices=("max", "percentile", "mse"),
        help="the range: max (default), percentile of |x|, or mse (least E4M3 cast error)",
    )
    c.add_argument(
        "--percentile",
        type=float,
        default=99.99,
        help="the percentile --method percentile takes (default 99.99)",
    )
    c.add_argument("-o", "--output", required=True, help="the scales: a JSON file")
    c.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")


def run(args: argparse.Namespace) -> int:
    # calibration runs the model in torch (the compile extra)
    from compiler.analysis.calibration import calibrate_layers
    from compiler.frontend.model_loader import load_model

    output = Path(args.output)
    check_output(output)
    source = load_model(args.model, materialize=True)  # a folder's weights: it runs in torch
    specs = [{"name": name} for name in source.input_names()]
    batches = [tuple(read_inputs(Path(path), specs)) for path in args.inputs]
    layers = calibrate_layers(source.module, batches, args.recipe, args.method, args.percentile)
    scales = {name: layer.scale for name, layer in layers.items()}
    write_atomically(output, (json.dumps(scales, indent=1, sort_keys=True) + "\n").encode())
    if not args.quiet:
        width = max(len(name) for name in layers)
        print(f"{'layer':<{width}}  {'max |x|':>10}  {'range':>10}  {'scale':>10}  clipped")
        for name, layer in layers.items():
            print(
                f"{name:<{width}}  {layer.amax:>10.4g}  {layer.range:>10.4g}  "
                f"{layer.scale:>10.4g}  {100 * layer.clipped:6.3f}%"
            )
        print(f"wrote {output} (static activation scales of {len(scales)} layers, {args.method})")
    return 0


def read_scales(path: str) -> dict[str, float]:
    """A JSON file of ``{layer: scale_inv}`` (``qmlir calibrate``'s), checked."""
    data = read_json(path, "activation scales")
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, (int, float)) and v > 0 for k, v in data.items()
    ):
        raise QmlirError(
            f"'{path}' is not {{layer: positive scale}} JSON (what qmlir calibrate writes)"
        )
    return {k: float(v) for k, v in data.items()}
