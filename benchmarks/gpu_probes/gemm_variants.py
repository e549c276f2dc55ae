"""The FP8 GEMM kernels of ``gemm_block_scaled.cu`` as variants, checked and timed on a GPU
without IREE: a tuning round's probe (the full check with artifacts is ``gpu_check_run.py``).

Here (no GPU): ``python benchmarks/gpu_probes/gemm_variants.py build --dir build/gemm-variants``
compiles the family's PTX (and ``gemm_few_rows``'s beside it) once per variant (``mma``:
compute_90, the mma.sync path; ``wgmma``: compute_90a, Hopper's warpgroup MMA; more with
``--variant NAME:ARCH[:DEFINE,...]``). The token ``+few_rows`` among the defines launches the
``*_few_rows`` kernels at M <= 16, as a static M's artifacts do, ``+dynamic`` what a dynamic
M's do at every M (``*_few_rows``, then ``*_many_rows`` on the same C); without either the
tiles run at every M.

On the GPU machine (torch and cupy, both in its image):
``python benchmarks/gpu_probes/gemm_variants.py run --dir build/gemm-variants`` loads each PTX
with cupy, checks ``qmlir_gemm_fp8_per_tensor`` and ``qmlir_gemm_fp8_block`` (every scale-layout
pair) against a float64 reference on random E4M3 codes and scales at odd sizes (relative L2 <=
1e-5; C poisoned with NaN first, so an unwritten element fails), then times them at 4096^3 and
8192^3 with CUDA events (median kernel time) beside ``torch._scaled_mm`` (per-tensor and
1x128/128x128 blockwise) and bf16 ``torch.matmul`` in the same run, and a decode step's GEMMs
(1 and 16 rows of a 1.1B Llama's projections) in microseconds and weight bytes per second. The
``few_rows`` variant launches the decode kernels ``*_few_rows`` at M <= 16 (grid
``ceil(N/16)``) where ``mma`` runs the tiles; ``dynamic`` launches both kernels at every
shape, each on its grid where M is its case and on one workgroup (which returns) otherwise. At the
decode sizes the CUDA events time the host's launch rate, not the kernel: ``profile --decode``
under ``ncu --kernel-name regex:qmlir_gemm`` gives the kernels' GPU times. Prints a table;
``--json`` writes the rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FAMILY = "gemm_block_scaled"
FEW_FAMILY = "gemm_few_rows"  # the *_few_rows and *_many_rows kernels, a PTX of their own
THREADS, TILE = 256, 128
DEFAULT_VARIANTS = (
    "mma:compute_90",
    "mma_s4:compute_90:QMLIR_GEMM_STAGES=4",
    "mma_s6:compute_90:QMLIR_GEMM_STAGES=6",
    "mma_b128:compute_90:QMLIR_GEMM_STAGE_BYTES=128",
    "mma_b128_s4:compute_90:QMLIR_GEMM_STAGE_BYTES=128,QMLIR_GEMM_STAGES=4",
    "wgmma:compute_90a:QMLIR_GEMM_WGMMA",
    "wgmma_each:compute_90a:QMLIR_GEMM_WGMMA,QMLIR_WGMMA_PROMOTE_EACH",
    "wgmma_s6:compute_90a:QMLIR_GEMM_WGMMA,QMLIR_GEMM_STAGES=6",
    "few_rows:compute_90:+few_rows",
    "dynamic:compute_90:+dynamic",
)
CHECK_SHAPES = ((256, 384, 512), (200, 136, 320), (130, 260, 100), (384, 256, 1152))
# a decode step's few rows (M <= 16: the few-rows path; more: the tiles)
CHECK_SHAPES += ((1, 384, 512), (7, 200, 320), (16, 260, 100), (3, 136, 1152))
BENCH_SIZES = (4096, 8192)
FEW_ROWS, FEW_ROWS_COLS = 16, 16
# a 1.1B Llama's projections (N, K): q/o, gate/up, down; timed at 1 and 16 rows
DECODE_SHAPES = ((2048, 2048), (5632, 2048), (2048, 5632))


def build(out: Path, variants: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from runtime_kernels import nvrtc

    out.mkdir(parents=True, exist_ok=True)
    lib = nvrtc._load_nvrtc()
    source = (nvrtc.SOURCE_DIR / f"{FAMILY}.cu").read_bytes()
    few_source = (nvrtc.SOURCE_DIR / f"{FEW_FAMILY}.cu").read_bytes()
    manifest = {}
    for spec in variants:
        name, arch, *tokens = spec.split(":")
        defines = [d for d in ",".join(tokens).split(",") if d and not d.startswith("+")]
        options = (*nvrtc.NVRTC_OPTIONS, f"--gpu-architecture={arch}")
        options += tuple(f"-D{d}" for d in defines)
        ptx = nvrtc._nvrtc_compile(lib, FAMILY, source, nvrtc._headers(), options)
        (out / f"{name}.ptx").write_bytes(ptx)
        few_ptx = nvrtc._nvrtc_compile(lib, FEW_FAMILY, few_source, nvrtc._headers(), options)
        (out / f"{name}.{FEW_FAMILY}.ptx").write_bytes(few_ptx)
        values = dict(d.split("=") for d in defines if "=" in d)
        stages = int(values.get("QMLIR_GEMM_STAGES", 3))
        shared = stages * 2 * TILE * int(values.get("QMLIR_GEMM_STAGE_BYTES", 64))
        manifest[name] = {
            "arch": arch,
            "options": list(options),
            "shared": shared,
            "few_rows": "+few_rows" in ",".join(tokens).split(","),
            "dynamic": "+dynamic" in ",".join(tokens).split(","),
        }
        print(f"{name}: {arch} {' '.join(defines)} ({len(ptx)} bytes of PTX)")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return 0


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def pad4(n: int) -> int:
    return ceil_div(n, 4) * 4


class Operands:
    """Random E4M3 codes (no NaN) and scales of one GEMM, with the float64 reference."""

    def __init__(self, torch: Any, m: int, n: int, k: int, a_dims: int, b_dims: int, seed: int):
        gen = torch.Generator(device="cuda").manual_seed(seed)
        self.m, self.n, self.k, self.a_dims, self.b_dims = m, n, k, a_dims, b_dims
        self.a = self.codes(torch, gen, m, k)
        self.b = self.codes(torch, gen, n, k)
        self.a_sinv = self.scales(torch, gen, m, k, a_dims)
        self.b_sinv = self.scales(torch, gen, n, k, b_dims)
        self.one_a = torch.rand(1, device="cuda", generator=gen) + 0.5
        self.one_b = torch.rand(1, device="cuda", generator=gen) + 0.5

    @staticmethod
    def codes(torch: Any, gen: Any, rows: int, k: int) -> Any:
        codes = torch.randint(0, 256, (rows, k), device="cuda", generator=gen, dtype=torch.int32)
        codes[(codes & 0x7F) == 0x7F] = 0  # NaN codes
        return codes.to(torch.uint8)

    @staticmethod
    def scales(torch: Any, gen: Any, rows: int, k: int, dims: int) -> Any:
        kb = ceil_div(k, 128)
        shape = (kb, pad4(rows)) if dims == 1 else (ceil_div(rows, 128), pad4(kb))
        return torch.rand(shape, device="cuda", generator=gen) * 2 + 0.01

    def dequant(self, torch: Any, codes: Any, sinv: Any, rows: int, dims: int) -> Any:
        x = codes.view(torch.float8_e4m3fn).to(torch.float64)
        kb = torch.arange(self.k, device="cuda") // 128
        r = torch.arange(rows, device="cuda")
        if dims == 1:
            s = sinv[kb[None, :], r[:, None]]
        else:
            s = sinv[(r // 128)[:, None], kb[None, :]]
        return x * s.to(torch.float64)

    def reference(self, torch: Any, per_tensor: bool) -> Any:
        if per_tensor:
            a = self.a.view(torch.float8_e4m3fn).to(torch.float64)
            b = self.b.view(torch.float8_e4m3fn).to(torch.float64)
            return (a @ b.t()) * (self.one_a.double() * self.one_b.double())
        a = self.dequant(torch, self.a, self.a_sinv, self.m, self.a_dims)
        b = self.dequant(torch, self.b, self.b_sinv, self.n, self.b_dims)
        return a @ b.t()


class Kernels:
    def __init__(
        self, cupy: Any, ptx: Path, shared: int, few_rows: bool = False, dynamic: bool = False
    ):
        module = cupy.RawModule(path=str(ptx))
        few = cupy.RawModule(path=str(ptx.with_suffix(f".{FEW_FAMILY}.ptx")))
        self.cupy = cupy
        # dynamic: what a dynamic M launches, the few-rows kernel and then the many-rows one
        # (the tiles), each on its grid where m is its case and on one workgroup otherwise
        tiles = few if dynamic else module
        suffix = "_many_rows" if dynamic else ""
        self.per_tensor = tiles.get_function(f"qmlir_gemm_fp8_per_tensor{suffix}")
        self.block = tiles.get_function(f"qmlir_gemm_fp8_block{suffix}")
        self.dynamic = dynamic
        self.few_rows = None  # M <= 16: the decode kernels, grid N/16
        if few_rows or dynamic:
            self.few_rows = (
                few.get_function("qmlir_gemm_fp8_per_tensor_few_rows"),
                few.get_function("qmlir_gemm_fp8_block_few_rows"),
            )
        self.shared = shared if shared > 48 * 1024 else 0  # dynamic shared memory
        for fn in (self.per_tensor, self.block):
            if self.shared:
                fn.max_dynamic_shared_size_bytes = self.shared
        self.regs = {
            "per_tensor": self.per_tensor.num_regs,
            "blockwise": self.block.num_regs,
        }

    def launch(self, per_tensor: bool, ops: Operands, c: Any) -> None:
        import numpy as np

        cp = self.cupy
        few = ops.m <= FEW_ROWS
        narrow = (ceil_div(ops.n, FEW_ROWS_COLS), 1, 1)
        grid = (ceil_div(ops.n, TILE), ceil_div(ops.m, TILE), 1)
        dims = (np.int32(ops.m), np.int32(ops.n), np.int32(ops.k))
        if per_tensor:
            args = (cp.asarray(ops.a), cp.asarray(ops.one_a), cp.asarray(ops.b))
            args += (cp.asarray(ops.one_b), cp.asarray(c), *dims)
        else:
            args = (cp.asarray(ops.a), cp.asarray(ops.a_sinv), cp.asarray(ops.b))
            args += (cp.asarray(ops.b_sinv), cp.asarray(c), *dims)
            args += (np.int32(ops.a_dims), np.int32(ops.b_dims))
        tiled = self.per_tensor if per_tensor else self.block
        if self.few_rows is not None:
            narrow_fn = self.few_rows[0 if per_tensor else 1]
            if self.dynamic:
                narrow_fn(narrow if few else (1, 1, 1), (THREADS, 1, 1), args)
                tiled((1, 1, 1) if few else grid, (THREADS, 1, 1), args, shared_mem=self.shared)
                return
            if few:
                narrow_fn(narrow, (THREADS, 1, 1), args)
                return
        tiled(grid, (THREADS, 1, 1), args, shared_mem=self.shared)


def event_ms(torch: Any, fn: Any, repeat: int = 20, batch: int = 1) -> float:
    """Median milliseconds per call of ``fn`` over ``repeat`` runs of ``batch`` calls between
    CUDA events (a batch keeps the GPU busy while the host launches), after two untimed calls."""
    fn()
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    times.sort()
    return times[len(times) // 2]


def cublas_error(
    torch: Any, ops: Operands, per_tensor: bool, want: Any, label: str, rows: list[dict[str, Any]]
) -> None:
    """``torch._scaled_mm``'s relative L2 against the float64 reference on the same operands
    (per-tensor; 1x128 x 128x128 blockwise for a1 b2), f32 out where it allows."""
    a8 = ops.a.view(torch.float8_e4m3fn)
    b8 = ops.b.view(torch.float8_e4m3fn)
    if per_tensor:
        sa, sb = ops.one_a.reshape(()), ops.one_b.reshape(())
    elif ops.b_dims == 2:
        sa = ops.a_sinv[:, : ops.m].t()  # (M, K/128), outer-dim-major as cuBLAS wants
        sb = ops.b_sinv[:, : ops.k // 128].t()  # (K/128, N/128) view of (N/128, K/128)
    else:
        return
    for out_dtype in (torch.float32, torch.bfloat16):
        try:
            got = torch._scaled_mm(a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=out_dtype)
        except (RuntimeError, ValueError) as e:
            print(f"  cublas {label} {out_dtype}: {str(e).splitlines()[0][:100]}")
            continue
        err = float((got.double() - want).norm() / want.norm())
        name = f"cublas {str(out_dtype).split('.')[-1]} out"
        rows.append(
            {"check": label, "shape": [ops.m, ops.n, ops.k], "variant": name, "rel_l2": err}
        )
        print(f"check {label:12s} {ops.m}x{ops.n}x{ops.k:<5d} {name} rel L2 {err:.2e}", flush=True)
        return


def check(torch: Any, kernels: dict[str, Kernels], rows: list[dict[str, Any]]) -> bool:
    ok = True
    cases = [("per_tensor", True, 1, 1)] + [
        (f"block a{ad} b{bd}", False, ad, bd) for ad in (1, 2) for bd in (1, 2)
    ]
    for seed, (m, n, k) in enumerate(CHECK_SHAPES):
        for label, per_tensor, ad, bd in cases:
            ops = Operands(torch, m, n, k, ad, bd, seed)
            want = ops.reference(torch, per_tensor)
            if m % 128 == 0 and n % 128 == 0 and k % 128 == 0 and (ad, bd) in ((1, 1), (1, 2)):
                cublas_error(torch, ops, per_tensor, want, label, rows)
            for name, kern in kernels.items():
                c = torch.full((m, n), float("nan"), device="cuda")
                try:
                    kern.launch(per_tensor, ops, c)
                    torch.cuda.synchronize()
                    err = float((c.double() - want).norm() / want.norm())
                    nan = int(torch.isnan(c).sum())
                except Exception as e:  # noqa: BLE001 - a failing variant is a row
                    err, nan = float("nan"), -1
                    print(f"  {name} {label} {m}x{n}x{k}: {type(e).__name__}: {e}")
                good = nan == 0 and err <= 1e-5
                ok &= good
                rows.append(
                    {
                        "check": label,
                        "shape": [m, n, k],
                        "variant": name,
                        "rel_l2": err,
                        "unwritten": nan,
                        "ok": good,
                    }
                )
                mark = "ok" if good else "FAIL"
                print(
                    f"check {label:12s} {m}x{n}x{k:<5d} {name:8s} rel L2 {err:.2e} "
                    f"unwritten {nan} {mark}",
                    flush=True,
                )
    return ok


def bench(torch: Any, kernels: dict[str, Kernels], rows: list[dict[str, Any]]) -> None:
    for size in BENCH_SIZES:
        bench_size(torch, kernels, size, rows)
    bench_decode(torch, kernels, rows)


def bench_decode(torch: Any, kernels: dict[str, Kernels], rows: list[dict[str, Any]]) -> None:
    """A decode step's GEMMs (1 and 16 rows, a 1.1B Llama's projections): microseconds and the
    weights' bytes over that time, beside a device-to-device copy's read + write rate, torch's
    bf16 ``matmul`` and ``torch._scaled_mm`` (per tensor) on the same shapes."""
    x = torch.empty(1 << 28, device="cuda")
    y = torch.empty_like(x)
    copy_ms = event_ms(torch, lambda: y.copy_(x))
    copy = 2 * x.numel() * 4 / (copy_ms * 1e-3) / 1e9
    print(f"decode GEMMs: copy {copy:.0f} GB/s (read + written)")
    rows.append({"bench": "copy", "gbs": copy})
    for m in (1, 16):
        for n, k in DECODE_SHAPES:
            weights = n * k  # E4M3 bytes the step reads (bf16: twice)
            for per_tensor, label in ((True, "per_tensor"), (False, "block a1 b2")):
                ops = Operands(torch, m, n, k, 1, 2, 11)
                c = torch.empty((m, n), device="cuda")
                for name, kern in kernels.items():
                    ms = event_ms(
                        torch, lambda k_=kern, o=ops, p=per_tensor, c=c: k_.launch(p, o, c)
                    )
                    gbs = weights / (ms * 1e-3) / 1e9
                    rows.append(
                        {
                            "bench": f"decode {label}",
                            "shape": [m, n, k],
                            "variant": name,
                            "us": ms * 1e3,
                            "weight_gbs": gbs,
                        }
                    )
                    print(
                        f"decode {m}x{n}x{k} {label:12s} {name:8s} {ms * 1e3:8.1f} us "
                        f"{gbs:7.0f} GB/s of weights ({gbs / copy * 2:.0%} of the copy's read)"
                    )
            _decode_baselines(torch, m, n, k, rows)


def _decode_baselines(torch: Any, m: int, n: int, k: int, rows: list[dict[str, Any]]) -> None:
    """torch's bf16 ``matmul`` and ``torch._scaled_mm`` (per tensor, f32 out) at one decode
    shape."""
    a16 = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b16 = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, b8 = a16.to(torch.float8_e4m3fn), b16.to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device="cuda")
    baselines = {
        "torch.matmul bf16": lambda: torch.matmul(a16, b16.t()),
        "torch._scaled_mm fp8": lambda: torch._scaled_mm(
            a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.float32
        ),
    }
    for label, fn in baselines.items():
        try:
            ms = event_ms(torch, fn)
        except (RuntimeError, ValueError) as e:
            print(f"decode {m}x{n}x{k} {label}: {str(e).splitlines()[0][:80]}")
            continue
        print(f"decode {m}x{n}x{k} {label:22s} {ms * 1e3:8.1f} us")
        rows.append({"bench": f"decode {label}", "shape": [m, n, k], "us": ms * 1e3})


def bench_size(
    torch: Any, kernels: dict[str, Kernels], size: int, rows: list[dict[str, Any]]
) -> None:
    flops = 2 * size**3
    for per_tensor, label in ((True, "per_tensor"), (False, "block a1 b2")):
        ops = Operands(torch, size, size, size, 1, 2, 7)
        c = torch.empty((size, size), device="cuda")
        for name, kern in kernels.items():
            ms = event_ms(torch, lambda k=kern, o=ops, p=per_tensor, c=c: k.launch(p, o, c))
            tf = flops / (ms * 1e-3) / 1e12
            rows.append(
                {"bench": f"qmlir {label}", "size": size, "variant": name, "ms": ms, "tflops": tf}
            )
            print(f"bench {size}^3 qmlir {label:12s} {name:8s} {ms:8.3f} ms {tf:7.1f} TFLOP/s")
    a = torch.randn(size, size, device="cuda")
    b = torch.randn(size, size, device="cuda")
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
    one = torch.tensor(1.0, device="cuda")
    sa = torch.rand(size // 128, size, device="cuda").t()
    sb = torch.rand(size // 128, size // 128, device="cuda").t()
    baselines = {
        "torch._scaled_mm per-tensor f32 out": lambda: torch._scaled_mm(
            a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.float32
        ),
        "torch._scaled_mm 1x128/128x128 bf16 out": lambda: torch._scaled_mm(
            a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16
        ),
        "torch.matmul bf16": lambda: torch.matmul(a16, b16.t()),
    }
    for label, fn in baselines.items():
        try:
            ms = event_ms(torch, fn)
        except (RuntimeError, ValueError) as e:
            print(f"bench {size}^3 {label}: {str(e).splitlines()[0][:100]}")
            continue
        tf = flops / (ms * 1e-3) / 1e12
        rows.append({"bench": label, "size": size, "ms": ms, "tflops": tf})
        print(f"bench {size}^3 {label:40s} {ms:8.3f} ms {tf:7.1f} TFLOP/s")


def profile(folder: Path, variants: list[str], size: int, decode: bool) -> int:
    """Two launches (a warm-up and one to read) of each GEMM of ``variants`` at ``size``^3, or
    with ``decode`` at the decode shapes (1 and 16 rows): run under ``ncu --kernel-name
    regex:qmlir_gemm`` for the kernels' GPU times (CUDA events around a launch measure the
    host's launch rate at these sizes, not the kernel)."""
    import cupy
    import torch

    manifest = json.loads((folder / "manifest.json").read_text())
    shapes = [(m, n, k) for m in (1, FEW_ROWS) for n, k in DECODE_SHAPES] if decode else []
    for name in variants:
        entry = manifest[name]
        kern = Kernels(
            cupy,
            folder / f"{name}.ptx",
            entry["shared"],
            entry.get("few_rows", False),
            entry.get("dynamic", False),
        )
        for m, n, k in shapes or [(size, size, size)]:
            for per_tensor in (True, False):
                ops = Operands(torch, m, n, k, 1, 2, 7)
                c = torch.empty((m, n), device="cuda")
                kern.launch(per_tensor, ops, c)
                kern.launch(per_tensor, ops, c)
                torch.cuda.synchronize()
                kind = "per_tensor" if per_tensor else "blockwise"
                print(f"profiled {name} {kind} {m}x{n}x{k}", flush=True)
    return 0


def run(folder: Path, json_out: Path | None) -> int:
    import cupy
    import torch

    if not torch.cuda.is_available():
        print("gemm-variants: no cuda device")
        return 1
    name = torch.cuda.get_device_name()
    print(f"device: {name}, torch {torch.__version__}, cupy {cupy.__version__}")
    manifest = json.loads((folder / "manifest.json").read_text())
    kernels = {}
    for name in manifest:
        try:
            entry = manifest[name]
            kernels[name] = Kernels(
                cupy,
                folder / f"{name}.ptx",
                entry["shared"],
                entry.get("few_rows", False),
                entry.get("dynamic", False),
            )
            print(f"{name}: registers {kernels[name].regs}")
        except Exception as e:  # noqa: BLE001 - report and go on with the others
            print(f"{name}: does not load: {type(e).__name__}: {e}")
    rows: list[dict[str, Any]] = []
    ok = check(torch, kernels, rows)
    bench(torch, kernels, rows)
    if json_out is not None:
        json_out.write_text(json.dumps(rows, indent=1))
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("build", "run", "profile"))
    parser.add_argument("--dir", type=Path, default=Path("build/gemm-variants"))
    parser.add_argument("--variant", action="append", help="NAME:ARCH[:DEFINE,...] (build)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--size", type=int, default=8192, help="profile: M = N = K")
    parser.add_argument("--decode", action="store_true", help="profile: the decode shapes")
    args = parser.parse_args()
    if args.mode == "build":
        return build(args.dir, args.variant or list(DEFAULT_VARIANTS))
    if args.mode == "profile":
        return profile(args.dir, args.variant or ["mma"], args.size, args.decode)
    return run(args.dir, args.json)


if __name__ == "__main__":
    sys.exit(main())
