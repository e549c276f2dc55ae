"""CPU benchmark: torch eager, ONNX Runtime, OpenVINO, IREE `none` and every recipe, in one run.

    python benchmarks/cpu.py [--repeats 30] [--models mlp transformer_block] [--profile fp8-current]
                             [--dynamic [--panels]] [--no-extra]

Each compile runs in a fresh child process, which reports its wall time and peak RSS (the
child's whole process, torch and IREE imports included; the import-only baseline is printed
too). Latency: median over three rounds of `--repeats` back-to-back calls per variant after
warm-up, the rounds alternating between variants (calling them interleaved one by one made
IREE's thread pool wake up cold each time); inputs fixed; the process keeps freed memory from the
first IREE call on, as any program's does (``compiler/runtime/host_memory.py``: for every
variant in it, torch's too); IREE uses the `local-task` driver on
every core, torch its default threads; torch eager bf16 too on a host with native bf16; ONNX
Runtime (f32, dynamic int8) and OpenVINO (f32, bf16 where native) on the model exported to ONNX
from the same module (``benchmarks/cpu_peers.py``; the ``bench`` extra), every core. Prints
a Markdown table (ratios against `none` in the same run; SQNR against torch f32 for every row,
and top-1 agreement with f32 for models whose output rows are logits); `--profile RECIPE`
adds, per model, that artifact under IREE's profiler (10 calls): mean time per call of each
dispatch family (GEMM, quantize, decode, pack, ...).
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
sys.path.insert(0, str(ROOT / "benchmarks"))
from cpu_peers import first_output, peer_calls  # noqa: E402
from peak_rss import peak_mb  # noqa: E402

MODELS = {
    "mlp": "samples/mlp.py:build",
    "transformer_block": "samples/transformer_block.py:build",
    "minilm": "samples/minilm.py:build",  # batch 8, seq 128, real weights
    "decoder_lm": "samples/decoder_lm.py:build",  # Llama-style, batch 32, seq 64, next-token logits
}
LOGITS = {"decoder_lm"}  # models whose output rows are logits: top-1 agreement is reported
RECIPES = ("none", "fp8-current", "fp8-delayed", "fp8-block", "mxfp8", "mxfp4", "nvfp4")
# extra variants, compared in the same run: label → (recipe, CompileOptions fields)
EXTRA_VARIANTS = {
    # IREE's attention op with data tiling fails on the decoder ("large vector sizes")
    "none, fused attention, no data tiling": (
        "none",
        {"attention": "fused", "iree_flags": ["--iree-opt-data-tiling=false"]},
    ),
    "none, no data tiling": ("none", {"iree_flags": ["--iree-opt-data-tiling=false"]}),
    # the recipes' rows use bf16 GEMM operands on a CPU with AVX512-BF16 (auto); this, f32 ones
    "fp8-current, f32 GEMM operands": ("fp8-current", {"gemm_operands": "f32"}),
    # attention decomposed for IREE's GEMMs and softmax, not prefill-attention's kernel (nor
    # decode-gemv's, which a call of several rows has no use for)
    "none, decomposed attention": ("none", {"decode_gemv": "off"}),
    "fp8-current, decomposed attention": ("fp8-current", {"decode_gemv": "off"}),
}


# --dynamic: each model's batch (and sequence) dims dynamic, as `qmlir compile --dynamic` says
DYNAMIC = {
    "samples/mlp.py:build": ["x:0=batch:1..64"],
    "samples/transformer_block.py:build": ["x:0=batch:1..64", "x:1=seq:2..128"],
    "samples/minilm.py:build": [
        f"{name}:{dim}={label}"
        for name in ("input_ids", "attention_mask")
        for dim, label in ((0, "batch:1..32"), (1, "seq:2..128"))
    ],
    "samples/decoder_lm.py:build": ["input_ids:0=batch:1..64", "input_ids:1=seq:2..64"],
}


def _variants(
    recipes: list[str], extra: list[str], dynamic: bool = False, panels: bool = False
) -> dict[str, tuple[str, dict[str, object]]]:
    out: dict[str, tuple[str, dict[str, object]]] = {r: (r, {}) for r in recipes}
    out.update({name: EXTRA_VARIANTS[name] for name in extra})
    if dynamic:  # run at the static artifact's size; unquantized matmuls allowed (counted)
        for r in recipes:
            out[f"{r}, dynamic"] = (r, {"dynamic": True, "allow_unquantized": True})
    if dynamic and panels:  # the quantizing recipes' dynamic GEMMs under dynamic-gemm too
        for r in recipes[1:]:
            options = {"dynamic": True, "allow_unquantized": True, "pack_weights": "panels"}
            out[f"{r}, dynamic, panels"] = (r, options)
    return out


def _child_compile(spec: str, recipe: str, out: str, options: str = "{}") -> None:
    start = time.perf_counter()
    from compiler.frontend.model_source import load_model
    from compiler.pipeline.inference import compile_model
    from compiler.pipeline.options import CompileOptions
    from compiler.pipeline.target import resolve_target
    from passes.recipes import get_recipe

    imported = time.perf_counter()
    extra = json.loads(options)
    if "iree_flags" in extra:
        extra["iree_flags"] = tuple(extra["iree_flags"])
    source = load_model(spec)
    if extra.pop("dynamic", False):
        from compiler.frontend.dynamic_dims import dynamic_shapes_from_flags

        source.dynamic_shapes = dynamic_shapes_from_flags(source, DYNAMIC[spec])
    options = CompileOptions(recipe=get_recipe(recipe), target=resolve_target(), **extra)
    compiled = compile_model(source, options)
    compiled.save(out)
    done = time.perf_counter()
    print(json.dumps({"compile_s": done - imported, "total_s": done - start, "peak_mb": peak_mb()}))


def _child_baseline() -> None:
    import compiler  # noqa: F401 (the import cost alone)

    print(json.dumps({"peak_mb": peak_mb()}))


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
    profiles: dict[str, list[str]],
    profile_label: str | None = None,
) -> list[dict[str, object]]:
    """The model's rows; with ``profile_label``, that variant's profile into ``profiles``."""
    import numpy as np
    import torch

    import compiler
    from compiler.analysis.metrics import compare
    from compiler.frontend.model_source import load_model

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
    if native_bf16():
        import copy

        model_bf16 = copy.deepcopy(model).to(torch.bfloat16)
        inputs_bf16 = [x.to(torch.bfloat16) if x.is_floating_point() else x for x in inputs]

        def eager_bf16() -> object:
            with torch.no_grad():
                return model_bf16(*inputs_bf16)

        calls["torch eager bf16"] = eager_bf16
    calls.update({f"IREE {r}": (lambda m=m: m.run_numpy(*arrays)) for r, m in modules.items()})
    peers_dir = tmp / f"{name}.peers"
    peers_dir.mkdir(exist_ok=True)
    calls.update(peer_calls(model, inputs, source.input_names(), peers_dir, native_bf16()))
    times: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(3):  # three rounds of blocks: A B C A B C A B C
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
            row.update(
                compile_s=b["compile_s"],
                peak_mb=b["peak_mb"],
                size_mb=size / 1e6,
                size_vs_none=size / none_size,
            )
        else:  # torch eager and the peers: their first output
            out = first_output(calls[key]())
        metrics = compare(ref, np.asarray(out, np.float64).reshape(ref.shape))
        row.update(sqnr_db=metrics.sqnr_db, top1=metrics.top1 if name in LOGITS else None)
        rows.append(row)
    if profile_label is not None:
        profiles[name] = profile(builds[profile_label]["path"], arrays, tmp)
    return rows


def native_bf16() -> bool:
    """Whether this host has bf16 arithmetic (AVX512-BF16 or AMX-BF16)."""
    from passes.base.cpu_features import host_flags

    return bool((host_flags() or set()) & {"avx512_bf16", "amx_bf16"})


def _kind(dispatch: str) -> str:
    """A dispatch's family from IREE's name (``main$async_dispatch_7_elementwise_..._f32xi8``)."""
    name = dispatch.split("_dispatch_", 1)[-1]
    if "_encoding_" in dispatch or name.startswith("encode"):
        return "data-tiling pack"
    for word, kind in (("attention", "attention op"), ("softmax", "softmax")):
        if word in name:
            return kind
    if "matmul" in name or "matvec" in name:
        return "GEMM"
    if "xi8" in name and "i8x" not in name:
        return "quantize (f32 → codes)"
    if "i8x" in name:
        return "decode (codes → GEMM operand)"
    if "reduction" in name:
        return "reductions (amax, norms, ...)"
    return "elementwise / other"


PROFILE_CALLS = 10  # calls under the profiler; the figures are the mean per call


def profile(vmfb: Path, arrays: list[object], tmp: Path) -> list[str]:
    """``PROFILE_CALLS`` calls under IREE's host-execution profiler (``iree-benchmark-module``
    then ``iree-profile statistics``): mean time per call of each dispatch family and of the
    largest dispatches."""
    import numpy as np

    tools = Path(sys.executable).parent
    inputs = []
    for i, array in enumerate(arrays):
        np.save(tmp / f"input{i}.npy", array)
        inputs.append(f"--input=@{tmp / f'input{i}.npy'}")
    trace = tmp / "profile.ireeprof"
    subprocess.run(
        [str(tools / "iree-benchmark-module"), f"--module={vmfb}", "--function=main", *inputs,
         f"--benchmark_min_time={PROFILE_CALLS}x",
         "--device_profiling_mode=host-execution", f"--device_profiling_output={trace}"],
        check=True, capture_output=True,
    )  # fmt: skip
    stats = subprocess.run(
        [str(tools / "iree-profile"), "statistics", "--format=jsonl", str(trace)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    per_dispatch: dict[str, float] = {}
    counts: list[int] = []
    for line in stats.splitlines():
        row = json.loads(line)
        if row.get("row_type") == "host_execution_function" and row.get("function_name"):
            name = row["function_name"]
            per_dispatch[name] = per_dispatch.get(name, 0.0) + row["total_duration_ns"] / 1e6
            if "_initializer_" not in name:
                counts.append(row["sample_count"])
    # every dispatch of the call runs at least once per call, and some run exactly once: the
    # smallest count is the number of calls profiled (the benchmark's own warm-up included)
    calls = min(counts) if counts else 1
    per_dispatch = {
        name: ms / calls for name, ms in per_dispatch.items() if "_initializer_" not in name
    }
    total = sum(per_dispatch.values())
    kinds: dict[str, float] = {}
    for name, ms in per_dispatch.items():
        kinds[_kind(name)] = kinds.get(_kind(name), 0.0) + ms
    lines = ["| dispatch family | ms | share |", "|---|---|---|"]
    for kind, ms in sorted(kinds.items(), key=lambda item: -item[1]):
        lines.append(f"| {kind} | {ms:.2f} | {ms / total:.0%} |")
    lines += [f"| all dispatches | {total:.2f} | 100% |", ""]
    lines += ["| largest dispatches | ms | share |", "|---|---|---|"]
    for name, ms in sorted(per_dispatch.items(), key=lambda item: -item[1])[:8]:
        lines.append(f"| `{name.split('_dispatch_', 1)[-1]}` | {ms:.2f} | {ms / total:.0%} |")
    return lines


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
        "--profile",
        metavar="RECIPE",
        help="after each model's table rows: RECIPE's artifact under IREE's profiler, mean "
        "time per call of each dispatch family",
    )
    parser.add_argument(
        "--no-extra",
        action="store_true",
        help="skip the extra variants (fused attention, no data tiling, f32 GEMM operands, "
        "decomposed attention)",
    )
    parser.add_argument(
        "--extra",
        nargs="+",
        choices=list(EXTRA_VARIANTS),
        metavar="VARIANT",
        help=f"only these extra variants (of: {'; '.join(EXTRA_VARIANTS)})",
    )
    parser.add_argument(
        "--dynamic",
        action="store_true",
        help="also each recipe compiled with dynamic batch/sequence dims, run at the static size",
    )
    parser.add_argument(
        "--panels",
        action="store_true",
        help="with --dynamic: also each quantizing recipe's dynamic artifact under "
        "--pack-weights panels (its GEMMs in the hand-written bf16 GEMM: dynamic-gemm)",
    )
    args = parser.parse_args()
    if args.recipes[0] != "none":
        parser.error("--recipes must start with none (the ratios are against it)")
    extra = [] if args.no_extra else args.extra or list(EXTRA_VARIANTS)
    if args.panels and not args.dynamic:
        parser.error("--panels needs --dynamic")
    variants = _variants(args.recipes, extra, args.dynamic, args.panels)
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
    if args.profile is not None and args.profile not in variants:
        parser.error(f"--profile {args.profile}: not among --recipes")
    profiles: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="qmlir-bench-") as tmp:
        for name in args.models:
            rows = bench_model(
                name, MODELS[name], args.repeats, Path(tmp), variants, profiles, args.profile
            )
            for row in rows:
                print(
                    f"| {row['model']} | {row['variant']} | {row['latency_ms']:.2f} "
                    f"| {row['vs_none']:.2f}x | {_fmt(row.get('compile_s'), '.2f')} "
                    f"| {_fmt(row.get('peak_mb'), '.0f')} | {_fmt(row.get('size_mb'), '.2f')} "
                    f"| {_fmt(row.get('size_vs_none'), '.3f')} "
                    f"| {_fmt(row.get('sqnr_db'), '.1f')} | {_fmt(row.get('top1'), '.3f')} |",
                    flush=True,
                )
    for name, lines in profiles.items():
        print(f"\n{name}, {args.profile}: mean of {PROFILE_CALLS} calls under IREE's profiler\n")
        print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
