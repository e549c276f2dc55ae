"""``qmlir run``: a compiled .vmfb on given or random inputs, optionally against the torch model.

Needs only the runtime (no torch, no iree.compiler) unless ``--compare`` names a model.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from compiler.analysis.metrics import compare
from compiler.cli.common import check_output, print_table, read_inputs, write_npz
from compiler.extras import TORCH, require
from compiler.runtime import load, to_numpy, to_torch
from compiler.runtime.input_check import (
    NUMPY_DTYPES,
    NonFiniteInputWarning,
    check_inputs,
    check_shapes,
    non_finite_counts,
    non_finite_message,
)
from compiler.runtime.scaling_health import ScalingHealthWarning, summary_lines
from passes.base.errors import QmlirError

NAME = "run"
CALLS_ARTIFACTS = True  # the command keeps freed memory for reuse (compiler/cli/__init__.py)
HELP = "run a compiled .vmfb"


def add_arguments(r: argparse.ArgumentParser) -> None:
    r.add_argument("artifact", help="a .vmfb written by qmlir compile")
    src = r.add_mutually_exclusive_group()
    src.add_argument(
        "--inputs",
        help=".npz keyed by input name (the model's forward parameters, as `qmlir inspect` "
        "shows them) or arg0, arg1, ...; or a .npy for a module of one input",
    )
    src.add_argument("--random-inputs", action="store_true", help="standard normal inputs")
    r.add_argument("--seed", type=int, default=0, help="seed for --random-inputs")
    r.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="INPUT=AxB",
        help="with --random-inputs: the shape of an input with dynamic dims, e.g. "
        "input_ids=4x77 (default: the example's)",
    )
    r.add_argument(
        "--compare",
        metavar="MODEL",
        help="also run this f32 torch model and compare (without --inputs or --random-inputs: "
        "on the model's own example inputs)",
    )
    r.add_argument("--device", default="local-task", help="IREE driver (default: local-task)")
    r.add_argument(
        "--parameters",
        metavar="PATH",
        help="the parameter file of an artifact compiled with --weights external (default: "
        "<artifact name>.params.safetensors beside it)",
    )
    r.add_argument("-o", "--output", help="write the outputs to this .npz")
    r.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="call the module N times on the same inputs; with scaling state (fp8-delayed), "
        "print each call's scales (and SQNR with --compare)",
    )


def run(args: argparse.Namespace) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ScalingHealthWarning)
        warnings.simplefilter("ignore", NonFiniteInputWarning)  # _warn_non_finite prints it
        code = _run(args)
    for warning in caught:  # the module's warnings as the CLI's one-line warnings
        if issubclass(warning.category, ScalingHealthWarning):
            if args.repeat == 1:  # --repeat prints the scaling state's health itself
                print(f"qmlir: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return code


def _run(args: argparse.Namespace) -> int:
    if args.compare:
        require("qmlir run --compare", TORCH)  # it runs the torch model
    module = load(args.artifact, device=args.device, parameters=args.parameters)
    if module.record.training is not None:
        raise QmlirError(f"'{args.artifact}' is a training step: run it with qmlir train")
    specs = module.signature["inputs"]
    if args.inputs:
        inputs = read_inputs(Path(args.inputs), specs)
    elif args.random_inputs:
        inputs = random_inputs(specs, args.seed, parse_shapes(args.shape, specs))
    elif args.compare:  # the compared model's own example inputs, if the artifact takes them
        inputs = _example_inputs(args.compare)
        try:
            check_shapes(inputs, specs)
        except QmlirError as e:  # a static compile (--batch/--seq) of a folder, say
            print(
                f"the model's example inputs do not fit the artifact ({e}): comparing on random "
                f"inputs of its signature (--seed {args.seed})",
                file=sys.stderr,
            )
            inputs = random_inputs(specs, args.seed)
    else:
        raise QmlirError("give --inputs FILE, --random-inputs, or --compare MODEL")
    inputs = check_inputs(inputs, specs)  # as the module takes them (a .npy's bf16 included)
    _warn_non_finite(inputs)
    if args.repeat < 1:
        raise QmlirError("--repeat must be at least 1")
    if args.output:  # refused before the model runs, not after
        check_output(Path(args.output))
    if args.repeat > 1:
        outputs = _run_repeated(module, inputs, args.repeat, args.compare)
    else:
        outputs = module.run_numpy(*inputs)
    names = output_names(module.signature)
    for i, out in enumerate(outputs):
        shown = out.astype(np.float32) if out.dtype.kind == "V" or out.dtype.itemsize == 2 else out
        label = f"output {i}" + (f" ({names[i]})" if names[i] else "")
        print(f"{label}: shape {list(out.shape)} dtype {out.dtype} mean {np.mean(shown):.6g}")
    if args.output:
        keys = [name or f"out{i}" for i, name in enumerate(names)]
        write_npz(Path(args.output), dict(zip(keys, outputs, strict=True)))
    if args.compare:
        print_comparison(args.compare, inputs, outputs, module.metadata, names)
    return 0


def _run_repeated(
    module: Any, inputs: list[np.ndarray], repeat: int, compare_spec: str | None
) -> list[np.ndarray]:
    """Calls the module ``repeat`` times, a table row each; returns the last call's outputs."""
    reference = _reference_outputs(compare_spec, inputs)[0] if compare_spec else None
    keys = list(module.scaling_state())[:4]
    header = ["call", *[f"scale {k}" for k in keys]] + (["SQNR (dB)"] if compare_spec else [])
    rows: list[tuple[str, ...]] = [tuple(header)]
    outputs: list[np.ndarray] = []
    for call in range(1, repeat + 1):
        before = module.scaling_state()
        outputs = module.run_numpy(*inputs)
        row = [str(call), *[f"{float(before[k]['scale']):.6g}" for k in keys]]
        if reference is not None:
            row.append(f"{compare(reference, outputs[0].astype(np.float64)).sqnr_db:.2f}")
        rows.append(tuple(row))
    more = len(module.scaling_state()) - len(keys)
    note = f" (first {len(keys)} of {len(keys) + more} states)" if more > 0 else ""
    print(f"scales each call used{note}:" if keys else "calls (the module has no scaling state):")
    print_table(rows)
    if keys:
        for line in summary_lines(module.scaling_health()):
            print(line)
    print()
    return outputs


def _example_inputs(model_spec: str) -> list[np.ndarray]:
    # loading a torch model needs torch; only --compare gets here, plain `qmlir run` must not
    from compiler.frontend.model_loader import load_model

    return [to_numpy(x) for x in load_model(model_spec).example_inputs]


def random_inputs(
    specs: list[dict[str, Any]], seed: int, shapes: dict[int, list[int]] | None = None
) -> list[np.ndarray]:
    """Standard-normal inputs (token ids: uniform over the embedding's rows): of the
    signature's shape, the example's size for a dynamic dim, or ``shapes[i]`` (``--shape``)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for i, spec in enumerate(specs):
        dtype = NUMPY_DTYPES.get(spec["dtype"])
        shape = (shapes or {}).get(i) or _example_shape(spec)
        if dtype is not None and dtype.kind in "iu" and "index_range" in spec:
            low, high = spec["index_range"]  # ids that index an embedding: within its rows
            arrays.append(rng.integers(low, high, shape).astype(dtype))
            continue
        if dtype is None or dtype.kind not in "fV":
            label = spec.get("name") or f"input {i}"
            raise QmlirError(
                f"--random-inputs cannot choose values for {label} ({spec['dtype']}, not the ids "
                "of an embedding): give them with --inputs FILE.npz"
            )
        arrays.append(rng.standard_normal(shape, dtype=np.float32).astype(dtype))
    return arrays


def _example_shape(spec: dict[str, Any]) -> list[int]:
    dims = spec.get("dims") or [None] * len(spec["shape"])
    return [
        size if dim is None else (dim.get("example") or max(1, dim.get("min") or 1))
        for size, dim in zip(spec["shape"], dims, strict=True)
    ]


def parse_shapes(items: list[str], specs: list[dict[str, Any]]) -> dict[int, list[int]]:
    """``--shape NAME=AxB`` flags by input index (names as the signature's, or ``arg<i>``)."""
    index = {spec.get("name") or f"arg{i}": i for i, spec in enumerate(specs)}
    index.update({f"arg{i}": i for i in range(len(specs))})
    shapes: dict[int, list[int]] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or name not in index:
            raise QmlirError(
                f"--shape '{item}' is not INPUT=AxB with an input of the module "
                f"({', '.join(n for n in index if not n.startswith('arg'))})"
            )
        try:
            shapes[index[name]] = [int(d) for d in text.lower().split("x")]
        except ValueError:
            raise QmlirError(f"--shape '{item}': '{text}' is not sizes like 4x77") from None
    return shapes


def _warn_non_finite(inputs: list[np.ndarray]) -> None:
    """One line per input holding NaN or inf (``run`` silences the module's own warning)."""
    for index, nans, infs in non_finite_counts(inputs):
        print(f"qmlir: warning: {non_finite_message(index, nans, infs)}", file=sys.stderr)


def output_names(signature: dict[str, Any]) -> list[str | None]:
    """Each output's name where the model returned a structure (a dict's keys, ``hidden.1``)."""
    return [entry.get("name") for entry in signature["outputs"]]


def print_comparison(
    model_spec: str,
    inputs: list[np.ndarray],
    outputs: list[np.ndarray],
    metadata: dict[str, Any],
    names: list[str | None] | None = None,
) -> None:
    refs = _reference_outputs(model_spec, inputs)
    if len(refs) != len(outputs):
        raise QmlirError(f"'{model_spec}' returns {len(refs)} outputs, the artifact {len(outputs)}")
    recipe = metadata["recipe"]["name"]
    print(f"\ncomparison against the f32 torch model ({model_spec}), recipe {recipe}:")
    for i, (r, o) in enumerate(zip(refs, outputs, strict=True)):
        metrics = compare(r, o.astype(np.float64))
        name = (names or [None] * len(outputs))[i]
        print_table([("metric", f"output {i}" + (f" ({name})" if name else "")), *metrics.rows()])


def _reference_outputs(model_spec: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The f32 torch model's outputs on ``inputs``, as float64 arrays."""
    # --compare runs the torch model; plain `qmlir run` must work without torch
    import torch

    from compiler.frontend.model_loader import load_model  # same reason

    source = load_model(model_spec, materialize=True)
    model = source.module
    if source.program is None:  # a .pt2's module runs as exported (no .float()/.eval())
        model = model.float().eval()
    tensors = [to_torch(x) for x in inputs]
    with torch.no_grad():
        ref = model(*[t.float() if t.is_floating_point() else t for t in tensors])
    # the compile flattens outputs as torch.export does (pytree leaves: tuples, dicts, a
    # transformers ModelOutput); so does the comparison
    refs = [leaf for leaf in torch.utils._pytree.tree_leaves(ref) if isinstance(leaf, torch.Tensor)]
    return [to_numpy(r).astype(np.float64) for r in refs]
