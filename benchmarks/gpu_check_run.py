"""``make gpu-check``'s run step, on a GPU machine: needs only iree-base-runtime, numpy and torch.

Runs every artifact of ``build/gpu-check/`` (``benchmarks/gpu_check_build.py``) on IREE's
``cuda`` device: quantize outputs must equal the llvm-cpu bytes, model outputs be within 1e-3
relative L2 of llvm-cpu's. Then measures the quantize kernels in GB/s (f32 read + codes and scales
written) next to a device-to-device copy (torch ``copy_``, 8192x8192 bf16) taken in the same run,
and each recipe's Linear in TFLOP/s next to ``torch._scaled_mm`` (FP8, per-tensor scales).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def fail(message: str) -> int:
    print(f"gpu-check: {message}", file=sys.stderr)
    return 1


def load(path: Path) -> tuple[Callable[..., Any], Any]:
    """The module's ``main`` on the cuda device, and that device (for device-resident inputs)."""
    from iree import runtime as rt

    config = rt.Config("cuda")
    ctx = rt.SystemContext(config=config)
    module = rt.VmModule.copy_buffer(ctx.instance, path.read_bytes())
    ctx.add_vm_module(module)
    return ctx.modules[module.name]["main"], config.device


def on_device(device: Any, shape: list[int]) -> Any:
    from iree import runtime as rt

    return rt.asdevicearray(device, np.random.default_rng(0).standard_normal(shape, np.float32))


def host(results: Any) -> list[np.ndarray]:
    results = results if isinstance(results, (tuple, list)) else (results,)
    return [np.array(r.to_host(), copy=True) for r in results]


def timed(fn: Callable[[], Any], repeat: int = 20) -> float:
    """Median seconds of ``fn`` (which must wait for the device itself)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def copy_gbps() -> float:
    import torch

    src = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)

    def run() -> None:
        dst.copy_(src)
        torch.cuda.synchronize()

    return 2 * src.numel() * 2 / timed(run) / 1e9


def scaled_mm_tflops(m: int, n: int, k: int) -> float:
    import torch

    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device="cuda")

    def run() -> None:
        torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.float32)
        torch.cuda.synchronize()

    return 2 * m * n * k / timed(run) / 1e12


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", default="build/gpu-check", help="what gpu-build wrote")
    args = parser.parse_args()
    root = Path(args.dir)
    if not (root / "manifest.json").is_file():
        return fail(f"no {root}/manifest.json: run `make gpu-build` first")
    try:
        import torch

        if not torch.cuda.is_available():
            return fail("no cuda device on this machine (torch.cuda.is_available() is False)")
        from iree import runtime as rt

        rt.get_driver("cuda").create_default_device()  # fails cleanly without libcuda / a GPU
    except Exception as e:  # noqa: BLE001 (any failure here means: no usable GPU)
        return fail(f"no usable cuda device: {str(e).splitlines()[0]}")
    manifest = json.loads((root / "manifest.json").read_text())
    inputs = np.load(root / "inputs.npz")
    expected = np.load(root / "expected.npz")
    failures = 0
    rows: list[tuple[str, str, str]] = []
    copy = copy_gbps()
    rows.append(("copy (torch, bf16 8192x8192)", f"{copy:.0f} GB/s", ""))
    for entry in manifest["entries"]:
        main_fn, device = load(root / entry["vmfb"])
        name, kind = entry["name"], entry["kind"]
        if kind == "quantize":
            got = host(main_fn(inputs[entry["input"]]))
            for i, value in enumerate(got):
                want = expected[f"{name}/{i}"]
                same = value.tobytes() == want.tobytes()
                failures += not same
                rows.append((f"{name} output {i}", "identical" if same else "DIFFERS", ""))
        elif kind == "model":
            (got,) = host(main_fn(inputs[entry["input"]]))
            want = expected[f"{name}/0"]
            rel = float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))
            failures += not rel <= 1e-3
            rows.append((name, f"rel L2 {rel:.2e}", "ok" if rel <= 1e-3 else "FAIL"))
        elif kind == "bench_quantize":
            x = on_device(device, entry["shape"])
            seconds = timed(lambda fn=main_fn, x=x: fn(x))  # IREE's call waits for the device
            moved = float(np.prod(entry["shape"])) * (4 + 1)  # f32 in, 1-byte codes out
            gbps = moved / seconds / 1e9
            rows.append((name, f"{gbps:.0f} GB/s", f"{gbps / copy:.0%} of copy"))
        elif kind == "bench_gemm":
            m, n, k = entry["shape"]
            x = on_device(device, [m, k])
            seconds = timed(lambda fn=main_fn, x=x: fn(x))  # activation quantize included
            ours = 2 * m * n * k / seconds / 1e12
            theirs = scaled_mm_tflops(m, n, k)
            rows.append((name, f"{ours:.1f} TFLOP/s", f"torch._scaled_mm {theirs:.1f} TFLOP/s"))
    width = max(len(r[0]) for r in rows)
    for row in rows:
        print(f"{row[0]:<{width}}  {row[1]:<16}  {row[2]}")
    if failures:
        return fail(f"{failures} check(s) failed")
    print("gpu-check: all outputs match llvm-cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
