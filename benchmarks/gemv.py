"""One decode-step GEMM on the CPU: ``decode-gemv``'s matrix-vector product against the
data-tiled GEMM, per recipe, in one run.

    python benchmarks/gemv.py [--k 2048] [--n 5632] [--copies 8] [--recipes fp8-current ... nvfp4]
                              [--calls 100] [--rounds 2]

``--copies`` distinct ``torch.nn.Linear(k, n)`` (random weights, seed 0, inline) applied to the
same x and summed (so one call streams ``copies`` weights: 8 of 2048 x 5632 are 52 MB under
nvfp4, more than this host's 32 MB L3 holds; with one, the weight is read back from the cache
call after call and "beats" the memory bound), compiled per recipe with
``decode_gemv="auto"`` (the matrix-vector product that decodes the weight's codes in its loop,
``passes/lowering/cpu/gemv.py``) and ``"off"`` (IREE's data-tiled GEMM over decoded copies made
at load), each called with one row of x (``compiler.compile`` then the artifact's ``__call__``:
the activation's quantize, the products and the Python call all included). Time per call: the
best of ``--rounds`` rounds of ``--calls`` back-to-back calls, divided by ``copies``: a GEMM's.
The same compile with ``n`` = 128 gives the fixed cost of a GEMM (its weight reads a few
microseconds): "kernel" columns take it off. The bound is the weight's bytes (codes and scales
as stored) at this host's two-thread read bandwidth (``generate.read_bandwidth``). The two
variants' outputs are compared (relative L2): the same exact products, f32 sums in another
order.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import read_bandwidth  # noqa: E402

import compiler  # noqa: E402

# bytes a weight element takes as stored: the code and its share of the block scales
BYTES_PER_WEIGHT = {
    "fp8-current": 1.0,
    "fp8-delayed": 1.0,
    "fp8-block": 1.0 + 4 / (128 * 128),
    "mxfp8": 1.0 + 1 / 32,
    "mxfp4": 0.5 + 1 / 32,
    "nvfp4": 0.5 + 1 / 16,
}


class Summed(torch.nn.Module):
    """``copies`` linears of one shape applied to the same x, their outputs summed."""

    def __init__(self, k: int, n: int, copies: int) -> None:
        super().__init__()
        self.linears = torch.nn.ModuleList(torch.nn.Linear(k, n, bias=False) for _ in range(copies))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([linear(x) for linear in self.linears]).sum(0)


def timed(art: compiler.CompiledModule, x: np.ndarray, calls: int, rounds: int) -> float:
    """Seconds a call takes: the best round's mean."""
    art(x)  # warm-up: loads the module, maps its buffers
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            art(x)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=2048)
    parser.add_argument("--n", type=int, default=5632)
    parser.add_argument("--recipes", nargs="+", default=list(BYTES_PER_WEIGHT))
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    bandwidth = read_bandwidth()
    print(f"host: {platform.machine()}, two-thread read bandwidth {bandwidth:.1f} GB/s")
    print(
        f"one row of x [1, {args.k}] by a weight [{args.n}, {args.k}], {args.copies} weights a "
        "call (inline), times a GEMM\n"
    )
    print(
        "| recipe | variant | ms / call | fixed ms | kernel ms | G weights/s (kernel) "
        "| bound ms | kernel / bound | vs data-tiled | rel. L2 vs data-tiled |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    torch.manual_seed(0)
    x = torch.randn(1, args.k)
    models = {n: Summed(args.k, n, args.copies).eval() for n in (args.n, 128)}
    for recipe in args.recipes:
        bound = args.n * args.k * BYTES_PER_WEIGHT[recipe] / (bandwidth * 1e9)
        rows, outputs = {}, {}
        for mode in ("off", "auto"):
            times = []
            for n, model in models.items():
                art = compiler.compile(model, (x,), recipe=recipe, decode_gemv=mode)
                times.append(timed(art, x.numpy(), args.calls, args.rounds) / args.copies)
                if n == args.n:
                    outputs[mode] = np.asarray(art(x.numpy()))
            rows[mode] = times
        want = outputs["off"]
        rel = np.linalg.norm(outputs["auto"] - want) / np.linalg.norm(want)
        for mode, name in (("off", "data-tiled"), ("auto", "decode-gemv")):
            call, fixed = rows[mode]
            kernel = call - fixed
            ratio = rows["off"][0] / call
            print(
                f"| {recipe} | {name} | {1e3 * call:.3f} | {1e3 * fixed:.3f} | "
                f"{1e3 * kernel:.3f} | {args.n * args.k / kernel / 1e9:.1f} | {1e3 * bound:.3f} | "
                f"{kernel / bound:.2f} | {ratio:.2f}x | {rel if mode == 'auto' else 0.0:.1e} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
