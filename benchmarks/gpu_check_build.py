"""``make gpu-build``: everything the GPU check runs, built on a CPU-only machine.

Writes to ``build/gpu-check/`` (or ``--out``): per recipe, the activation quantize core as its own
module (``quantize-<recipe>-<shape>.vmfb``: the fused cuda kernels vs the llvm-cpu lowering) at a
checking shape and at a benchmark shape, one ``Linear`` per recipe for the GEMM benchmark, the
MLP sample per recipe; the inputs (``inputs.npz``) and what llvm-cpu computes from them
(``expected.npz``), and ``manifest.json`` for ``benchmarks/gpu_check_run.py``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from iree import runtime as iree_runtime
from iree.compiler import ir
from iree.compiler.dialects import func

import compiler
from compiler.backend import compile_module
from passes.fuse_quantize_core import FuseQuantizeCore
from passes.ir_types import builtin_tensor_type
from passes.lower_named_ops import LowerNamedOps
from passes.named_ops import NamedOpBuilder
from passes.recipes import get_recipe
from samples import mlp

QUANTIZE_RECIPES = ("fp8-current", "fp8-block", "mxfp8", "nvfp4")
MODEL_RECIPES = ("none", "fp8-current", "fp8-delayed", "fp8-block", "mxfp8", "nvfp4")
CHECK_SHAPE = (1024, 2048)
BENCH_SHAPE = (8192, 8192)
GEMM_SHAPE = (4096, 4096, 4096)  # M, N, K


def quantize_vmfb(recipe_name: str, shape: tuple[int, int], target: str, arch: str) -> bytes:
    """``@main(x) -> (data, GEMM-ready scales)``: what the recipe emits for an activation."""
    recipe = get_recipe(recipe_name)
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        x_type = builtin_tensor_type(shape, "f32")
        with ir.InsertionPoint(module.body):
            entry = func.FuncOp("main", ir.FunctionType.get([x_type], []))
        block = entry.add_entry_block()
        ops = NamedOpBuilder(module)
        with ir.InsertionPoint(block):
            q = recipe.emit_quantize(ops, block.arguments[0])  # type: ignore[attr-defined]
            two_d = recipe.two_dimensional
            scale = recipe.emit_swizzle(ops, q) if two_d else q.scale_inv  # type: ignore[attr-defined]
            func.ReturnOp([q.data, scale])
        entry.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([x_type], [q.data.type, scale.type])
        )
        if target == "cuda":
            FuseQuantizeCore().apply(module)
        LowerNamedOps(target, arch).apply(module)
        return compile_module(module, target, arch if target == "cuda" else None)


def run_cpu(vmfb: bytes, *inputs: np.ndarray) -> list[np.ndarray]:
    ctx = iree_runtime.SystemContext(config=iree_runtime.Config("local-task"))
    module = iree_runtime.VmModule.copy_buffer(ctx.instance, vmfb)
    ctx.add_vm_module(module)
    results = ctx.modules[module.name]["main"](*inputs)
    results = results if isinstance(results, (tuple, list)) else (results,)
    return [np.array(r.to_host(), copy=True) for r in results]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="build/gpu-check", help="output directory")
    parser.add_argument("--cuda-arch", default="sm_90", help="sm_89, sm_90 or sm_100")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    arch = args.cuda_arch
    rng = np.random.default_rng(0)
    inputs: dict[str, np.ndarray] = {}
    expected: dict[str, np.ndarray] = {}
    entries: list[dict[str, Any]] = []

    def note(kind: str, name: str, **extra: Any) -> None:
        entries.append({"kind": kind, "name": name, "vmfb": f"{name}.vmfb", **extra})
        print(f"built {name}", flush=True)

    x = rng.standard_normal(CHECK_SHAPE, dtype=np.float32)
    inputs["quantize_x"] = x
    for recipe in QUANTIZE_RECIPES:
        name = f"quantize-{recipe}"
        (out / f"{name}.vmfb").write_bytes(quantize_vmfb(recipe, CHECK_SHAPE, "cuda", arch))
        cpu = run_cpu(quantize_vmfb(recipe, CHECK_SHAPE, "llvm-cpu", arch), x)
        for i, value in enumerate(cpu):
            expected[f"{name}/{i}"] = value.view(np.uint8) if value.dtype != np.float32 else value
        note("quantize", name, input="quantize_x", outputs=len(cpu))
        bench = f"bench-quantize-{recipe}"
        (out / f"{bench}.vmfb").write_bytes(quantize_vmfb(recipe, BENCH_SHAPE, "cuda", arch))
        note("bench_quantize", bench, shape=list(BENCH_SHAPE))

    m, n, k = GEMM_SHAPE
    torch.manual_seed(0)
    linear = torch.nn.Linear(k, n, bias=False).eval()
    a = torch.randn(m, k)
    for recipe in ("fp8-current", "fp8-block", "mxfp8", "nvfp4"):
        name = f"gemm-{recipe}"
        art = compiler.compile(linear, (a,), recipe, target="cuda", cuda_arch=arch)
        (out / f"{name}.vmfb").write_bytes(art.vmfb)
        note("bench_gemm", name, shape=[m, n, k])

    model, (mx,) = mlp.build()
    inputs["mlp_x"] = mx.numpy()
    for recipe in MODEL_RECIPES:
        name = f"mlp-{recipe}"
        start = time.perf_counter()
        gpu = compiler.compile(model, (mx,), recipe, target="cuda", cuda_arch=arch)
        (out / f"{name}.vmfb").write_bytes(gpu.vmfb)
        cpu = compiler.compile(model, (mx,), recipe)
        expected[f"{name}/0"] = cpu.run_numpy(mx.numpy())[0]
        note("model", name, input="mlp_x", seconds=round(time.perf_counter() - start, 1))

    np.savez(out / "inputs.npz", **inputs)
    np.savez(out / "expected.npz", **expected)
    manifest = {"cuda_arch": arch, "entries": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {len(entries)} artifacts, inputs and llvm-cpu outputs to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
