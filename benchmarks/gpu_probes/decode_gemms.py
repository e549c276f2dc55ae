"""A decode step's FP8 GEMMs inside an artifact: a static M's launches against a dynamic M's,
at a 1.1B Llama's projection shapes.

A generator's step has a dynamic M, so its GEMMs launch what a dynamic M launches (the few-rows
kernel, then the many-rows one on one workgroup at M <= 16); a static M launches the few-rows
kernel alone. This probe sets the two side by side: the same three projections (x [M, 2048] ->
2048 -> 5632 -> 2048, bias-free) compiled with M static at 1 and with M dynamic (1..256), the
weights in a parameter file (its header kept here, the values written again on the GPU machine,
as ``llm_decode.py`` does); ``run`` times a call at M = 1 and compares the two outputs,
``profile`` runs calls for Nsight Compute.

    python benchmarks/gpu_probes/decode_gemms.py build --dir build/decode-gemms
    python benchmarks/gpu_probes/decode_gemms.py run --dir build/decode-gemms
    ncu --csv --kernel-name regex:qmlir_gemm --metrics gpu__time_duration.sum \
        python benchmarks/gpu_probes/decode_gemms.py profile --dir build/decode-gemms --artifact A

``build --target llvm-cpu`` builds the same artifacts for this host, to rehearse ``run``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu_probes"))
import llm_decode  # noqa: E402 (the parameter file written again from its header)

RECIPES = ("fp8-current", "fp8-block")
SHAPES = ((2048, 2048), (2048, 5632), (5632, 2048))  # (in, out) of each projection
CALLS = 50


def _model() -> Any:
    from torch import nn

    return nn.Sequential(*(nn.Linear(i, o, bias=False) for i, o in SHAPES)).eval()


def build(out: Path, target: str) -> int:
    sys.path.insert(0, str(ROOT))
    import torch

    import compiler

    out.mkdir(parents=True, exist_ok=True)
    extra = {"cuda_arch": "sm_90"} if target == "cuda" else {}
    batch = torch.export.Dim("batch", min=1, max=256)
    cases = [(f"static1-{r}", r, None) for r in RECIPES]
    cases += [(f"dynamic-{r}", r, ({0: batch},)) for r in RECIPES]
    names = []
    for name, recipe, dims in cases:
        art = compiler.compile(
            _model(),
            (torch.randn(1 if dims is None else 4, SHAPES[0][0]),),
            recipe,
            target=target,
            dynamic_shapes=dims,
            weights="external",
            **extra,
        )
        art.save(out / f"{name}.vmfb")
        params = out / f"{name}.params.safetensors"
        (out / f"{name}.params.header").write_bytes(llm_decode._header(params))
        params.unlink()
        names.append(name)
        print(f"built {name}", flush=True)
    (out / "manifest.json").write_text(json.dumps({"artifacts": names, "target": target}))
    return 0


def _load(folder: Path, name: str, device: str) -> Any:
    sys.path.insert(0, str(ROOT))
    from compiler.runtime import load, module

    module.verify_parameters = llm_decode._same_size
    params = folder / f"{name}.params.safetensors"
    header = (folder / f"{name}.params.header").read_bytes()
    llm_decode._write_params(header, params, np.random.default_rng(0))
    return load(folder / f"{name}.vmfb", device=device)


def run(folder: Path) -> int:
    manifest = json.loads((folder / "manifest.json").read_text())
    device = "cuda" if manifest["target"] == "cuda" else "local-task"
    x = np.random.default_rng(1).standard_normal((1, SHAPES[0][0])).astype(np.float32)
    outputs: dict[str, np.ndarray] = {}
    for name in manifest["artifacts"]:
        try:
            art = _load(folder, name, device)
            (y,) = [np.asarray(v) for v in [art(x)]]
            times = []
            for _ in range(CALLS):
                t0 = time.perf_counter()
                art(x)
                times.append(time.perf_counter() - t0)
        except Exception as e:  # noqa: BLE001 (a probe: report and go on)
            print(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:160]}")
            continue
        outputs[name] = y
        finite = bool(np.isfinite(y).all())
        print(
            f"{name}: M=1 call {np.median(times) * 1e3:.3f} ms (median of {CALLS}), "
            f"|y| {float(np.abs(y).mean()):.4g}, finite {finite}",
            flush=True,
        )
    for recipe in RECIPES:
        a, b = outputs.get(f"static1-{recipe}"), outputs.get(f"dynamic-{recipe}")
        if a is not None and b is not None:
            rel = float(np.linalg.norm(a - b) / max(np.linalg.norm(a), 1e-30))
            print(f"{recipe}: static vs dynamic relative L2 {rel:.2e}")
    return 0


def profile(folder: Path, name: str, calls: int) -> int:
    manifest = json.loads((folder / "manifest.json").read_text())
    device = "cuda" if manifest["target"] == "cuda" else "local-task"
    art = _load(folder, name, device)
    x = np.random.default_rng(1).standard_normal((1, SHAPES[0][0])).astype(np.float32)
    for _ in range(calls):
        art(x)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("build", "run", "profile"))
    parser.add_argument("--dir", type=Path, default=Path("build/decode-gemms"))
    parser.add_argument("--target", default="cuda", choices=("cuda", "llvm-cpu"))
    parser.add_argument("--artifact", default="dynamic-fp8-current", help="profile: which one")
    parser.add_argument("--calls", type=int, default=3, help="profile: calls")
    args = parser.parse_args()
    if args.mode == "build":
        return build(args.dir, args.target)
    if args.mode == "profile":
        return profile(args.dir, args.artifact, args.calls)
    return run(args.dir)


if __name__ == "__main__":
    sys.exit(main())
