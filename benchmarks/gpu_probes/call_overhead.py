"""How long a cuda artifact's call takes beyond its kernels, under IREE's cuda runtime flags:
a generator's decode step (one token) and a small model's call, timed in a fresh process per
flag set (IREE reads its flags when it creates the cuda driver, once per process).

Needs the artifacts of ``cuda_paths.py build`` (``--dir``, default ``build/cuda-paths``). On the
GPU machine (``iree-base-runtime``, numpy, ml_dtypes; ``PYTHONPATH`` at the repository):

    python benchmarks/gpu_probes/call_overhead.py --dir build/cuda-paths

prints one row per flag set: the median wall time of a decode step of ``gen-none-inline`` and of
``gen-fp8-block-external``, and of ``mlp-dynamic-fp8-current`` at batch 64. ``--steps N`` makes
one process run a prefill and N decode steps of ``--artifact`` and nothing else: under Nsight
Compute (``ncu --csv --metrics gpu__time_duration.sum``) the kernels of one step are the last
1/(N+1) of its list, which gives their count and GPU time to set against the wall time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from cuda_paths import gen_prompt  # this script's folder is on the path

ROOT = Path(__file__).resolve().parents[2]
FLAG_SETS: dict[str, list[str]] = {
    "default": [],
    "streams": ["--cuda_use_streams=true"],
    "graphs": ["--cuda_use_streams=false"],
    "streams, inline execution": ["--cuda_use_streams=true", "--cuda_allow_inline_execution=true"],
    "no async allocations": ["--cuda_async_allocations=false"],
}
GENERATORS = ("gen-none-inline", "gen-fp8-block-external")
MLP = "mlp-dynamic-fp8-current"
CALLS = 50


def _median_ms(call: Any, calls: int = CALLS) -> float:
    for _ in range(5):
        call()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def measure(folder: Path, flags: list[str]) -> dict[str, float]:
    """This process's timings under ``flags`` (parsed before the first cuda device)."""
    from iree.runtime import flags as iree_flags

    if flags:
        iree_flags.parse_flags(*flags)
    sys.path.insert(0, str(ROOT))
    from compiler.runtime import load

    prompt = gen_prompt()  # the prompt cuda_paths.py built the generators with
    token = np.array([[5]], np.int64)
    rows: dict[str, float] = {}
    for name in GENERATORS:
        gen = load(folder / f"{name}.vmfb", device="cuda")
        gen.step(prompt, 0)
        rows[f"{name} decode step"] = _median_ms(lambda gen=gen: gen.step(token, 12))
    mlp = load(folder / f"{MLP}.vmfb", device="cuda")
    x = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
    rows[f"{MLP} batch 64"] = _median_ms(lambda: mlp(x))
    return rows


def anatomy(folder: Path) -> None:
    """Where a call's wall time goes on the default flags: the whole ``CompiledModule`` call,
    IREE's function called on numpy arguments (uploaded by the binding) with the results left
    on the device, the same on arguments already on the device, an upload alone, and the call
    on device arguments with its result brought to the host."""
    from iree import runtime as iree_runtime

    sys.path.insert(0, str(ROOT))
    from compiler.runtime import load

    prompt = gen_prompt()  # the prompt cuda_paths.py built the generators with
    cases = [(n, [np.array([[5]], np.int64), np.array([12], np.int64)], True) for n in GENERATORS]
    cases.append((MLP, [np.ones((64, 256), np.float32)], False))
    for name, args, is_gen in cases:
        art = load(folder / f"{name}.vmfb", device="cuda")
        if is_gen:
            art.step(prompt, 0)
        context = art._load()
        fn = context.modules[art._module_name]["main"]
        device = context.config.device
        on_device = [iree_runtime.asdevicearray(device, a) for a in args]
        rows = {
            "qmlir call": _median_ms(lambda art=art, args=args: art.run_numpy(*args)),
            "IREE call, numpy args": _median_ms(lambda fn=fn, args=args: fn(*args)),
            "IREE call, device args": _median_ms(lambda fn=fn, d=on_device: fn(*d)),
            "upload of the first arg": _median_ms(
                lambda device=device, a=args[0]: iree_runtime.asdevicearray(device, a)
            ),
            "IREE call, device args, + to_host": _median_ms(
                lambda fn=fn, d=on_device: np.array(fn(*d).to_host())
            ),
        }
        print(f"{name}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in rows.items()), flush=True)


def steps_only(folder: Path, artifact: str, steps: int) -> None:
    """A prefill and ``steps`` decode steps, nothing else (for Nsight Compute)."""
    sys.path.insert(0, str(ROOT))
    from compiler.runtime import load

    gen = load(folder / f"{artifact}.vmfb", device="cuda")
    prompt = gen_prompt()  # the prompt cuda_paths.py built the generators with
    gen.step(prompt, 0)
    for i in range(steps):
        gen.step(np.array([[5]], np.int64), 12 + i)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("build/cuda-paths"))
    parser.add_argument("--one", help="internal: measure under this flag set (JSON list)")
    parser.add_argument("--steps", type=int, help="a prefill and N decode steps only")
    parser.add_argument("--artifact", default="gen-fp8-block-external")
    parser.add_argument("--anatomy", action="store_true", help="where a call's time goes")
    args = parser.parse_args()
    if args.anatomy:
        anatomy(args.dir)
        return 0
    if args.steps is not None:
        steps_only(args.dir, args.artifact, args.steps)
        return 0
    if args.one is not None:
        print(json.dumps(measure(args.dir, json.loads(args.one))))
        return 0
    table: dict[str, dict[str, float]] = {}
    for label, flags in FLAG_SETS.items():
        cmd = [sys.executable, __file__, "--dir", str(args.dir), "--one", json.dumps(flags)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            print(f"{label}: ERROR {done.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        table[label] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{label}: {table[label]}", flush=True)
    columns = sorted({c for row in table.values() for c in row})
    print("\nmedian wall ms per call | " + " | ".join(columns))
    for label, row in table.items():
        print(f"{label:28s} | " + " | ".join(f"{row.get(c, float('nan')):8.3f}" for c in columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
