"""The quantize kernels of ``runtime_kernels/src`` as variants, checked against each other and timed
on a GPU without IREE: a tuning round's probe for the kernels below 80% of the copy bandwidth
(fp8-current, nvfp4; fp8-block and mxfp8 rowwise+columnwise). The full check with artifacts, against
llvm-cpu's bytes, is ``gpu_check_run.py``.

Here (no GPU): ``python benchmarks/gpu_probes/quantize_variants.py build --dir
build/quantize-variants`` compiles the families ``per_tensor`` (for the global amax), ``nvfp4``,
``block_fp8`` and ``mxfp8`` once per variant, ``NAME:REV[:DEFINE,...]``: ``REV`` is ``work`` (the
working tree) or a git revision whose sources and headers are compiled (``head:HEAD`` measures
the committed kernels beside the working tree's).

On the GPU machine (torch and cupy, both in its image):
``python benchmarks/gpu_probes/quantize_variants.py run --dir build/quantize-variants`` loads each
variant's PTX with cupy, quantizes the same 8192x8192 f32 input (standard normal rows scaled by
2^-20..2^20, so block scales differ; a few NaN, +-0 and subnormals) with each, checks that every
output's bytes equal the first variant's (outputs poisoned with 0xAB first, so an unwritten byte
fails), and times each kernel with CUDA events (median of 7 batches of 10 calls) beside a bf16
and an f32 8192x8192 device-to-device copy in the same run. GB/s counts the f32 input once plus
the codes and scales written, as ``benchmarks/RESULTS.md`` does; fp8-current's and nvfp4's
times include their global-amax pass.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm_variants import event_ms  # noqa: E402

FAMILIES = ("per_tensor", "nvfp4", "block_fp8", "mxfp8")
DEFAULT_VARIANTS = (
    "head:HEAD",
    "work:work",
    "b1d_mb3:work:QMLIR_BLOCK1D_MIN_BLOCKS=3",
    "b1d_g8_mb3:work:QMLIR_BLOCK1D_GROUP=8,QMLIR_BLOCK1D_MIN_BLOCKS=3",
    "mx_mb5:work:QMLIR_MXFP8_MIN_BLOCKS=5",
    "work_again:work",
)
SIZE = 8192
THREADS = 256


def _sources(root: Path, rev: str) -> tuple[dict[str, bytes], list[tuple[str, bytes]]]:
    """Each family's source and the headers, from the working tree or from git revision ``rev``."""

    def read(rel: str) -> bytes:
        if rev == "work":
            return (root / rel).read_bytes()
        return subprocess.run(
            ["git", "show", f"{rev}:{rel}"], cwd=root, check=True, capture_output=True
        ).stdout

    include = root / "runtime_kernels" / "include"
    headers = [(h.name, read(f"runtime_kernels/include/{h.name}")) for h in include.glob("*.cuh")]
    sources = {f: read(f"runtime_kernels/src/{f}.cu") for f in FAMILIES}
    return sources, headers


def build(out: Path, variants: list[str]) -> int:
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root))
    from runtime_kernels import nvrtc

    out.mkdir(parents=True, exist_ok=True)
    lib = nvrtc._load_nvrtc()
    manifest = {}
    for spec in variants:
        name, rev, *defines = spec.split(":")
        sources, headers = _sources(root, rev)
        options = (*nvrtc.NVRTC_OPTIONS, "--gpu-architecture=compute_90")
        options += tuple(f"-D{d}" for d in ",".join(defines).split(",") if d)
        for family, source in sources.items():
            ptx = nvrtc._nvrtc_compile(lib, family, source, headers, options)
            (out / f"{name}.{family}.ptx").write_bytes(ptx)
        manifest[name] = {"rev": rev, "defines": defines}
        print(f"{name}: {rev} {' '.join(defines)}")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return 0


def batch_ms(torch: Any, fn: Any) -> float:
    """Median milliseconds per call over 7 batches of 10 calls (``gemm_variants.event_ms``)."""
    return event_ms(torch, fn, repeat=7, batch=10)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def pad4(n: int) -> int:
    return ceil_div(n, 4) * 4


def pad128(n: int) -> int:
    return ceil_div(n, 128) * 128


def make_input(torch: Any, size: int) -> Any:
    gen = torch.Generator(device="cuda").manual_seed(20261126)
    x = torch.randn((size, size), device="cuda", generator=gen)
    x *= torch.exp2(torch.randint(-20, 21, (size, 1), device="cuda", generator=gen).float())
    x[0, :7] = torch.tensor([float("nan"), 0.0, -0.0, 1e-40, -1e-45, 3e38, -3e38], device="cuda")
    x[5, 100] = float("nan")
    return x


class Variant:
    """One variant's kernels and the outputs it writes (each a uint8 or float32 tensor)."""

    def __init__(self, cupy: Any, torch: Any, folder: Path, name: str, x: Any):
        self.torch, self.size = torch, x.shape[0]
        self.x = cupy.asarray(x)
        mod = {f: cupy.RawModule(path=str(folder / f"{name}.{f}.ptx")) for f in FAMILIES}
        self.amax = mod["per_tensor"].get_function("qmlir_amax_f32")
        self.scale = mod["per_tensor"].get_function("qmlir_fp8_scale_from_amax")
        self.cast = mod["per_tensor"].get_function("qmlir_quantize_fp8_e4m3")
        self.nvfp4 = mod["nvfp4"].get_function("qmlir_nvfp4_quantize")
        self.block1d = mod["block_fp8"].get_function("qmlir_quantize_fp8_block1d")
        self.mxfp8 = mod["mxfp8"].get_function("qmlir_quantize_mxfp8")
        self.regs = {
            "nvfp4": self.nvfp4.num_regs,
            "block1d": self.block1d.num_regs,
            "mxfp8": self.mxfp8.num_regs,
        }
        n, u8, f32 = self.size, torch.uint8, torch.float32
        self.out: dict[str, dict[str, Any]] = {
            "fp8-current": {
                "global_amax": torch.zeros(1, device="cuda", dtype=f32),
                "scale": torch.empty(1, device="cuda", dtype=f32),
                "data": torch.empty((n, n), device="cuda", dtype=u8),
                "scale_inv": torch.empty(1, device="cuda", dtype=f32),
            },
            "nvfp4": {
                "global_amax": torch.zeros(1, device="cuda", dtype=f32),
                "data": torch.empty((n, n // 2), device="cuda", dtype=u8),
                "scales": torch.empty(pad128(n) * pad4(n // 16), device="cuda", dtype=u8),
            },
            "fp8-block rowcol": {
                "data_row": torch.empty((n, n), device="cuda", dtype=u8),
                "sinv_row": torch.empty((n // 128, pad4(n)), device="cuda", dtype=f32),
                "data_col": torch.empty((n, n), device="cuda", dtype=u8),
                "sinv_col": torch.empty((n // 128, pad4(n)), device="cuda", dtype=f32),
            },
            "mxfp8 rowcol": {
                "data_row": torch.empty((n, n), device="cuda", dtype=u8),
                "scale_row": torch.empty(pad128(n) * pad4(n // 32), device="cuda", dtype=u8),
                "data_col": torch.empty((n, n), device="cuda", dtype=u8),
                "scale_col": torch.empty(pad128(n) * pad4(n // 32), device="cuda", dtype=u8),
            },
        }
        self.args = {r: {k: cupy.asarray(t) for k, t in o.items()} for r, o in self.out.items()}

    def poison(self) -> None:
        for outs in self.out.values():
            for t in outs.values():
                t.view(self.torch.uint8).fill_(0xAB)

    def launch(self, recipe: str) -> None:
        import numpy as np

        n, o, xs = np.int32(self.size), self.args[recipe], self.x
        total = np.int32(self.size * self.size)
        flat = (min(ceil_div(int(total), 1024), 1024),)
        if recipe in ("fp8-current", "nvfp4"):
            o["global_amax"].fill(0)
            self.amax(flat, (THREADS,), (xs, o["global_amax"], total))
        if recipe == "fp8-current":
            eps = np.int32(0)
            self.scale((1,), (1,), (o["global_amax"], o["scale"], np.int32(0), np.int32(0), eps))
            self.cast(flat, (THREADS,), (xs, o["scale"], o["data"], o["scale_inv"], total))
        elif recipe == "nvfp4":
            grid = (ceil_div(self.size, 128), ceil_div(self.size, 32))
            self.nvfp4(grid, (THREADS,), (xs, o["global_amax"], o["data"], o["scales"], n, n))
        elif recipe == "fp8-block rowcol":
            grid = (ceil_div(self.size, 128), ceil_div(self.size, 128))
            args = (xs, o["data_row"], o["sinv_row"], o["data_col"], o["sinv_col"], n, n)
            self.block1d(grid, (THREADS,), (*args, np.int32(1), np.int32(0)))
        else:
            grid = (ceil_div(self.size, 128), ceil_div(self.size, 32))
            args = (xs, o["data_row"], o["scale_row"], o["data_col"], o["scale_col"], n, n)
            self.mxfp8(grid, (THREADS,), (*args, np.int32(0)))

    def bytes_moved(self, recipe: str) -> int:
        written = sum(t.numel() * t.element_size() for t in self.out[recipe].values())
        return self.size * self.size * 4 + written


def run(folder: Path, json_out: Path | None, size: int) -> int:
    import cupy
    import torch

    if not torch.cuda.is_available():
        print("quantize-variants: no cuda device")
        return 1
    device = torch.cuda.get_device_name()
    print(f"device: {device}, torch {torch.__version__}, cupy {cupy.__version__}")
    manifest = json.loads((folder / "manifest.json").read_text())
    x = make_input(torch, size)
    rows: list[dict[str, Any]] = []
    copies = {}
    for dtype in (torch.bfloat16, torch.float32):
        src = x.to(dtype)
        dst = torch.empty_like(src)
        ms = batch_ms(torch, lambda s=src, d=dst: d.copy_(s))
        copies[str(dtype)] = 2 * src.numel() * src.element_size() / (ms * 1e-3) / 1e9
        print(f"copy {dtype}: {ms * 1e3:8.1f} us {copies[str(dtype)]:7.0f} GB/s")
    copy = copies[str(torch.bfloat16)]
    ok = True
    first: dict[str, dict[str, Any]] = {}
    for name in manifest:
        try:
            v = Variant(cupy, torch, folder, name, x)
        except Exception as e:  # noqa: BLE001 - report and go on with the others
            print(f"{name}: does not load: {type(e).__name__}: {e}")
            ok = False
            continue
        print(f"{name}: registers {v.regs}")
        for recipe in v.out:
            v.poison()
            v.launch(recipe)
            torch.cuda.synchronize()
            outs = {k: t.clone() for k, t in v.out[recipe].items()}
            same = "reference"
            if recipe in first:
                same = all(torch.equal(first[recipe][k], outs[k]) for k in outs)
                ok &= same
            else:
                first[recipe] = outs
            ms = batch_ms(torch, lambda r=recipe, v=v: v.launch(r))
            gbs = v.bytes_moved(recipe) / (ms * 1e-3) / 1e9
            rows.append(
                {
                    "variant": name,
                    "recipe": recipe,
                    "us": ms * 1e3,
                    "gb_s": gbs,
                    "of_copy": gbs / copy,
                    "same_bytes": same,
                    "registers": v.regs,
                }
            )
            print(
                f"{name:12s} {recipe:18s} {ms * 1e3:8.1f} us {gbs:7.0f} GB/s "
                f"{100 * gbs / copy:5.1f}% of copy  same bytes as first: {same}",
                flush=True,
            )
        del v
    if json_out is not None:
        json_out.write_text(json.dumps({"copy_gb_s": copies, "rows": rows}, indent=1))
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("build", "run"))
    parser.add_argument("--dir", type=Path, default=Path("build/quantize-variants"))
    parser.add_argument("--variant", action="append", help="NAME:REV[:DEFINE,...] (build)")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--size", type=int, default=SIZE, help="run: rows = cols (a multiple of 128)"
    )
    args = parser.parse_args()
    if args.mode == "build":
        return build(args.dir, args.variant or list(DEFAULT_VARIANTS))
    return run(args.dir, args.json, args.size)


if __name__ == "__main__":
    sys.exit(main())
