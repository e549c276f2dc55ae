"""CPU benchmark: torch eager f32 vs IREE `none` vs every recipe, measured in one run.

    python benchmarks/cpu.py [--repeats 30] [--models mlp transformer_block]

Each compile runs in a fresh child process, which reports its wall time and peak RSS (the
child's whole process, torch and IREE imports included; the import-only baseline is printed
too). Latency: median over two rounds of `--repeats` back-to-back calls per variant after
warm-up, the rounds alternating between variants (calling them interleaved one by one made
IREE's thread pool wake up cold each time); inputs fixed; IREE uses the `local-task` driver on
every core, torch its default threads. Prints a Markdown table (ratios against `none` in the
same run; top-1 agreement with f32 for models whose output rows are logits).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = {
    "mlp": "samples/mlp.py:build",
    "transformer_block": "samples/transformer_block.py:build",
    "minilm": "samples/minilm.py:build",  # batch 8, seq 128, real weights
    "decoder_lm": "samples/decoder_lm.py:build",  # Llama-style, batch 32, seq 64, next-token logits
}
LOGITS = {"decoder_lm"}  # models whose output rows are logits: top-1 agreement is reported
RECIPES = ("none", "fp8-current", "fp8-delayed", "fp8-block", "mxfp8", "nvfp4")
# extra variants, compared in the same run: label → (recipe, CompileOptions fields)
EXTRA_VARIANTS = {
    "none, fused attention": ("none", {"attention": "fused"}),
}


def _variants(recipes: list[str], extra: bool) -> dict[str, tuple[str, dict[str, object]]]:
    out: dict[str, tuple[str, dict[str, object]]] = {r: (r, {}) for r in recipes}
    if extra:
        out.update(EXTRA_VARIANTS)
    return out


def _child_compile(spec: str, recipe: str, out: str, options: str = "{}") -> None:
    import resource

    start = time.perf_counter()
    from compiler.model_source import load_model
    from compiler.pipeline import CompileOptions, compile_model
    from passes.recipes import get_recipe

    imported = time.perf_counter()
    extra = json.loads(options)
    compiled = compile_model(load_model(spec), CompileOptions(recipe=get_recipe(recipe), **extra))
    compiled.save(out)
    done = time.perf_counter()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"compile_s": done - imported, "total_s": done - start, "peak_mb": peak_mb}))


def _child_baseline() -> None:
    import resource

    import compiler  # noqa: F401 (the import cost alone)

    print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def _run_child(*args: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _median_ms(samples: list[float]) -> float:
    ordered = sorted(samples)
    return 1e3 * ordered[len(ordered) // 2]


def bench_model(
    name: str,
    spec: str,
    repeats: int,
    tmp: Path,
    variants: dict[str, tuple[str, dict[str, object]]],
) -> list[dict[str, object]]:
    import numpy as np
    import torch

    import compiler
    from compiler.metrics import compare
    from compiler.model_source import load_model

    builds = {}
    for i, (label, (recipe, extra)) in enumerate(variants.items()):
        out = tmp / f"{name}.{i}.vmfb"
        child = _run_child("--compile", spec, recipe, str(out), json.dumps(extra))
        builds[label] = {**child, "path": out}
    source = load_model(spec)
    model, inputs = source.module.eval(), source.example_inputs
    arrays = [x.numpy() for x in inputs]
    modules = {r: compiler.load(b["path"]) for r, b in builds.items()}

    def eager() -> object:
        with torch.no_grad():
            return model(*inputs)

    calls = {"torch eager f32": eager}
    calls.update({f"IREE {r}": (lambda m=m: m.run_numpy(*arrays)) for r, m in modules.items()})
    times: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(2):  # two rounds of blocks: A B C A B C
        for key, call in calls.items():
            for _ in range(3):
                call()
            for _ in range(repeats):
                start = time.perf_counter()
                call()
                times[key].append(time.perf_counter() - start)
    with torch.no_grad():
        ref = model(*inputs).numpy()
    none_ms = _median_ms(times["IREE none"])
    none_size = builds["none"]["path"].stat().st_size
    rows = []
    for key, samples in times.items():
        ms = _median_ms(samples)
        row: dict[str, object] = {"model": name, "variant": key, "latency_ms": ms}
        row["vs_none"] = ms / none_ms
        label = key.removeprefix("IREE ") if key.startswith("IREE ") else None
        if label is not None:
            b = builds[label]
            size = b["path"].stat().st_size
            out = modules[label].run_numpy(*arrays)[0]
            metrics = compare(ref, np.asarray(out, np.float64))
            row.update(
                compile_s=b["compile_s"],
                peak_mb=b["peak_mb"],
                size_mb=size / 1e6,
                size_vs_none=size / none_size,
                sqnr_db=metrics.sqnr_db,
                top1=metrics.top1 if name in LOGITS else None,
            )
        rows.append(row)
    return rows


def _fmt(value: object, spec: str) -> str:
    return "" if value is None else format(value, spec)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--compile":
        _child_compile(*sys.argv[2:6])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--baseline":
        _child_baseline()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument(
        "--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES), help="(none first)"
    )
    parser.add_argument(
        "--no-extra", action="store_true", help="skip the extra variants (fused attention)"
    )
    args = parser.parse_args()
    if args.recipes[0] != "none":
        parser.error("--recipes must start with none (the ratios are against it)")
    variants = _variants(args.recipes, not args.no_extra)
    sys.path.insert(0, str(ROOT))
    from compiler.version import IREE_VERSION, __version__

    baseline = _run_child("--baseline")["peak_mb"]
    print(
        f"qmlir {__version__}, IREE {IREE_VERSION}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; import-only peak RSS "
        f"{baseline:.0f} MB\n"
    )
    print(
        "| model | variant | latency ms | vs IREE none | compile s | compile peak MB "
        "| artifact MB | artifact vs none | SQNR dB vs f32 | top-1 vs f32 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="qmlir-bench-") as tmp:
        for name in args.models:
            for row in bench_model(name, MODELS[name], args.repeats, Path(tmp), variants):
                print(
                    f"| {row['model']} | {row['variant']} | {row['latency_ms']:.2f} "
                    f"| {row['vs_none']:.2f}x | {_fmt(row.get('compile_s'), '.2f')} "
                    f"| {_fmt(row.get('peak_mb'), '.0f')} | {_fmt(row.get('size_mb'), '.2f')} "
                    f"| {_fmt(row.get('size_vs_none'), '.3f')} "
                    f"| {_fmt(row.get('sqnr_db'), '.1f')} | {_fmt(row.get('top1'), '.3f')} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
