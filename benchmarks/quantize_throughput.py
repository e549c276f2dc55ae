"""Quantize throughput: qmlir's compiled quantize core vs a memory copy and torch, in one run.

    python benchmarks/quantize_throughput.py [--repeats 10] [--size 4096] [--no-stages]

One float32 tensor (standard normal, seed 0, ``--size`` squared). Variants:

- ``np.copyto`` into a preallocated array (bytes = read + write): the bandwidth yardstick.
- torch eager: fp8-current (``amax -> 448/amax -> (x*scale).clamp -> float8_e4m3fn``) and mxfp8
  (torchao ``to_mx(x, float8_e4m3fn, 32, RCEIL)``); ``to_mx`` under ``torch.compile`` (default
  mode, Inductor caches off so the reported compile time is a cold one).
- qmlir: every recipe in ``passes.recipes.RECIPES`` that can quantize one tensor:
  ``quantize_module_text(recipe, shape, role="activation", usage="rowwise", swizzle=False)``
  compiled by ``passes.host.evaluate.compile_host_module`` (IREE ``local-task``, every core), called
  with the numpy array (IREE copies it into a buffer of its own at every call); "fp8-delayed" has
  no activation path without carried state, so it runs with role="weight" (current scaling) and
  says so. A recipe that fails to build or compile gets a row with its error. "input in place"
  rows pass the same (64-byte-aligned) array imported without a copy (``passes.host.call.
  imported``), as ``compiler.quantize`` does since 2026-11-29; "device input" rows pass it
  already uploaded to the IREE device (``asdevicearray``), which leaves out the binding's
  per-call host-to-device copy. Every qmlir call goes through ``passes.host.call.call``, as
  ``compiler.quantize`` and ``CompiledModule`` do (the calling thread ``SCHED_BATCH`` for the
  call); "plain call" rows call the same function without that, to show what it is worth in the
  same run.

Bytes per call = input read + every output written (their actual sizes: codes 1 B/elem, 0.5 if
an FP4 recipe packs them, plus the scales). Timing: warm-up, then two rounds of ``--repeats``
back-to-back calls per variant, rounds alternating between variants; median of all samples.
The qmlir call includes mapping its outputs to host (``to_host``, no copy on the CPU).
"page faults/call": minor faults (``getrusage``, every thread) during one more call: the cost of
touching freshly allocated buffers, which is large and variable on a VM.
``--stages`` (default on) also times each named op of each qmlir quantize core on its own
(device inputs), plus an IREE f32->i8 cast of the same tensor (one memory-bound pass).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

FP8_MAX = 448.0
TIMED_WARMUP = 3


def _median_ms(samples: list[float]) -> float:
    ordered = sorted(samples)
    return 1e3 * ordered[len(ordered) // 2]


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _short_error(e: BaseException, limit: int = 160) -> str:
    text = " ".join(f"{type(e).__name__}: {e}".split())
    text = text.replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Variant:
    """One timed callable; ``outputs`` are what it wrote (for the byte count)."""

    def __init__(
        self,
        name: str,
        call: Callable[[], Any] | None,
        nbytes: int = 0,
        baseline: str | None = None,
        note: str = "",
        error: str | None = None,
    ) -> None:
        self.name, self.call, self.nbytes = name, call, nbytes
        self.baseline, self.note, self.error = baseline, note, error
        self.samples: list[float] = []
        self.faults = 0


def _minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _time_rounds(variants: list[Variant], repeats: int, rounds: int = 2) -> None:
    for _ in range(rounds):
        for v in variants:
            if v.call is None:
                continue
            for _ in range(TIMED_WARMUP):
                v.call()
            for _ in range(repeats):
                start = time.perf_counter()
                v.call()
                v.samples.append(time.perf_counter() - start)
    for v in variants:  # page faults of one more call (all threads: IREE's and torch's too)
        if v.call is not None:
            before = _minor_faults()
            v.call()
            v.faults = _minor_faults() - before


def _nbytes(x: np.ndarray, outputs: Any) -> int:
    """Input read + every output written (numpy arrays or torch tensors, their real sizes)."""
    total = x.nbytes
    for out in outputs:
        if hasattr(out, "element_size"):  # a torch tensor (float8 has no numpy view)
            total += out.numel() * out.element_size()
        else:
            total += int(np.asarray(out).nbytes)
    return total


# ---------------------------------------------------------------------------------------------
# baselines


def copy_variant(x: np.ndarray) -> Variant:
    dst = np.empty_like(x)
    return Variant("memory copy (np.copyto, read + write)", lambda: np.copyto(dst, x), 2 * x.nbytes)


def torch_variants(x: np.ndarray) -> tuple[list[Variant], dict[str, float]]:
    import torch

    xt = torch.from_numpy(x)
    variants: list[Variant] = []
    compile_s: dict[str, float] = {}

    def fp8_current(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        amax = t.abs().amax()
        scale = FP8_MAX / amax
        codes = (t * scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        return codes, scale.reciprocal()

    out = fp8_current(xt)
    variants.append(
        Variant("torch eager fp8-current", lambda: fp8_current(xt), _nbytes(x, out), "fp8-current")
    )
    try:
        from torchao.prototype.mx_formats.mx_tensor import ScaleCalculationMode, to_mx
    except Exception as e:  # torchao missing or broken: say so, keep going
        variants.append(Variant("torch eager mxfp8 (torchao to_mx)", None, error=_short_error(e)))
        return variants, compile_s

    def mx(t: torch.Tensor) -> Any:
        return to_mx(t, torch.float8_e4m3fn, 32, scaling_mode=ScaleCalculationMode.RCEIL)

    out = mx(xt)
    variants.append(
        Variant("torch eager mxfp8 (torchao to_mx)", lambda: mx(xt), _nbytes(x, out), "mxfp8")
    )
    name = "torch.compile mxfp8 (torchao to_mx)"
    try:
        import torch._inductor.config as inductor_config

        inductor_config.force_disable_caches = True
        compiled = torch.compile(mx)
        start = time.perf_counter()
        out = compiled(xt)
        compile_s[name] = time.perf_counter() - start
        variants.append(
            Variant(
                name,
                lambda: compiled(xt),
                _nbytes(x, out),
                "mxfp8",
                note=f"compile (first call) {compile_s[name]:.1f} s",
            )
        )
    except Exception as e:  # report the exact error in the table, do not crash
        variants.append(Variant(name, None, error=_short_error(e, 300)))
    return variants, compile_s


# ---------------------------------------------------------------------------------------------
# qmlir


def _recipe_plan() -> list[tuple[str, str, str, str | None]]:
    """(recipe name, role, label, skip reason) for every registered recipe."""
    from passes.recipes import RECIPES, Role, ScalingRecipe, get_recipe

    plan = []
    for name in RECIPES:
        recipe = get_recipe(name)
        if not isinstance(recipe, ScalingRecipe):
            plan.append((name, "", name, "does not quantize tensors"))
        elif recipe.has_scaling_state(Role.ACTIVATION):
            plan.append((name, "weight", f"{name} (weights: current scaling)", None))
        else:
            plan.append((name, "activation", name, None))
    return plan


def _host_outputs(fn: Any, *args: Any, batch: bool = True) -> list[np.ndarray]:
    """One call made as ``compiler.quantize`` makes it (``passes.host.call``), outputs mapped."""
    from passes.host.call import call

    return [r.to_host() for r in call(fn, *args, batch=batch)]


def qmlir_variants(
    x: np.ndarray, stage_modules: dict[str, tuple[str, str]]
) -> tuple[list[Variant], list[str], dict[str, float]]:
    import iree.runtime as iree_runtime

    from compiler.pipeline.quantize import ENTRY, quantize_module_text
    from passes.host.call import imported
    from passes.host.evaluate import compile_host_module
    from passes.recipes import get_recipe

    variants: list[Variant] = []
    skipped: list[str] = []
    compile_s: dict[str, float] = {}
    seen: dict[str, str] = {}  # module text -> the first label that compiled it
    for name, role, label, skip in _recipe_plan():
        if skip:
            skipped.append(f"{name} ({skip})")
            continue
        row = f"qmlir {label}"
        # a weights-only row (a recipe with activation state) quantizes with current scaling
        baseline = "fp8-current" if role == "weight" else name
        try:
            start = time.perf_counter()
            text = quantize_module_text(
                get_recipe(name), x.shape, role=role, usage="rowwise", swizzle=False
            )
            fn = compile_host_module(text).modules.module[ENTRY]
            compile_s[label] = time.perf_counter() - start
            outputs = _host_outputs(fn, x)
        except Exception as e:  # a recipe that cannot do this: its error in the row
            variants.append(Variant(row, None, error=_short_error(e)))
            continue
        nbytes = _nbytes(x, outputs)
        per_elem = outputs[0].nbytes / x.size  # 0.5 where FP4 codes come packed
        note = f"codes {per_elem:g} B/elem, scales {sum(o.nbytes for o in outputs[1:])} B"
        if text in seen:
            note += f"; the same module as {seen[text]}"
        else:
            seen[text] = label
            stage_modules[label] = (text, role)
        variants.append(
            Variant(row, lambda fn=fn: _host_outputs(fn, x), nbytes, baseline, note=note)
        )
        ctx = compile_host_module(text)
        variants.append(
            Variant(
                f"qmlir {label}, input in place",
                lambda fn=fn, d=ctx.config.device: _host_outputs(fn, imported(d, x)),
                nbytes,
                baseline,
                note="imported, not copied (compiler.quantize's call)",
            )
        )
        dev_x = iree_runtime.asdevicearray(ctx.config.device, x)
        variants.append(
            Variant(
                f"qmlir {label}, device input",
                lambda fn=fn, d=dev_x: _host_outputs(fn, d),
                nbytes,
                baseline,
                note="input uploaded once, outside the timing",
            )
        )
        variants.append(
            Variant(
                f"qmlir {label}, device input, plain call",
                lambda fn=fn, d=dev_x: _host_outputs(fn, d, batch=False),
                nbytes,
                baseline,
                note="the calling thread's scheduling left as it is (IREE's own call)",
            )
        )
    return variants, skipped, compile_s


def _stage_module(text: str) -> tuple[str, list[tuple[str, list[tuple]]]]:
    """Adds ``@stage<i>`` (one named-op call each) to the quantize module; where each stage's
    operands come from: ``("arg", i)`` or ``("stage", j, k)``."""
    from iree.compiler import ir
    from iree.compiler.dialects import func

    from compiler.pipeline.quantize import ENTRY

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        entry = next(
            op
            for op in module.body.operations
            if "sym_name" in op.operation.attributes
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == ENTRY
        )
        block = entry.regions[0].blocks[0]
        calls = [op for op in block.operations if op.operation.name == "func.call"]
        stages = []
        for i, call in enumerate(calls):
            sources: list[tuple] = []
            for operand in call.operands:
                found = [("arg", a) for a, arg in enumerate(block.arguments) if arg == operand]
                for j, earlier in enumerate(calls[:i]):
                    found += [
                        ("stage", j, k) for k, r in enumerate(earlier.results) if r == operand
                    ]
                if not found:
                    raise RuntimeError(f"operand of call {i} comes from a non-call op")
                sources.append(found[0])
            in_types = [v.type for v in call.operands]
            out_types = [r.type for r in call.results]
            with ir.InsertionPoint(module.body):
                f = func.FuncOp(f"stage{i}", ir.FunctionType.get(in_types, out_types))
            body = f.add_entry_block()
            with ir.InsertionPoint(body):
                inner = func.CallOp(out_types, call.attributes["callee"], list(body.arguments))
                func.ReturnOp(list(inner.results))
            callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            stages.append((callee, sources))
        return str(module), stages


CAST_MODULE = """
func.func @cast(%x: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xi8> {{
  %e = tensor.empty() : tensor<{m}x{n}xi8>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
      affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}}
      ins(%x : tensor<{m}x{n}xf32>) outs(%e : tensor<{m}x{n}xi8>) {{
  ^bb0(%v: f32, %o: i8):
    %i = arith.fptosi %v : f32 to i32
    %b = arith.trunci %i : i32 to i8
    linalg.yield %b : i8
  }} -> tensor<{m}x{n}xi8>
  return %r : tensor<{m}x{n}xi8>
}}
"""


def stage_rows(x: np.ndarray, modules: dict[str, tuple[str, str]], repeats: int) -> list[str]:
    import iree.runtime as iree_runtime

    from compiler.pipeline.quantize import ENTRY
    from passes.host.call import call
    from passes.host.evaluate import compile_host_module

    lines = []
    variants: list[Variant] = []
    where: list[tuple[str, str]] = []
    for label, (text, _role) in modules.items():
        try:
            staged, stages = _stage_module(text)
            ctx = compile_host_module(staged)
        except Exception as e:
            lines.append(f"| {label} | (stages not measured: {_short_error(e)}) | | |")
            continue
        mod = ctx.modules.module
        dev_x = iree_runtime.asdevicearray(ctx.config.device, x)
        values: list[list[Any]] = []
        variants.append(Variant(f"{label}|whole core", lambda m=mod, d=dev_x: call(m[ENTRY], d)))
        where.append((label, "whole quantize core"))
        for i, (callee, sources) in enumerate(stages):
            args = [dev_x if s[0] == "arg" else values[s[1]][s[2]] for s in sources]
            values.append(list(call(mod[f"stage{i}"], *args)))
            variants.append(Variant(callee, lambda f=mod[f"stage{i}"], a=args: call(f, *a)))
            where.append((label, f"`{callee}`"))
    try:
        m, n = x.shape
        ctx = compile_host_module(CAST_MODULE.format(m=m, n=n))
        dev_x = iree_runtime.asdevicearray(ctx.config.device, x)
        variants.append(Variant("cast", lambda f=ctx.modules.module["cast"], d=dev_x: call(f, d)))
        where.append(("IREE f32->i8 cast (same bytes as one quantize pass)", "whole module"))
    except Exception as e:
        lines.append(f"| IREE f32->i8 cast | (not measured: {_short_error(e)}) | | |")
    _time_rounds(variants, repeats)
    whole = {}
    for v, (label, stage) in zip(variants, where, strict=True):
        ms = _median_ms(v.samples)
        if stage == "whole quantize core":
            whole[label] = ms
        share = (
            f"{ms / whole[label]:.0%}" if label in whole and stage != "whole quantize core" else ""
        )
        lines.append(f"| {label} | {stage} | {ms:.2f} | {share} |")
    return lines


# ---------------------------------------------------------------------------------------------


def _versions() -> str:
    import iree.runtime  # noqa: F401
    import torch

    from compiler.version import IREE_VERSION, __version__

    try:
        import torchao

        ao = torchao.__version__
    except Exception:
        ao = "unavailable"
    return (
        f"qmlir {__version__}, IREE {IREE_VERSION}, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads), torchao {ao}, numpy {np.__version__}, "
        f"Python {platform.python_version()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--size", type=int, default=4096, help="the tensor is SIZE x SIZE")
    parser.add_argument("--no-stages", dest="stages", action="store_false")
    args = parser.parse_args()
    started = time.perf_counter()

    from passes.host.call import aligned_empty

    normal = np.random.default_rng(0).standard_normal((args.size, args.size), dtype=np.float32)
    x = aligned_empty(normal.nbytes).view(np.float32).reshape(normal.shape)  # importable
    x[...] = normal
    copy = copy_variant(x)
    torch_rows, _ = torch_variants(x)
    stage_modules: dict[str, tuple[str, str]] = {}
    qmlir_rows, skipped, qmlir_compile = qmlir_variants(x, stage_modules)
    variants = [copy, *torch_rows, *qmlir_rows]
    _time_rounds(variants, args.repeats)

    print(
        f"{time.strftime('%Y-%m-%d')}; {platform.system()} {platform.machine()}, {_cpu_name()}, "
        f"{os.cpu_count()} cores; {_versions()}"
    )
    print(
        f"tensor {args.size}x{args.size} f32 (standard normal, seed 0, {x.nbytes / 1e6:.1f} MB); "
        f"median of {2 * args.repeats} calls; GB/s = (input read + outputs written) / time; "
        "vs torch eager = torch eager ms / this ms (same recipe)\n"
    )
    copy_gbs = copy.nbytes / (_median_ms(copy.samples) * 1e-3) / 1e9
    eager = {
        v.baseline: _median_ms(v.samples) for v in torch_rows if v.name.startswith("torch eager")
    }
    eager = {k: ms for k, ms in eager.items() if k is not None}
    print(
        "| variant | median ms | MB moved | GB/s | vs copy | vs torch eager "
        "| page faults/call | note |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for v in variants:
        if v.error is not None:
            print(f"| {v.name} | error | | | | | | {v.error} |")
            continue
        ms = _median_ms(v.samples)
        gbs = v.nbytes / (ms * 1e-3) / 1e9
        ratio = ""
        if v.baseline in eager and not v.name.startswith("torch eager"):
            ratio = f"{eager[v.baseline] / ms:.2f}x"
        print(
            f"| {v.name} | {ms:.2f} | {v.nbytes / 1e6:.1f} | {gbs:.2f} | {gbs / copy_gbs:.0%} "
            f"| {ratio} | {v.faults} | {v.note} |"
        )
    if skipped:
        print(f"\nnot measured: {', '.join(skipped)}")
    if qmlir_compile:
        built = ", ".join(f"{k} {s:.1f} s" for k, s in qmlir_compile.items())
        print(f"qmlir build + IREE compile: {built}")

    if args.stages and stage_modules:
        print("\nqmlir quantize core by named op (device input, each op alone, its own outputs):\n")
        print("| recipe | stage | median ms | vs whole core |")
        print("|---|---|---|---|")
        for line in stage_rows(x, stage_modules, args.repeats):
            print(line)
    print(f"\ntotal run {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
