"""``make gpu-check``'s run step, on a GPU machine: needs only iree-base-runtime, numpy,
ml_dtypes and torch (for its baselines), and the repository on ``PYTHONPATH``: modules load
through qmlir's runtime (``compiler.runtime``, which imports neither torch nor iree.compiler).

Runs every artifact of ``build/gpu-check/`` (``benchmarks/gpu_check_build.py``) on IREE's
``cuda`` device and checks it against what llvm-cpu computed on the build machine: quantize
outputs byte for byte, the GEMMs within ``GEMM_TOLERANCE`` and the transformer block within
``MODEL_TOLERANCE`` relative L2. Then measures the quantize kernels in GB/s (f32 read, codes and
scales written) next to a device-to-device copy (torch ``copy_``, 8192x8192 bf16) taken in the same
run, and each recipe's GEMM in TFLOP/s next to ``torch._scaled_mm`` (FP8, per-tensor scales) and
bf16 ``torch.matmul`` at the same shape, and each transformer block's latency next to IREE's own
bf16 block (``block-none-bf16``) and torch eager (f32 and bf16) on the same input. Inputs too
large to carry are generated here from a seed (``check_input``, ``random_operand``; the build
imports them too).

A dry run on a CPU machine: ``gpu_check_build.py --target llvm-cpu`` then this with ``--device
local-task``: the same checks; the torch baselines (they need torch on CUDA) are skipped, the IREE
kernel timings are printed but say nothing about a GPU, and benchmarks larger than ``QUICK_*``
are skipped (``--quick``, automatic on a device other than cuda). The artifacts' target
(``manifest.json``) must be the one the device runs.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import lzma
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from iree import runtime as rt

from compiler.runtime import open_module
from compiler.runtime.seal import MAGIC, unseal
from passes.host.call import host_copies

REPEAT = 20  # timed calls per benchmark (--repeat)
MODEL_TOLERANCE = 1e-3
GEMM_TOLERANCE = 1e-5
# --quick (automatic on a device other than cuda) skips benchmarks larger than these.
QUICK_QUANTIZE_ELEMENTS = 2048 * 2048
QUICK_GEMM_FLOPS = 2 * 1024**3
# The compile target whose artifacts each IREE driver runs.
DRIVER_TARGETS = {"cuda": "cuda", "local-task": "llvm-cpu", "local-sync": "llvm-cpu"}


def fail(message: str) -> int:
    print(f"gpu-check: {message}", file=sys.stderr)
    return 1


def check_input(shape: list[int], seed: int, kind: str = "normal") -> np.ndarray:
    """A quantize module's input (the build hashes it, the run checks): standard normal f32, or
    ``adversarial`` / ``adversarial-inf`` (``adversarial_input``)."""
    if kind == "normal":
        return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    if kind in ("adversarial", "adversarial-inf"):
        return adversarial_input(shape, seed, with_inf=kind == "adversarial-inf")
    raise ValueError(f"unknown check input kind '{kind}'")


def e4m3_grid() -> np.ndarray:
    """Every non-negative finite E4M3 value, ascending (0 .. 448)."""
    mantissa, exponent = np.meshgrid(np.arange(8), np.arange(16), indexing="xy")
    normal = (1 + mantissa / 8) * 2.0 ** (exponent - 7)
    values = np.concatenate([np.arange(8) / 8 * 2.0**-6, normal[1:].ravel()])
    return np.unique(values[values <= 448]).astype(np.float32)


def adversarial_input(shape: list[int], seed: int, with_inf: bool) -> np.ndarray:
    """Rounding ties, subnormals, signed zeros, saturation and NaN, arranged so that every recipe
    meets them: each 32-element group (so each 1x16, 1x32 and 1x128 block too) holds its amax
    ``448 * 2^k`` (k per 128-block, from -30 to 20; a few blocks ``just past`` it by one ulp), so
    that power-of-two scales map the group's other values onto E4M3 grid points and midpoints
    between them exactly, and the largest k (the per-tensor amax) ties them for per-tensor scales
    too; the smallest blocks land on f32 subnormals. NaN in a few places (amax skips it), -0.0
    and f32 subnormals and the smallest normal in others; ``with_inf`` adds a few +-inf
    (the per-tensor amax then is inf: the scale rules' inf path)."""
    rng = np.random.default_rng(seed)
    rows, cols = shape
    grid = e4m3_grid()
    mids = (grid[:-1] + grid[1:]) / 2  # exact in f32: one more mantissa bit
    values = np.concatenate([grid, mids]).astype(np.float32)
    x = rng.choice(values, size=(rows, cols)).astype(np.float32)
    x *= rng.choice(np.array([-1, 1], np.float32), size=(rows, cols))
    k = rng.integers(-30, 21, size=(rows, (cols + 127) // 128))
    k[0, 0] = 20  # the per-tensor amax: every group at k = 20 ties under a per-tensor scale too
    scale = np.repeat(np.exp2(k.astype(np.float64)), 128, axis=1)[:, :cols]
    x = (x.astype(np.float64) * scale).astype(np.float32)  # exact: powers of two, no underflow
    top = (448 * scale[:, ::32]).astype(np.float32)
    past = rng.random(top.shape) < 0.05
    top[past] = np.nextafter(top[past], np.float32(np.inf))
    x[:, ::32] = top * rng.choice(np.array([-1, 1], np.float32), size=top.shape)
    flat = x.reshape(-1)
    n = flat.size
    picks = rng.choice(n, size=n // 64, replace=False)
    specials = np.array(
        [np.nan, -0.0, 0.0, 1e-45, -1e-45, 1.17549435e-38, -5.9e-39],
        dtype=np.float32,
    )
    chosen = rng.choice(specials, size=picks.size)
    not_amax = picks % 32 != 0
    flat[picks[not_amax]] = chosen[not_amax]
    if with_inf:
        spots = rng.choice(np.flatnonzero(np.arange(n) % 32 != 0), size=4, replace=False)
        flat[spots] = np.array([np.inf, -np.inf, np.inf, -np.inf], dtype=np.float32)
    return x


def random_operand(kind: str, shape: list[int], rng: np.random.Generator) -> np.ndarray:
    """A valid random GEMM operand: codes (no NaN) or positive scales, as the module takes them."""
    if kind == "f32_scale":
        return rng.uniform(0.5, 2.0, shape).astype(np.float32)
    if kind == "e4m3":  # any E4M3 code but NaN (S.1111.111)
        codes = rng.integers(0, 256, shape, dtype=np.uint8)
        codes[(codes & 0x7F) == 0x7F] = 0
    elif kind == "e2m1x2":  # two E2M1 codes per byte: every byte is valid
        codes = rng.integers(0, 256, shape, dtype=np.uint8)
    elif kind == "e8m0":  # 2^-10 .. 2^10
        codes = rng.integers(127 - 10, 127 + 11, shape, dtype=np.uint8)
    elif kind == "e4m3_scale":  # positive normal E4M3, 2^-3 .. 2^2 (x 1.875)
        codes = rng.integers(0x20, 0x48, shape, dtype=np.uint8)
    else:
        raise ValueError(f"unknown operand kind '{kind}'")
    return codes.view(np.int8)


def load(path: Path, config: Any) -> Callable[..., Any]:
    """The module's ``main`` in a context of its own (fresh module state) on ``config``'s device."""
    data = path.read_bytes()
    unpack = {".gz": gzip.decompress, ".xz": lzma.decompress}.get(path.suffix)
    raw = unpack(data) if unpack is not None else data
    # model artifacts are sealed (verified here); the quantize/GEMM modules are plain IREE ones
    vmfb = unseal(raw).vmfb if raw.endswith(MAGIC) else raw
    context, name = open_module(vmfb, config)
    return context.modules[name]["main"]


def on_device(device: Any, array: np.ndarray) -> Any:
    return rt.asdevicearray(device, array)


def host(results: Any) -> list[np.ndarray]:
    return host_copies(tuple(results) if isinstance(results, (tuple, list)) else (results,))


def call(fn: Callable[..., Any], args: list[Any], calls: int) -> list[np.ndarray]:
    """The outputs of the last of ``calls`` calls (fp8-delayed: the state moves on each call)."""
    for _ in range(calls):
        results = fn(*args)
    return host(results)


def differing(got: bytes, want: bytes) -> str:
    if len(got) != len(want):
        return f"{len(got)} bytes, expected {len(want)}"
    diff = np.frombuffer(got, np.uint8) != np.frombuffer(want, np.uint8)
    return f"{int(np.count_nonzero(diff))} of {len(want)} bytes"


def rel_l2(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.linalg.norm(got - want) / max(float(np.linalg.norm(want)), 1e-30))


def timed(fn: Callable[[], Any], repeat: int | None = None) -> float:
    """Median seconds of ``fn`` (which must wait for the device itself) over ``repeat`` calls
    (default ``REPEAT``, which ``--repeat`` sets) after one untimed call."""
    fn()
    times = []
    for _ in range(REPEAT if repeat is None else repeat):
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


def torch_tflops(m: int, n: int, k: int) -> tuple[float, float]:
    """``torch._scaled_mm`` (E4M3, per-tensor scales, f32 out) and bf16 ``torch.matmul``."""
    import torch

    a = torch.randn(m, k, device="cuda")
    b = torch.randn(n, k, device="cuda")
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
    one = torch.tensor(1.0, device="cuda")

    def scaled() -> None:
        torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.float32)
        torch.cuda.synchronize()

    def bf16() -> None:
        torch.matmul(a16, b16.t())
        torch.cuda.synchronize()

    flops = 2 * m * n * k
    return flops / timed(scaled) / 1e12, flops / timed(bf16) / 1e12


def torch_blockwise_tflops(m: int, n: int, k: int) -> tuple[float | None, str]:
    """``torch._scaled_mm`` with DeepSeek-style scales (A 1x128, B 128x128, E4M3, bf16 out), as
    fp8-block computes, where this torch and GPU support it (cuBLAS blockwise: Hopper only)."""
    import torch

    a8 = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    sa = torch.ones(k // 128, m, device="cuda").t()  # (M, K/128), outer-dim-major
    layouts = {
        "B scales (K/128, N/128)": torch.ones(n // 128, k // 128, device="cuda").t(),
        "B scales (K/128, N/128) contiguous": torch.ones(k // 128, n // 128, device="cuda"),
    }
    errors = []
    for label, sb in layouts.items():
        try:
            torch._scaled_mm(a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
        except (RuntimeError, ValueError, NotImplementedError) as e:
            errors.append(f"{label}: {str(e).strip().splitlines()[0][:120]}")
            continue

        def run(sb: Any = sb) -> None:
            torch._scaled_mm(a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
            torch.cuda.synchronize()

        return 2 * m * n * k / timed(run) / 1e12, label
    return None, "; ".join(errors)


def eager_ms(sample: str, x: np.ndarray) -> tuple[float, float]:
    """Torch eager latency of ``samples/<sample>.py`` on ``x``'s shape, f32 and bf16, in ms."""
    import importlib

    import torch

    build = importlib.import_module(f"samples.{sample}").build
    times = []
    for dtype in (torch.float32, torch.bfloat16):
        model, _ = build(dtype)
        model = model.to("cuda")
        xs = torch.from_numpy(x).to("cuda", dtype)

        def run(model: Any = model, xs: Any = xs) -> None:
            with torch.inference_mode():
                model(xs)
            torch.cuda.synchronize()

        times.append(timed(run) * 1e3)
    return times[0], times[1]


def model_input(entry: dict[str, Any], inputs: Any) -> np.ndarray:
    """A bench_model's input: stored (a name in inputs.npz) or generated here ({shape, seed})."""
    spec = entry["input"]
    x = check_input(spec["shape"], spec["seed"]) if isinstance(spec, dict) else inputs[spec]
    if entry.get("dtype") == "bf16":
        import ml_dtypes

        x = x.astype(ml_dtypes.bfloat16)
    return x


def driver_of(device: str) -> str:
    """``cuda://0`` → ``cuda``."""
    return device.split("://", 1)[0].split(":", 1)[0]


def torch_cuda() -> str | None:
    """Why the torch baselines cannot run here, or None when torch has a CUDA device."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "torch.cuda.is_available() is False"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", default="build/gpu-check", help="what gpu-build wrote")
    parser.add_argument(
        "--device", default="cuda", help="IREE device: cuda, or local-task for a CPU dry run"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="skip the large benchmarks (automatic on a device other than cuda)",
    )
    parser.add_argument("--only", help="run only the artifacts whose name starts with this")
    parser.add_argument(
        "--repeat", type=int, default=20, help="timed calls per benchmark (median; default 20)"
    )
    parser.add_argument(
        "--mark",
        action="store_true",
        help="launch torch's spin_kernel before each artifact, so that a profile of this run "
        "(ncu) splits into artifacts: benchmarks/gpu_ncu_summary.py",
    )
    parser.add_argument("--json", help="also write the table's rows to this JSON file")
    parser.add_argument("--save-diffs", help="write the outputs that fail their check to this .npz")
    args = parser.parse_args()
    global REPEAT
    REPEAT = max(1, args.repeat)
    root = Path(args.dir)
    if not (root / "manifest.json").is_file():
        return fail(f"no {root}/manifest.json: run `make gpu-build` first")
    manifest = json.loads((root / "manifest.json").read_text())
    target = manifest.get("target", "cuda")  # older manifests: cuda only
    driver = driver_of(args.device)
    if DRIVER_TARGETS.get(driver) != target:
        runs = DRIVER_TARGETS.get(driver)
        want = " or ".join(d for d, t in DRIVER_TARGETS.items() if t == target) or "?"
        rebuild = f" (or rebuild with gpu_check_build.py --target {runs})" if runs else ""
        return fail(
            f"{root} holds {target} artifacts, which device '{args.device}' cannot run: "
            f"use --device {want}{rebuild}"
        )
    gpu = driver == "cuda"
    quick = args.quick or not gpu
    try:
        config = rt.Config(args.device)  # fails cleanly without libcuda / a GPU
    except Exception as e:  # noqa: BLE001 (any failure here means: no usable device)
        reason: BaseException = e
        while reason.__cause__ is not None:  # IREE: "Could not create device", the reason after
            reason = reason.__cause__
        why = (str(reason) or type(reason).__name__).splitlines()[0]
        return fail(f"no usable {args.device} device: {why}")
    device = config.device
    no_torch = "the device is not cuda" if not gpu else torch_cuda()
    if no_torch:
        print(
            f"gpu-check: skipping the torch baselines (copy, _scaled_mm, bf16 matmul): {no_torch}"
        )
    if not gpu:
        print(
            f"gpu-check: dry run on {args.device}: the IREE timings below are {target} timings, "
            "not meaningful for a GPU"
        )
    inputs = np.load(root / "inputs.npz")
    expected = np.load(root / "expected.npz")
    failures = checks = 0
    rows: list[tuple[str, str, str]] = []

    def emit(row: tuple[str, str, str]) -> None:
        """A row of the final table, also printed now (a hang or a crash keeps what ran)."""
        rows.append(row)
        print("  ".join(row).rstrip(), flush=True)

    copy = None if no_torch else copy_gbps()
    if copy is not None:
        emit(("copy (torch, bf16 8192x8192)", f"{copy:.0f} GB/s", ""))
    note = "" if gpu else f"({target}, not a GPU figure)"
    baselines: dict[tuple[int, ...], tuple[float, float]] = {}
    # a timed model's sample and input shape: torch eager's latency on the same input
    samples: dict[tuple[str, tuple[int, ...]], np.ndarray] = {}
    diffs: dict[str, np.ndarray] = {}  # outputs that failed their check (--save-diffs)
    for entry in manifest["entries"]:
        name, kind = entry["name"], entry["kind"]
        if args.only and not name.startswith(args.only):
            continue
        if args.mark and not no_torch:
            import torch

            torch.cuda._sleep(1)  # a spin_kernel: the profile's separator before this artifact
            torch.cuda.synchronize()
        if quick and kind == "bench_quantize" and np.prod(entry["shape"]) > QUICK_QUANTIZE_ELEMENTS:
            emit((name, "skipped", f"--quick: {'x'.join(map(str, entry['shape']))}"))
            continue
        if quick and kind == "bench_gemm" and 2 * np.prod(entry["shape"]) > QUICK_GEMM_FLOPS:
            emit((name, "skipped", f"--quick: {'x'.join(map(str, entry['shape']))}"))
            continue
        try:
            main_fn = load(root / entry["vmfb"], config)
            if kind == "quantize":
                spec = entry["input"]
                x = check_input(spec["shape"], spec["seed"])
                if hashlib.sha256(x).hexdigest() != spec["sha256"]:
                    return fail(f"{name}: this numpy generates another input than the build's")
                got = call(main_fn, [x], entry["calls"])
                if len(got) != len(entry["expected"]):
                    failures += 1
                    checks += 1
                    emit(
                        (name, f"FAIL ({len(got)} outputs, expected {len(entry['expected'])})", "")
                    )
                    continue
                for i, (value, key) in enumerate(zip(got, entry["expected"], strict=True)):
                    want = expected[key]
                    got_bytes, want_bytes = value.tobytes(), want.tobytes()
                    same = got_bytes == want_bytes
                    checks += 1
                    failures += not same
                    if not same:
                        diffs[f"{name}/{i}"] = value
                    verdict = (
                        "identical" if same else f"DIFFERS ({differing(got_bytes, want_bytes)})"
                    )
                    emit((f"{name} output {i}", verdict, ""))
                for more in entry.get("more", []):  # adversarial inputs: outputs' sha256
                    spec = more["input"]
                    x = check_input(spec["shape"], spec["seed"], spec["kind"])
                    if hashlib.sha256(x).hexdigest() != spec["sha256"]:
                        return fail(f"{name}: this numpy generates another input than the build's")
                    fresh = load(root / entry["vmfb"], config)  # fp8-delayed: state from zero
                    outs = call(fresh, [x], entry["calls"])
                    for i, (value, want) in enumerate(zip(outs, more["sha256"], strict=True)):
                        same = hashlib.sha256(value.tobytes()).hexdigest() == want
                        checks += 1
                        failures += not same
                        if not same:
                            diffs[f"{name}-{spec['kind']}/{i}"] = value
                        verdict = "identical" if same else "DIFFERS (sha256)"
                        emit((f"{name} {spec['kind']} output {i}", verdict, ""))
            elif kind in ("gemm", "model"):
                if kind == "gemm":
                    args_in = [inputs[f"{name}/{i}"] for i in range(entry["inputs"])]
                    tolerance, calls = GEMM_TOLERANCE, 1
                else:
                    args_in = [inputs[entry["input"]]]
                    tolerance, calls = MODEL_TOLERANCE, entry["calls"]
                (got,) = call(main_fn, args_in, calls)
                want = expected[f"{name}/0"]
                checks += 1
                if got.shape != want.shape:
                    failures += 1
                    emit((name, f"shape {got.shape}", f"FAIL (expected {want.shape})"))
                    continue
                rel = rel_l2(got, want)
                ok = bool(rel <= tolerance)  # NaN fails
                if not ok:
                    diffs[f"{name}/0"] = got
                failures += not ok
                verdict = "ok" if ok else f"FAIL (> {tolerance:g})"
                emit((name, f"rel L2 {rel:.2e}", verdict))
                if kind == "model":
                    samples.setdefault((entry["sample"], args_in[0].shape), args_in[0])
                    x = on_device(device, args_in[0])
                    ms = timed(lambda fn=main_fn, x=x: fn(x)) * 1e3
                    emit((f"{name} latency", f"{ms:.3f} ms", note))
            elif kind == "bench_model":
                host_x = model_input(entry, inputs)
                if isinstance(entry["input"], dict):  # its own batch: torch eager on it too
                    samples.setdefault((entry["sample"], host_x.shape), host_x.astype(np.float32))
                x = on_device(device, host_x)
                ms = timed(lambda fn=main_fn, x=x: fn(x)) * 1e3
                emit((f"{name} latency", f"{ms:.3f} ms", note))
            elif kind == "bench_quantize":
                x = on_device(device, check_input(entry["shape"], 1))
                seconds = timed(lambda fn=main_fn, x=x: fn(x))  # IREE's call waits for the device
                gbps = entry["bytes"] / seconds / 1e9  # f32 in, codes and scales out
                versus = f"{gbps / copy:.0%} of copy" if copy is not None else ""
                emit((name, f"{gbps:.1f} GB/s", " ".join(filter(None, (versus, note)))))
            elif kind == "bench_gemm":
                m, n, k = entry["shape"]
                rng = np.random.default_rng(entry["seed"])
                ops = [
                    on_device(device, random_operand(s["kind"], s["shape"], rng))
                    for s in entry["operands"]
                ]
                seconds = timed(lambda fn=main_fn, ops=ops: fn(*ops))
                ours = 2 * m * n * k / seconds / 1e12
                versus = ""
                if not no_torch:
                    if (m, n, k) not in baselines:
                        baselines[(m, n, k)] = torch_tflops(m, n, k)
                    scaled, bf16 = baselines[(m, n, k)]
                    versus = f"torch._scaled_mm {scaled:.1f}, bf16 matmul {bf16:.1f} TFLOP/s"
                    if entry["name"].startswith("gemm-fp8-block-"):
                        block, how = torch_blockwise_tflops(m, n, k)
                        versus += (
                            f", _scaled_mm 1x128/128x128 {block:.1f} ({how})"
                            if block is not None
                            else f", _scaled_mm blockwise unavailable: {how}"
                        )
                emit(
                    (
                        name,
                        f"{ours:.{1 if gpu else 3}f} TFLOP/s",
                        " ".join(filter(None, (versus, note))),
                    )
                )
            else:
                return fail(f"{name}: unknown artifact kind '{kind}' in {root}/manifest.json")
        except Exception as e:  # noqa: BLE001 (one broken artifact must not hide the others)
            failures += 1
            checks += 1
            why = (str(e) or type(e).__name__).strip().splitlines()
            emit((name, "ERROR", why[-1] if why else ""))
    for (sample, shape), x in samples.items():
        if not no_torch:
            f32, bf16 = eager_ms(sample, x)
            label = f"{sample} {'x'.join(map(str, shape))}"
            emit((f"{label} torch eager f32 latency", f"{f32:.3f} ms", ""))
            emit((f"{label} torch eager bf16 latency", f"{bf16:.3f} ms", ""))
    if args.save_diffs and diffs:
        np.savez_compressed(args.save_diffs, **diffs)
    if args.json:
        Path(args.json).write_text(json.dumps({"target": target, "rows": rows}, indent=1) + "\n")
    width = max((len(r[0]) for r in rows), default=0)
    for row in rows:
        print(f"{row[0]:<{width}}  {row[1]:<24}  {row[2]}".rstrip())
    if failures:
        return fail(f"{failures} of {checks} check(s) failed")
    if not checks and not args.only:
        return fail(f"no checks in {root}/manifest.json")
    if checks:
        print(f"gpu-check: all {checks} outputs match llvm-cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
