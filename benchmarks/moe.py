"""One mixture-of-experts layer on the CPU: qmlir's routed (grouped) experts against torch eager
and against qmlir's dense, masked formulation.

    python benchmarks/moe.py [--tokens 256] [--hidden 1024] [--intermediate 1408]
                             [--experts 8] [--top-k 2] [--recipes none fp8-current fp8-block]

A random Mixtral sparse-MoE block (router and experts, f32) over ``tokens`` rows, timed in one
run (median of ``--repeats`` calls after two warm-ups, ``torch.set_num_threads(2)``):

- torch eager f32 and bf16: transformers' routed loop (each expert over the tokens routed to it);
- torch eager f32 under ``compiler.frontend.moe.experts_as_layers``: the routed formulation
  qmlir compiles (``routed``) and the dense, masked one (every expert over every token);
- qmlir per recipe (static shapes, weights inline), compiled from the same block both ways.

Printed: ms per call, the ratio to torch's f32 routed loop, and the GEMM FLOPs each does
(routed: ``2 * tokens * top_k * 3 * hidden * intermediate``; dense: ``experts / top_k`` times
that) at the rate each reaches, which says where the time goes: GEMM work, or the rest
(routing, the gathers, the weighted sum).

``--profile RECIPE`` then samples the routed artifact of RECIPE with Linux ``perf`` (as
``profile_decode.py`` does: IREE's dispatches in a system library, each sample named by its
dispatch) over ``--repeats`` calls and prints the CPU time per dispatch family and the costliest
dispatches.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
SYSTEM_LIBRARY = ("--iree-llvmcpu-link-embedded=false", "--iree-llvmcpu-debug-symbols=true")


def median_ms(fn: Any, repeats: int) -> float:
    fn()
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--intermediate", type=int, default=1408)
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--recipes", nargs="+", default=["none", "fp8-current", "fp8-block"])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--profile", metavar="RECIPE", help="perf-sample RECIPE's routed artifact")
    args = parser.parse_args()

    import torch
    import transformers

    import compiler
    from compiler.frontend import moe

    torch.set_num_threads(2)
    config = transformers.MixtralConfig(
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_local_experts=args.experts,
        num_experts_per_tok=args.top_k,
    )
    torch.manual_seed(0)
    block = transformers.models.mixtral.modeling_mixtral.MixtralSparseMoeBlock(config).eval()
    for p in block.parameters():
        torch.nn.init.normal_(p, std=0.02)
    x = torch.randn(1, args.tokens, args.hidden)
    routed_flops = 2 * args.tokens * args.top_k * 3 * args.hidden * args.intermediate
    dense_flops = routed_flops * args.experts // args.top_k
    print(
        f"host: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"{args.tokens} tokens, hidden {args.hidden}, intermediate {args.intermediate}, "
        f"{args.experts} experts, top-{args.top_k}\n"
    )
    rows: list[tuple[str, float, int]] = []
    with torch.no_grad():
        f32 = median_ms(lambda: block(x), args.repeats)
        rows.append(("torch eager f32 (routed loop)", f32, routed_flops))
        bf16, xb = copy.deepcopy(block).to(torch.bfloat16), x.to(torch.bfloat16)
        rows.append(
            (
                "torch eager bf16 (routed loop)",
                median_ms(lambda: bf16(xb), args.repeats),
                routed_flops,
            )
        )
        for routed, flops in ((True, routed_flops), (False, dense_flops)):
            with moe.experts_as_layers(block, "routed" if routed else "dense"):
                ms = median_ms(lambda: block(x), args.repeats)
            form = "routed" if routed else "dense"
            rows.append((f"torch eager f32, qmlir's {form} formulation", ms, flops))
    xn = x.numpy()
    for recipe in args.recipes:
        for form, flops in (("routed", routed_flops), ("dense", dense_flops)):
            art = compiler.compile(block, (x,), recipe, experts=form)
            ms = median_ms(lambda a=art: a(xn), args.repeats)
            rows.append((f"qmlir {recipe}, {form}", ms, flops))
    base = rows[0][1]
    print("| variant | ms | vs torch routed | GEMM GFLOP | GFLOP/s |")
    print("|---|---|---|---|---|")
    for name, ms, flops in rows:
        print(
            f"| {name} | {ms:.2f} | {ms / base:.2f} | {flops / 1e9:.2f} | {flops / ms / 1e6:.0f} |"
        )
    if args.profile:
        from compiler.frontend.model_source import ModelSource
        from compiler.pipeline.inference import compile_model
        from compiler.pipeline.options import CompileOptions
        from compiler.pipeline.target import resolve_target
        from passes.recipes import get_recipe

        options = CompileOptions(
            recipe=get_recipe(args.profile),
            target=resolve_target("llvm-cpu", None, None),
            iree_flags=SYSTEM_LIBRARY,
        )
        profile(compile_model(ModelSource("moe", block, (x,)), options), xn, args)


def profile(art: Any, xn: Any, args: argparse.Namespace) -> None:
    """``perf record`` of this process over ``args.repeats`` calls of ``art``: CPU time by
    dispatch family and the costliest dispatches."""
    import tempfile

    from profile_decode import FREQUENCY, attribute, library_symbols, print_tables, samples

    with tempfile.TemporaryDirectory() as work:
        artifact, data = Path(work) / "moe.vmfb", Path(work) / "perf.data"
        art.save(artifact)
        art(xn)
        perf = subprocess.Popen(
            ["perf", "record", "-F", str(FREQUENCY), "-p", str(os.getpid()), "-o", str(data)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0)  # perf attaches to every thread
        for _ in range(args.repeats):
            art(xn)
        perf.send_signal(signal.SIGINT)
        perf.wait()
        by_function = attribute(samples(data), *library_symbols(artifact))
    total = sum(by_function.values())
    print(f"\n## {args.profile}, routed: {total} samples over {args.repeats} calls")
    print_tables(by_function, args.repeats, "call", 12)


if __name__ == "__main__":
    main()
