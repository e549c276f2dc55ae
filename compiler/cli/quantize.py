"""``qmlir quantize``: the compiled quantize core on one tensor."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from compiler.cli.common import load_arrays, parse_options, write_npz
from compiler.extras import IR
from passes.base.errors import QmlirError

NAME = "quantize"
HELP = "run the compiled quantize core on one tensor"
NEEDS = IR


def add_arguments(q: argparse.ArgumentParser) -> None:
    q.add_argument("input", help="a .npy file")
    q.add_argument("--recipe", default="fp8-current")
    q.add_argument("-O", "--recipe-option", action="append", default=[], metavar="KEY=VALUE")
    q.add_argument("--role", choices=["activation", "weight"], default="activation")
    q.add_argument("--usage", choices=["rowwise", "columnwise"], default="rowwise")
    q.add_argument("--swizzle", action="store_true", help="block scales in the GEMM layout")
    q.add_argument(
        "-o", "--output", required=True, help="output .npz: data, scale (and global_scale)"
    )


def run(args: argparse.Namespace) -> int:
    # compiling the quantize core needs iree.compiler (the compile extra); run/inspect must not
    from compiler.pipeline.quantize import quantize

    path = Path(args.input)
    x = load_arrays(path, "input")
    if not isinstance(x, np.ndarray):
        raise QmlirError(f"'{path}' is not a single .npy array")
    q = quantize(
        x,
        args.recipe,
        role=args.role,
        usage=args.usage,
        swizzle=args.swizzle,
        **parse_options(args.recipe_option),
    )
    arrays = {"data": q.data, "scale": q.scale}
    if q.global_scale is not None:
        arrays["global_scale"] = q.global_scale
    write_npz(Path(args.output), arrays)
    shown = (
        f"scale {q.scale.tolist()}"
        if q.scale.size == 1
        else f"scale {list(q.scale.shape)} {q.scale.dtype}"
    )
    print(f"wrote {args.output}: data {list(q.data.shape)} uint8, {shown}")
    return 0
