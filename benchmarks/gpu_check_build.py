"""``make gpu-build``: everything the GPU check runs, built on a CPU-only machine.

Writes to ``build/gpu-check/`` (or ``--out``; modules xz-compressed as ``<name>.vmfb.xz``: a
cuda module embeds its kernel family's PTX once per dispatch, and xz's window, unlike gzip's,
spans those copies), small enough
to carry to a lent GPU machine with the working tree and the iree-base-runtime wheel (at most
``LIMIT_MB``; the build fails above):

- ``quantize-<recipe>``: the activation quantize core as its own module (the fused cuda kernels)
  at ``CHECK_SHAPE``, its input generated from a seed on both machines (checked by sha256) and
  the llvm-cpu outputs stored; fp8-delayed is called twice, so its second call's scale checks
  the fused kernel's amax; ``quantize-<recipe>-rowcol`` (fp8-block, mxfp8) adds the columnwise
  outputs (a ``[K, N]`` GEMM operand), one combined kernel on cuda. ``bench-quantize-*``: the
  same at ``BENCH_SHAPE`` (the input is generated on the GPU machine).
- ``gemm-<recipe>-<M>x<N>x<K>``: the recipe's GEMM alone, its quantized operands (codes and
  GEMM-ready scales) as arguments: random operands at ``GEMM_CHECK`` and ``GEMM_FEW_ROWS_CHECK``
  (M of 7: the few-rows kernels; stored, with the llvm-cpu result) and at the ``GEMM_BENCH``
  shapes (generated on the GPU machine from a seed).
- ``block-<recipe>``: ``samples/transformer_block.py`` per recipe (batch ``SAMPLE_BATCH``), its
  input and the llvm-cpu output stored; ``block-none-bf16`` the bf16 block without quantization
  (timed only: IREE's bf16 path, the baseline of the recipes' latency).

``inputs.npz`` and ``expected.npz`` (compressed) and ``manifest.json`` are what
``benchmarks/gpu_check_run.py`` reads; it also generates the seeded inputs.

``--target llvm-cpu`` builds the same artifacts for llvm-cpu instead (the expected outputs are
computed the same way), with the benchmark shapes shrunk to ``SMALL_BENCH_SHAPE`` and
``SMALL_GEMM_BENCH``: a dry run of the whole flow on this machine, ``gpu_check_run.py --device
local-task``. ``--recipes a,b`` builds only those recipes' artifacts (``none`` is the
transformer block without quantization).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from iree import runtime as iree_runtime
from iree.compiler import ir
from iree.compiler.dialects import func

import compiler
from benchmarks.gpu_check_run import check_input, random_operand
from compiler.backend.iree_compile import compile_module
from passes.base.target import Target
from passes.fuse_quantize_core import FuseQuantizeCore
from passes.host.call import call, host_copies
from passes.ir.dialect import NamedOp, ScaledMatmul, ScaleFormat
from passes.ir.named_ops import NamedOpBuilder, callee_name, is_named_op_decl
from passes.ir.types import TensorInfo, builtin_tensor_type, tensor_info
from passes.lower_named_ops import LowerNamedOps
from passes.recipes import Role, ScalingRecipe, Usage, get_recipe
from samples import transformer_block

QUANTIZE_RECIPES = ("fp8-current", "fp8-delayed", "fp8-block", "fp8-rowwise", "mxfp8", "nvfp4")
COLUMNWISE_RECIPES = ("fp8-block", "mxfp8")  # also -rowcol: rowwise + columnwise of one x
GEMM_RECIPES = ("fp8-current", "fp8-block", "fp8-rowwise", "mxfp8", "nvfp4")
MODEL_RECIPES = (
    "none",
    "fp8-current",
    "fp8-delayed",
    "fp8-block",
    "fp8-rowwise",
    "mxfp8",
    "nvfp4",
)
CHECK_SHAPE = (512, 2048)
# More checked shapes where a kernel takes other paths by shape: fp8-rowwise holds a row of up to
# 1024, 2048, 4096 or 8192 columns in registers (float4 loads where cols % 4 == 0, else single
# floats) and reads a longer one twice.
EXTRA_CHECK_SHAPES = {"fp8-rowwise": ((19, 1001), (24, 4096), (16, 8192), (37, 10000))}
ADVERSARIAL = ("adversarial", "adversarial-inf")  # check_input kinds beside the normal one
BENCH_SHAPE = (8192, 8192)
GEMM_CHECK = (256, 384, 512)  # M, N, K
# A decode step's M (the *_few_rows kernels), at GEMM_CHECK's N and K: IREE's llvm-cpu build of
# the NVFP4 GEMM alone fails at other N and K tried (N 256, 272, 300; K 1024, 1152 at M 7: an i4
# vector.maskedload it cannot legalize).
GEMM_FEW_ROWS_CHECK = (7, 384, 512)
GEMM_BENCH = ((4096, 4096, 4096), (8192, 8192, 8192))
# The benchmark shapes of a dry run on llvm-cpu (--target llvm-cpu): the same code paths, fast.
SMALL_BENCH_SHAPE = (1024, 1024)
SMALL_GEMM_BENCH = ((256, 256, 256), (512, 512, 512))
TARGETS = ("cuda", "llvm-cpu")
PARTS = ("quantize", "gemm", "model")  # --parts: which kinds of artifact to build
ALL_RECIPES = tuple(dict.fromkeys(QUANTIZE_RECIPES + GEMM_RECIPES + MODEL_RECIPES))
BENCH_BATCH_RECIPES = ("none", "fp8-current", "fp8-block", "mxfp8", "nvfp4")  # --bench-batch
BENCH_DTYPES = {"f32": (False,), "bf16": (True,), "both": (False, True)}  # --bench-dtype
SAMPLE_BATCH = transformer_block.BATCH  # the sample's own batch: its latency is reported
SEED = 0
# The device tool carries at most 64 MiB (67.1 MB): the working tree (~4 MB), this directory
# and the runtime unpacked without its tools (benchmarks/gpu_runtime.py: ~3.6 MB).
LIMIT_MB = 56.0
# What this script writes (a stale file of an older layout is removed first).
OWNED = ("*.vmfb", "*.vmfb.gz", "*.vmfb.xz", "*.npz", "manifest.json")


def quantize_vmfb(
    recipe_name: str, shape: tuple[int, int], target: str, arch: str, both: bool = False
) -> tuple[bytes, int]:
    """``@main(x) -> (data, GEMM-ready scales)``: what the recipe emits for an activation; with
    ``both`` (block recipes) also the columnwise ``(data, scales)`` of a ``[K, N]`` operand (on
    cuda one combined kernel). And the bytes the outputs take."""
    recipe = _scaling_recipe(recipe_name)
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        x_type = builtin_tensor_type(shape, "f32")
        with ir.InsertionPoint(module.body):
            entry = func.FuncOp("main", ir.FunctionType.get([x_type], []))
        block = entry.add_entry_block()
        ops = NamedOpBuilder(module)
        with ir.InsertionPoint(block):
            x = block.arguments[0]
            quantized = [recipe.emit_quantize(ops, x, Role.ACTIVATION)]
            if both:
                quantized.append(recipe.emit_quantize(ops, x, Role.ACTIVATION, Usage.COLUMNWISE))
            results = []
            for q in quantized:
                results += [q.data, recipe.emit_swizzle(ops, q)]
            func.ReturnOp(results)
        types = [r.type for r in results]
        entry.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([x_type], types))
        out_bytes = 0
        for ty in types:
            info = tensor_info(ty)
            assert info is not None
            out_bytes += int(np.prod(info.shape)) * (4 if info.dtype == "f32" else 1)
        return _lower_and_compile(module, target, arch), out_bytes


def _calls(name: str) -> int:
    """Calls before the checked one: 2 for a recipe with activation state (its second call
    quantizes with the scale the first left), 1 otherwise."""
    recipe = get_recipe(name)
    stateful = isinstance(recipe, ScalingRecipe) and recipe.has_scaling_state(Role.ACTIVATION)
    return 2 if stateful else 1


def _scaling_recipe(name: str) -> ScalingRecipe:
    recipe = get_recipe(name)
    if not isinstance(recipe, ScalingRecipe):
        raise SystemExit(f"recipe '{name}' does not quantize")
    return recipe


def _lower_and_compile(module: ir.Module, target: str, arch: str) -> bytes:
    resolved = Target.for_cuda(arch) if target == "cuda" else Target()  # llvm-cpu: the host's
    if resolved.is_cuda:
        FuseQuantizeCore().apply(module)
    LowerNamedOps(resolved).apply(module)
    return compile_module(module, resolved)


def gemm_vmfb(
    recipe_name: str, mnk: tuple[int, int, int], target: str, arch: str
) -> tuple[bytes, list[dict[str, Any]]]:
    """``@main(GEMM-ready A and B operands) -> C f32 [M, N]``: the recipe's ``scaled_matmul``
    alone, and a spec per argument (shape, kind) for ``gpu_check_run.random_operand``."""
    recipe = _scaling_recipe(recipe_name)
    m, n, k = mnk
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        a_type, b_type = builtin_tensor_type((m, k), "f32"), builtin_tensor_type((n, k), "f32")
        with ir.InsertionPoint(module.body):
            chain = func.FuncOp("chain", ir.FunctionType.get([a_type, b_type], []))
        block = chain.add_entry_block()
        ops = NamedOpBuilder(module)
        with ir.InsertionPoint(block):
            a, b = block.arguments
            qa = recipe.emit_quantize(ops, a, Role.ACTIVATION)
            qb = recipe.emit_quantize(ops, b, Role.WEIGHT)
            y = recipe.emit_scaled_matmul(ops, qa, qb, True, TensorInfo((m, n), "f32"))
            func.ReturnOp([])
        gemm = callee_name(y.owner)
        decls = {
            ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
            for op in module.body.operations
            if is_named_op_decl(op.operation)
        }
        decl = decls[gemm]
        fn_type = ir.FunctionType(ir.TypeAttr(decl.attributes["function_type"]).value)
        with ir.InsertionPoint(module.body):
            entry = func.FuncOp("main", fn_type)
        body = entry.add_entry_block()
        with ir.InsertionPoint(body):
            call = func.CallOp(
                list(fn_type.results), ir.FlatSymbolRefAttr.get(gemm), body.arguments
            )
            func.ReturnOp(list(call.results))
        chain.operation.erase()
        for name, op in decls.items():
            if name != gemm:
                op.erase()
        specs = _operand_specs(decl, list(fn_type.inputs))
        return _lower_and_compile(module, target, arch), specs


def _operand_specs(decl: ir.Operation, types: list[ir.Type]) -> list[dict[str, Any]]:
    """Per argument of a ``scaled_matmul``: A's (data, scale[, s_dec]), then B's."""
    gemm = NamedOp(decl).record(ScaledMatmul)
    scale_format = gemm.scale_format or ScaleFormat.FP32
    scale_kind = {
        ScaleFormat.FP32: "f32_scale",
        ScaleFormat.E8M0: "e8m0",
        ScaleFormat.NVFP4: "e4m3_scale",
    }[scale_format]
    half = len(types) // 2
    specs = []
    for side_format, side_types in ((gemm.a_format, types[:half]), (gemm.b_format, types[half:])):
        fmt = side_format.name
        kinds = ["e2m1x2" if fmt == "e2m1" else fmt, scale_kind, "f32_scale"]
        for kind, ty in zip(kinds, side_types, strict=False):
            info = tensor_info(ty)
            assert info is not None
            specs.append({"shape": list(info.shape), "kind": kind})
    return specs


def run_cpu(vmfb: bytes, inputs: list[np.ndarray], calls: int = 1) -> list[np.ndarray]:
    """The outputs of the last of ``calls`` calls (module state carries over between them)."""
    ctx = iree_runtime.SystemContext(config=iree_runtime.Config("local-task"))
    module = iree_runtime.VmModule.copy_buffer(ctx.instance, vmfb)
    ctx.add_vm_module(module)
    for _ in range(calls):
        results = call(ctx.modules[module.name]["main"], *inputs)
    return host_copies(results)


def as_stored(value: np.ndarray) -> np.ndarray:
    """Codes and low-precision scales as raw bytes (uint8), f32 as is."""
    return value if value.dtype == np.float32 else value.view(np.uint8)


def total_mb(out: Path) -> float:
    return sum(p.stat().st_size for p in out.iterdir() if p.is_file()) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="build/gpu-check", help="output directory")
    parser.add_argument("--cuda-arch", default="sm_90", help="sm_89, sm_90 or sm_100")
    parser.add_argument(
        "--target",
        default="cuda",
        choices=TARGETS,
        help="what the artifacts are compiled for (llvm-cpu: a dry run with small bench shapes)",
    )
    parser.add_argument(
        "--recipes",
        default=",".join(ALL_RECIPES),
        help=f"comma-separated subset of {','.join(ALL_RECIPES)} (default all)",
    )
    parser.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"comma-separated subset of {','.join(PARTS)} (default all)",
    )
    parser.add_argument(
        "--bench-batch",
        type=int,
        default=0,
        help="also time the transformer block at this batch (no check; 0: none)",
    )
    parser.add_argument(
        "--bench-dtype",
        choices=tuple(BENCH_DTYPES),
        default="f32",
        help="the model the recipes quantize at --bench-batch: f32, bf16 or both",
    )
    args = parser.parse_args()
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if not parts or parts - set(PARTS):
        parser.error(f"--parts: choose from {','.join(PARTS)}")
    chosen = [r.strip() for r in args.recipes.split(",") if r.strip()]
    unknown = [r for r in chosen if r not in ALL_RECIPES]
    if unknown or not chosen:
        parser.error(f"--recipes: unknown {unknown}, choose from {','.join(ALL_RECIPES)}")
    target = args.target
    cuda = target == "cuda"
    bench_shape = BENCH_SHAPE if cuda else SMALL_BENCH_SHAPE
    gemm_bench = GEMM_BENCH if cuda else SMALL_GEMM_BENCH
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for pattern in OWNED:
        for stale in out.glob(pattern):
            stale.unlink()
    arch = args.cuda_arch
    inputs: dict[str, np.ndarray] = {}
    expected: dict[str, np.ndarray] = {}
    entries: list[dict[str, Any]] = []

    def note(kind: str, name: str, vmfb: bytes, **extra: Any) -> None:
        packed = lzma.compress(vmfb, preset=6)  # the embedded PTX shrinks 10x and more
        (out / f"{name}.vmfb.xz").write_bytes(packed)
        entries.append({"kind": kind, "name": name, "vmfb": f"{name}.vmfb.xz", **extra})
        print(f"built {name} ({len(vmfb) / 1e6:.2f} MB, {len(packed) / 1e6:.2f} xz)", flush=True)

    quantize_checks = [
        (recipe, both, shape)
        for recipe in QUANTIZE_RECIPES
        if recipe in chosen and "quantize" in parts
        for both in ((False, True) if recipe in COLUMNWISE_RECIPES else (False,))
        for shape in (CHECK_SHAPE, *EXTRA_CHECK_SHAPES.get(recipe, ()))
    ]
    for recipe, both, shape in quantize_checks:
        x = check_input(list(shape), SEED)
        x_spec = {"shape": list(shape), "seed": SEED, "sha256": hashlib.sha256(x).hexdigest()}
        base = f"quantize-{recipe}"
        name = base + ("-rowcol" if both else "")
        extra = shape != CHECK_SHAPE  # an extra shape's artifact is named by it
        name += f"-{shape[0]}x{shape[1]}" if extra else ""
        calls = _calls(recipe)
        cpu_vmfb, _ = quantize_vmfb(recipe, shape, "llvm-cpu", arch, both)
        keys = []
        for i, value in enumerate(run_cpu(cpu_vmfb, [x], calls)):
            # the rowwise outputs of -rowcol are quantize-<recipe>'s: stored once
            key = f"{base}/{i}" if both and i < 2 and not extra else f"{name}/{i}"
            if key in expected:
                assert expected[key].tobytes() == as_stored(value).tobytes(), key
            expected[key] = as_stored(value)
            keys.append(key)
        more = []  # adversarial inputs: their outputs' sha256 (the bytes would not fit)
        for kind in ADVERSARIAL:
            xa = check_input(list(shape), SEED, kind)
            spec = {**x_spec, "kind": kind, "sha256": hashlib.sha256(xa).hexdigest()}
            outs = run_cpu(cpu_vmfb, [xa], calls)
            hashes = [hashlib.sha256(as_stored(v).tobytes()).hexdigest() for v in outs]
            more.append({"input": spec, "sha256": hashes})
        vmfb = quantize_vmfb(recipe, shape, target, arch, both)[0] if cuda else cpu_vmfb
        note("quantize", name, vmfb, input=x_spec, calls=calls, expected=keys, more=more)
        if extra:
            continue
        vmfb, out_bytes = quantize_vmfb(recipe, bench_shape, target, arch, both)
        moved = int(np.prod(bench_shape)) * 4 + out_bytes  # f32 in, codes and scales out
        note("bench_quantize", f"bench-{name}", vmfb, shape=list(bench_shape), bytes=moved)

    rng = np.random.default_rng(SEED)
    for recipe in (r for r in GEMM_RECIPES if r in chosen and "gemm" in parts):
        for check in (GEMM_CHECK, GEMM_FEW_ROWS_CHECK):
            name = f"gemm-{recipe}-{'x'.join(map(str, check))}"
            cpu_vmfb, specs = gemm_vmfb(recipe, check, "llvm-cpu", arch)
            operands = [random_operand(s["kind"], s["shape"], rng) for s in specs]
            for i, value in enumerate(operands):
                inputs[f"{name}/{i}"] = value
            (expected[f"{name}/0"],) = run_cpu(cpu_vmfb, operands)
            vmfb = gemm_vmfb(recipe, check, target, arch)[0] if cuda else cpu_vmfb
            note("gemm", name, vmfb, inputs=len(operands), shape=list(check))
        for mnk in gemm_bench:
            bench = f"gemm-{recipe}-{'x'.join(map(str, mnk))}"
            vmfb, specs = gemm_vmfb(recipe, mnk, target, arch)
            note("bench_gemm", bench, vmfb, shape=list(mnk), operands=specs, seed=SEED)

    torch.manual_seed(SEED)
    model, (bx,) = transformer_block.build()
    bx = bx[:SAMPLE_BATCH].contiguous()
    model_recipes = [r for r in MODEL_RECIPES if r in chosen and "model" in parts]
    if model_recipes:
        inputs["block_x"] = bx.numpy()
    for recipe in model_recipes:
        name = f"block-{recipe}"
        calls = _calls(recipe)
        start = time.perf_counter()
        cpu = compiler.compile(model, (bx,), recipe)
        built = (
            compiler.compile(model, (bx,), recipe, target="cuda", cuda_arch=arch) if cuda else cpu
        )
        for _ in range(calls):
            (want,) = cpu.run_numpy(bx.numpy())
        expected[f"{name}/0"] = want
        seconds = round(time.perf_counter() - start, 1)
        note(
            "model",
            name,
            built.vmfb,
            input="block_x",
            calls=calls,
            seconds=seconds,
            sample="transformer_block",
        )
    if "none" in model_recipes:
        # IREE's own bf16 path (no qmlir quantization): the latency baseline a user would pick
        # instead of a recipe; timed only (bf16 sums differ from llvm-cpu's beyond the tolerance).
        model16, _ = transformer_block.build_bf16()
        bx16 = bx.to(torch.bfloat16)
        built = (
            compiler.compile(model16, (bx16,), "none", target="cuda", cuda_arch=arch)
            if cuda
            else compiler.compile(model16, (bx16,), "none")
        )
        note(
            "bench_model",
            "block-none-bf16",
            built.vmfb,
            input="block_x",
            dtype="bf16",
            sample="transformer_block",
        )

    if args.bench_batch and "model" in parts:
        # timed only, at a batch whose GEMMs have 128 * bench_batch rows (the input is generated
        # on the GPU machine): where the recipes' GEMMs, not launches, decide the latency
        shape = [args.bench_batch, transformer_block.SEQ, transformer_block.DIM]
        for recipe in (r for r in BENCH_BATCH_RECIPES if r in chosen):
            # `none` in bf16 (IREE's own path); the recipes on the f32 and/or the bf16 model
            for bf16 in (True,) if recipe == "none" else BENCH_DTYPES[args.bench_dtype]:
                model_b, _ = transformer_block.build_bf16() if bf16 else transformer_block.build()
                example = torch.zeros(shape, dtype=torch.bfloat16 if bf16 else torch.float32)
                options = {"target": "cuda", "cuda_arch": arch} if cuda else {}
                built = compiler.compile(model_b, (example,), recipe, **options)
                note(
                    "bench_model",
                    f"block-{recipe}{'-bf16' if bf16 else ''}-batch{args.bench_batch}",
                    built.vmfb,
                    input={"shape": shape, "seed": SEED},
                    dtype="bf16" if bf16 else "f32",
                    sample="transformer_block",
                )
    np.savez_compressed(out / "inputs.npz", **inputs)
    np.savez_compressed(out / "expected.npz", **expected)
    manifest = {"target": target, "cuda_arch": arch, "recipes": chosen, "entries": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    size = total_mb(out)
    print(
        f"wrote {len(entries)} {target} artifacts, inputs and llvm-cpu outputs to {out}: "
        f"{size:.1f} MB"
    )
    if size > LIMIT_MB:
        print(
            f"gpu-build: {out} is {size:.1f} MB, over the {LIMIT_MB:.0f} MB that fit the device "
            "tool's 64 MiB carry limit with the working tree and the runtime (gpu_runtime.py)"
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
