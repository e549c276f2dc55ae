"""``qmlir``: compile, run, quantize, report, recipes, inspect.

Errors are one line (``qmlir: error: ...``) with a non-zero exit; ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from passes.errors import QmlirError

EXIT_ERROR = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"qmlir: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="qmlir", description="Compile PyTorch models to FP8 IREE modules.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser("compile", help="compile a model to a .vmfb")
    c.add_argument("model", help="file.py[:function] (default function: build) or a .pt2 file")
    c.add_argument("--recipe", default="fp8-current", help="scaling recipe (see `qmlir recipes`)")
    c.add_argument(
        "-O",
        "--recipe-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a recipe option, e.g. -O force_pow2_scales=true (repeatable)",
    )
    c.add_argument("-o", "--output", help="output .vmfb (default: <model>.<recipe>.vmfb)")
    c.add_argument(
        "--target", default="llvm-cpu", help="compile target: llvm-cpu (default) or cuda"
    )
    c.add_argument(
        "--cuda-arch",
        metavar="ARCH",
        help="with --target cuda: sm_89, sm_90 (default) or sm_100 (no GPU needed to compile)",
    )
    c.add_argument("--quantize-all-matmuls", action="store_true", help="also activation matmuls")
    c.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="keep matmuls of layers matching GLOB (module paths, e.g. 'lm_head', '*.attn.*') "
        "in high precision (repeatable)",
    )
    c.add_argument(
        "--layer-recipe",
        action="append",
        default=[],
        metavar="GLOB=RECIPE",
        help="layers matching GLOB use RECIPE (with its default options); the first match "
        "wins (repeatable)",
    )
    c.add_argument("--explain", action="store_true", help="print which layer got which recipe")
    c.add_argument("--dump-ir", metavar="DIR", help="write the IR after every stage to DIR")
    c.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")

    r = sub.add_parser("run", help="run a compiled .vmfb")
    r.add_argument("artifact", help="a .vmfb written by qmlir compile")
    src = r.add_mutually_exclusive_group()
    src.add_argument(
        "--inputs", help=".npz (arrays in signature order, or arg0, arg1, ...) or .npy"
    )
    src.add_argument("--random-inputs", action="store_true", help="standard normal inputs")
    r.add_argument("--seed", type=int, default=0, help="seed for --random-inputs")
    r.add_argument(
        "--compare",
        metavar="MODEL",
        help="also run this f32 torch model and compare (without --inputs or --random-inputs: "
        "on the model's own example inputs)",
    )
    r.add_argument("--device", default="local-task", help="IREE driver (default: local-task)")
    r.add_argument("-o", "--output", help="write the outputs to this .npz")
    r.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="call the module N times on the same inputs; with scaling state (fp8-delayed), "
        "print each call's scales (and SQNR with --compare)",
    )

    q = sub.add_parser("quantize", help="run the compiled quantize core on one tensor")
    q.add_argument("input", help="a .npy file")
    q.add_argument("--recipe", default="fp8-current")
    q.add_argument("-O", "--recipe-option", action="append", default=[], metavar="KEY=VALUE")
    q.add_argument("--role", choices=["activation", "weight"], default="activation")
    q.add_argument("--usage", choices=["rowwise", "columnwise"], default="rowwise")
    q.add_argument("--swizzle", action="store_true", help="block scales in the GEMM layout")
    q.add_argument(
        "-o", "--output", required=True, help="output .npz: data, scale (and global_scale)"
    )

    rp = sub.add_parser(
        "report", help="per-layer accuracy of a recipe on a model: table, HTML with plots"
    )
    rp.add_argument("model", help="file.py[:function] (default function: build) or a .pt2 file")
    rp.add_argument("--recipe", default="fp8-current", help="scaling recipe (see `qmlir recipes`)")
    rp.add_argument("-O", "--recipe-option", action="append", default=[], metavar="KEY=VALUE")
    rp.add_argument(
        "--inputs",
        help="calibration inputs: .npz (arrays in the model's argument order) or .npy "
        "(default: the model's example inputs)",
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

    sub.add_parser("recipes", help="list recipes, their options and defaults")

    i = sub.add_parser("inspect", help="what a .vmfb holds: recipe, layers, weights, versions")
    i.add_argument("artifact", help="a .vmfb written by qmlir compile")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except QmlirError as e:
        if args.debug:
            traceback.print_exc()
        print(f"qmlir: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("qmlir: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`qmlir run ... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 (last resort: one line, details under --debug)
        if args.debug:
            traceback.print_exc()
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(
            f"qmlir: internal error: {type(e).__name__}: {first} (run with --debug for details)",
            file=sys.stderr,
        )
        return EXIT_ERROR


def parse_options(items: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise QmlirError(f"recipe option '{item}' is not KEY=VALUE")
        options[key.strip()] = value.strip()
    return options


def cmd_compile(args: argparse.Namespace) -> int:
    from compiler.model_source import load_model
    from compiler.pipeline import CompileOptions, compile_model
    from passes.recipes import get_recipe

    recipe = get_recipe(args.recipe, parse_options(args.recipe_option))
    output = Path(args.output) if args.output else _default_output(args.model, recipe.name)
    if output.is_dir():
        raise QmlirError(f"output '{output}' is a directory")
    start = time.perf_counter()
    progress = _progress_printer(args.quiet)
    if progress:
        progress("load model")
    source = load_model(args.model)
    options = CompileOptions(
        recipe=recipe,
        target=args.target,
        cuda_arch=args.cuda_arch,
        quantize_all_matmuls=args.quantize_all_matmuls,
        dump_ir=Path(args.dump_ir) if args.dump_ir else None,
        exclude=tuple(args.exclude),
        layer_recipes=parse_layer_recipes(args.layer_recipe),
    )
    compiled = compile_model(source, options, progress=progress)
    if progress:
        progress("save")
    compiled.save(output)
    if progress:
        progress(DONE)
    if args.explain:
        print_layers(compiled.metadata["layers"])
    if not args.quiet:
        layers = compiled.metadata["layers"]
        quantized = sum(1 for layer in layers if layer["matmul"] == "scaled_matmul")
        print(
            f"wrote {output} ({_size(len(compiled.vmfb))}, recipe {recipe.name}, "
            f"{quantized}/{len(layers)} matmuls quantized, {time.perf_counter() - start:.1f} s)"
        )
    return 0


def parse_layer_recipes(items: list[str]) -> tuple[tuple[str, Any], ...]:
    from passes.recipes import get_recipe

    pairs = []
    for item in items:
        glob, sep, name = item.rpartition("=")
        if not sep or not glob or not name:
            raise QmlirError(f"--layer-recipe '{item}' is not GLOB=RECIPE")
        pairs.append((glob, get_recipe(name)))
    return tuple(pairs)


def print_layers(layers: list[dict[str, str]]) -> None:
    """Each matmul: its layer, its recipe (none: high precision), and why."""
    rows: list[tuple[str, ...]] = [("layer", "recipe", "why")]
    for entry in layers:
        rows.append((entry["layer"] or "(top level)", entry["recipe"], entry["note"]))
    print_table(rows)


def _progress_printer(quiet: bool) -> Any:
    """Stage-by-stage progress on stderr, a line per finished stage with its time; only on a
    terminal, and not with -q. Call it with each stage as it starts, then with ``DONE``."""
    if quiet or not sys.stderr.isatty():
        return None
    current: list[Any] = [None, time.perf_counter()]

    def report(stage: str) -> None:
        now = time.perf_counter()
        if current[0] is not None:
            print(f"  {current[0]:<13} {now - current[1]:6.2f} s", file=sys.stderr, flush=True)
        current[0], current[1] = (None if stage == DONE else stage), now

    return report


DONE = "done"


def _default_output(model: str, recipe: str) -> Path:
    stem = Path(model.partition(":")[0]).stem
    return Path(f"{stem}.{recipe}.vmfb")


def _size(n: int) -> str:
    if n >= 100_000:
        return f"{n / 1e6:.2f} MB"
    return f"{n / 1e3:.1f} kB" if n >= 1000 else f"{n} B"


def cmd_run(args: argparse.Namespace) -> int:
    from compiler.runtime import load

    module = load(args.artifact, device=args.device)
    specs = module.signature["inputs"]
    if args.inputs:
        inputs = _read_inputs(Path(args.inputs), len(specs))
    elif args.random_inputs:
        inputs = random_inputs(specs, args.seed)
    elif args.compare:  # the compared model's own example inputs
        inputs = _example_inputs(args.compare)
    else:
        raise QmlirError("give --inputs FILE, --random-inputs, or --compare MODEL")
    _warn_non_finite(inputs)
    if args.repeat < 1:
        raise QmlirError("--repeat must be at least 1")
    if args.repeat > 1:
        outputs = _run_repeated(module, inputs, args.repeat, args.compare)
    else:
        outputs = module.run_numpy(*inputs)
    for i, out in enumerate(outputs):
        shown = out.astype(np.float32) if out.dtype.kind == "V" or out.dtype.itemsize == 2 else out
        print(f"output {i}: shape {list(out.shape)} dtype {out.dtype} mean {np.mean(shown):.6g}")
    if args.output:
        _write_npz(Path(args.output), {f"out{i}": o for i, o in enumerate(outputs)})
    if args.compare:
        print_comparison(args.compare, inputs, outputs, module.metadata)
    return 0


def _run_repeated(
    module: Any, inputs: list[np.ndarray], repeat: int, compare_spec: str | None
) -> list[np.ndarray]:
    """Calls the module ``repeat`` times, a table row each; returns the last call's outputs."""
    from compiler.metrics import compare

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
    print()
    return outputs


def _example_inputs(model_spec: str) -> list[np.ndarray]:
    from compiler.model_source import load_model
    from compiler.runtime import to_numpy

    return [to_numpy(x) for x in load_model(model_spec).example_inputs]


def random_inputs(specs: list[dict[str, Any]], seed: int) -> list[np.ndarray]:
    from compiler.runtime import NUMPY_DTYPES

    rng = np.random.default_rng(seed)
    arrays = []
    for spec in specs:
        dtype = NUMPY_DTYPES.get(spec["dtype"])
        if dtype is None or dtype.kind not in "fV":
            raise QmlirError(f"--random-inputs cannot make {spec['dtype']} inputs: use --inputs")
        arrays.append(rng.standard_normal(spec["shape"], dtype=np.float32).astype(dtype))
    return arrays


def _load_arrays(path: Path, what: str) -> Any:
    """``np.load`` with one-line errors (a .npy gives an array, a .npz a mapping)."""
    if not path.is_file():
        raise QmlirError(f"{what} '{path}' does not exist")
    try:
        return np.load(path, allow_pickle=False)
    except Exception as e:
        raise QmlirError(f"cannot read {what} '{path}': {e}") from e


def _read_inputs(path: Path, count: int) -> list[np.ndarray]:
    loaded = _load_arrays(path, "inputs file")
    if isinstance(loaded, np.ndarray):
        return [loaded]
    names = list(loaded.files)
    if len(names) != count:
        raise QmlirError(f"'{path}' holds {len(names)} array(s), the module takes {count}")
    return [loaded[n] for n in names]


def _warn_non_finite(inputs: list[np.ndarray]) -> None:
    for i, x in enumerate(inputs):
        if x.dtype.kind not in "fV" and x.dtype.itemsize not in (2, 4, 8):
            continue
        values = x.astype(np.float32)
        nans, infs = int(np.isnan(values).sum()), int(np.isinf(values).sum())
        if nans or infs:
            print(
                f"qmlir: warning: input {i} holds {nans} NaN and {infs} inf; they propagate "
                "as docs/numerics.md says",
                file=sys.stderr,
            )


def print_comparison(
    model_spec: str, inputs: list[np.ndarray], outputs: list[np.ndarray], metadata: dict[str, Any]
) -> None:
    from compiler.metrics import compare

    refs = _reference_outputs(model_spec, inputs)
    if len(refs) != len(outputs):
        raise QmlirError(f"'{model_spec}' returns {len(refs)} outputs, the artifact {len(outputs)}")
    recipe = metadata["recipe"]["name"]
    print(f"\ncomparison against the f32 torch model ({model_spec}), recipe {recipe}:")
    for i, (r, o) in enumerate(zip(refs, outputs, strict=True)):
        metrics = compare(r, o.astype(np.float64))
        print_table([("metric", f"output {i}"), *metrics.rows()])


def _reference_outputs(model_spec: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The f32 torch model's outputs on ``inputs``, as float64 arrays."""
    import torch

    from compiler.model_source import load_model
    from compiler.runtime import to_numpy, to_torch

    source = load_model(model_spec)
    model = source.module
    if source.program is None:  # a .pt2's module runs as exported (no .float()/.eval())
        model = model.float().eval()
    tensors = [to_torch(x) for x in inputs]
    with torch.no_grad():
        ref = model(*[t.float() if t.is_floating_point() else t for t in tensors])
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    return [to_numpy(r).astype(np.float64) for r in refs]


def print_table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    for n, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def cmd_quantize(args: argparse.Namespace) -> int:
    from compiler.quantize_api import quantize

    path = Path(args.input)
    x = _load_arrays(path, "input")
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
    _write_npz(Path(args.output), arrays)
    shown = (
        f"scale {q.scale.tolist()}"
        if q.scale.size == 1
        else f"scale {list(q.scale.shape)} {q.scale.dtype}"
    )
    print(f"wrote {args.output}: data {list(q.data.shape)} uint8, {shown}")
    return 0


def _write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    import io

    from passes.files import write_atomically

    buffer = io.BytesIO()
    np.savez(buffer, **{k: _plain(v) for k, v in arrays.items()})
    write_atomically(path, buffer.getvalue())


def _plain(x: np.ndarray) -> np.ndarray:
    """bf16 arrays (ml_dtypes) are stored as float32 so any numpy can read them."""
    return x.astype(np.float32) if x.dtype.kind == "V" else x


def cmd_report(args: argparse.Namespace) -> int:
    from compiler.layer_accuracy import build_report
    from compiler.model_source import load_model
    from compiler.report_render import render_html, suggestion_line, table_rows
    from passes.files import write_atomically
    from passes.recipes import get_recipe

    recipe = get_recipe(args.recipe, parse_options(args.recipe_option))
    if not recipe.quantizes:
        raise QmlirError(f"recipe '{recipe.name}' quantizes nothing: there is nothing to report")
    if args.suggest is not None and not np.isfinite(args.suggest):
        raise QmlirError("--suggest takes a finite threshold in dB")
    html_path = None if args.no_html else Path(args.html or _default_report(args.model, recipe))
    if html_path is not None and html_path.is_dir():
        raise QmlirError(f"output '{html_path}' is a directory")
    source = load_model(args.model)
    inputs = None
    if args.inputs:
        inputs = _read_inputs(Path(args.inputs), len(source.example_inputs))
    report = build_report(
        source,
        recipe,
        inputs,
        exclude=tuple(args.exclude),
        layer_recipes=parse_layer_recipes(args.layer_recipe),
        quantize_all_matmuls=args.quantize_all_matmuls,
    )
    print(f"per-layer accuracy of recipe {recipe.name} on {report.model} (SQNR in dB vs f32):")
    print_table(table_rows(report))
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


def cmd_recipes(args: argparse.Namespace) -> int:
    from passes.recipes import RECIPES

    for name, cls in sorted(RECIPES.items()):
        print(f"{name}: {cls.summary}")
        docs = cls.option_docs()
        for f in dataclasses.fields(cls):
            default = f.default
            shown = getattr(default, "value", default)
            print(f"    {f.name} (default {shown}): {docs.get(f.name, '')}")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from compiler.runtime import load

    module = load(args.artifact)
    meta = module.metadata
    recipe = meta["recipe"]
    options = ", ".join(f"{k}={v}" for k, v in recipe["options"].items()) or "no options"
    print(f"artifact  {args.artifact} ({_size(len(module.vmfb))})")
    print(f"built by  qmlir {meta['qmlir_version']}, IREE {meta['iree_version']}")
    print(f"model     {meta['model']}")
    arch = f" ({meta['cuda_arch']})" if meta.get("cuda_arch") else ""
    print(f"target    {meta['target']}{arch}")
    print(f"recipe    {recipe['name']} ({options})")
    if meta.get("quantize_all_matmuls"):
        print("          activation x activation matmuls quantized too")

    def describe(specs: list[dict[str, Any]]) -> str:
        return ", ".join(f"{s['dtype']}{s['shape']}" for s in specs)

    sig = meta["signature"]
    print("\nfunctions")
    print(f"  main({describe(sig['inputs'])}) -> ({describe(sig['outputs'])})")
    for name in module.function_names:
        if name != "main":
            print(f"  {name}")
    layers = meta["layers"]
    print(f"\nmatmuls ({len(layers)})")
    print_layers(layers)
    weights = meta.get("weights", {})
    if weights:
        print("\nconstant bytes by format")
        print_table([("format", "bytes"), *[(k, _size(v)) for k, v in weights.items()]])
    state = meta.get("scaling_state", [])
    if state:
        keys = {e["key"] for e in state}
        print(f"\nscaling state: {len(keys)} activation(s), amax history and scale each")
    return 0


COMMANDS = {
    "compile": cmd_compile,
    "run": cmd_run,
    "quantize": cmd_quantize,
    "report": cmd_report,
    "recipes": cmd_recipes,
    "inspect": cmd_inspect,
}


if __name__ == "__main__":
    sys.exit(main())
