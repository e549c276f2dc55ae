"""One mixture-of-experts layer on the CPU: qmlir's dense, masked experts against torch eager.

    python benchmarks/moe.py [--tokens 256] [--hidden 1024] [--intermediate 1408]
                             [--experts 8] [--top-k 2] [--recipes none fp8-current fp8-block]

A random Mixtral sparse-MoE block (router and experts, f32) over ``tokens`` rows, timed in one
run (median of ``--repeats`` calls after two warm-ups, ``torch.set_num_threads(2)``):

- torch eager f32: transformers' routed loop (each expert over the tokens routed to it);
- torch eager f32, dense: the same block under ``compiler.frontend.moe.dense_experts`` (every
  expert over every token, masked), the formulation qmlir compiles;
- qmlir per recipe (static shapes, weights inline), compiled from the same block.

Printed: ms per call, the ratio to torch's routed loop, and the GEMM FLOPs each does (routed:
``2 * tokens * top_k * 3 * hidden * intermediate``; dense: ``experts / top_k`` times that) at the
rate each reaches, which says where the time goes: the dense formulation's extra GEMM work, or
the rest (routing, masks, the weighted sum).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


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
    args = parser.parse_args()

    import torch
    import transformers

    import compiler
    from compiler.frontend.moe import dense_experts

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
        rows.append(
            (
                "torch eager f32 (routed loop)",
                median_ms(lambda: block(x), args.repeats),
                routed_flops,
            )
        )
        with dense_experts(block):
            dense = median_ms(lambda: block(x), args.repeats)
        rows.append(("torch eager f32, dense experts", dense, dense_flops))
    xn = x.numpy()
    for recipe in args.recipes:
        art = compiler.compile(block, (x,), recipe)
        rows.append((f"qmlir {recipe}", median_ms(lambda a=art: a(xn), args.repeats), dense_flops))
    base = rows[0][1]
    print("| variant | ms | vs torch routed | GEMM GFLOP | GFLOP/s |")
    print("|---|---|---|---|---|")
    for name, ms, flops in rows:
        print(
            f"| {name} | {ms:.2f} | {ms / base:.2f} | {flops / 1e9:.2f} | {flops / ms / 1e6:.0f} |"
        )


if __name__ == "__main__":
    main()
