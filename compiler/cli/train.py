"""``qmlir train``: run a compiled training step (``qmlir compile --train``) over batches.

Needs only the runtime. ``--data`` is a ``.npz`` keyed by the step's inputs (the model's forward
parameters, as ``qmlir inspect`` shows them): an array of an input's shape is one batch, used by
every step; an array with one more leading dim holds batches, step ``i`` taking batch ``i``
modulo their number. Prints each step's loss and time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from compiler.cli.common import load_arrays
from compiler.runtime import TrainingStep, load
from compiler.runtime.input_check import arrays_by_name
from compiler.runtime.tensor_files import npz_arrays, read_tensors, write_tensors
from passes.base.errors import QmlirError

NAME = "train"
CALLS_ARTIFACTS = True  # the command keeps freed memory for reuse (compiler/cli/__init__.py)
HELP = "run a compiled training step over batches"
BAR = 24


def add_arguments(t: argparse.ArgumentParser) -> None:
    t.add_argument("artifact", help="a training step written by qmlir compile --train")
    t.add_argument(
        "--data",
        required=True,
        help=".npz keyed by input name: one batch per input, or batches stacked on a new "
        "first axis",
    )
    t.add_argument("--steps", type=int, default=100, help="steps to run (default: 100)")
    t.add_argument(
        "--load-params", metavar="FILE", help="start from these parameters (.safetensors, .npz)"
    )
    t.add_argument(
        "--save-params", metavar="FILE", help="write the trained parameters (.safetensors, .npz)"
    )
    t.add_argument("--print-every", type=int, default=1, metavar="N", help="a line every N steps")
    t.add_argument("--device", default="local-task", help="IREE driver (default: local-task)")
    t.add_argument("-q", "--quiet", action="store_true", help="print only the summary")


def run(args: argparse.Namespace) -> int:
    if args.steps < 1:
        raise QmlirError("--steps must be at least 1")
    if args.print_every < 1:
        raise QmlirError("--print-every must be at least 1")
    save = Path(args.save_params) if args.save_params else None
    if save is not None and save.suffix not in (".safetensors", ".npz"):
        raise QmlirError(f"--save-params '{save}': write a .safetensors or .npz file")
    step = load(args.artifact, device=args.device)
    if not isinstance(step, TrainingStep):
        raise QmlirError(
            f"'{args.artifact}' is an inference artifact: compile with qmlir compile --train"
        )
    batches = _batches(Path(args.data), step.signature["inputs"])
    if args.load_params:
        step.load_parameters(read_tensors(Path(args.load_params)))
    count = len(batches[0])
    meta = step.record
    print(
        f"training {meta.model} ({meta.recipe['name']}, {step.optimizer['name']} "
        f"lr {step.optimizer['lr']:g}) for {args.steps} steps on {count} batch"
        f"{'es' if count > 1 else ''}"
    )
    losses, times = [], []
    for i in range(args.steps):
        inputs = [b[i % count] for b in batches]
        start = time.perf_counter()
        loss = float(np.asarray(step.run_numpy(*inputs)[0]))
        times.append(time.perf_counter() - start)
        losses.append(loss)
        last = i + 1 == args.steps
        if not args.quiet and ((i + 1) % args.print_every == 0 or last):
            _print_step(i + 1, args.steps, loss, times[-1])
        if not np.isfinite(loss):
            print(f"qmlir: warning: the loss is {loss} at step {i + 1}", file=sys.stderr)
    steady = times[1:] or times
    print(
        f"loss {losses[0]:.6g} -> {losses[-1]:.6g}; {1e3 * float(np.median(steady)):.2f} ms per "
        f"step (median{' after the first' if len(times) > 1 else ''}), "
        f"first step {1e3 * times[0]:.2f} ms"
    )
    if save is not None:
        write_tensors(save, step.parameters(as_torch=False))
        print(f"wrote {save} ({len(step.parameter_names)} parameters)")
    return 0


def _print_step(n: int, total: int, loss: float, seconds: float) -> None:
    done = BAR * n // total
    bar = "#" * done + "-" * (BAR - done)
    width = len(str(total))
    print(f"step {n:>{width}}/{total} [{bar}] loss {loss:.6g}  {1e3 * seconds:.2f} ms", flush=True)


def _batches(path: Path, specs: list[dict[str, Any]]) -> list[list[np.ndarray]]:
    """Per input, its batches (one array per step's use)."""
    loaded = load_arrays(path, "data file")
    if isinstance(loaded, np.ndarray):
        raise QmlirError(f"'{path}': give a .npz keyed by input name")
    with loaded:
        ordered = arrays_by_name(npz_arrays(loaded, path), specs, f"'{path}'")
    stacked = [a.ndim == len(spec["shape"]) + 1 for a, spec in zip(ordered, specs, strict=True)]
    counts = {len(a) for a, s in zip(ordered, stacked, strict=True) if s}
    if len(counts) > 1:
        raise QmlirError(f"'{path}': the inputs hold different numbers of batches {sorted(counts)}")
    count = counts.pop() if counts else 1
    return [
        [a[i] for i in range(count)] if s else [a] * count
        for a, s in zip(ordered, stacked, strict=True)
    ]
