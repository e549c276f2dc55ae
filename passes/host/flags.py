"""``iree-compile`` flags per target: the one place the backend and the host evaluator (weight
folding, ``compiler.quantize``) take them from, so both compile the same way."""

from __future__ import annotations

import re
from collections.abc import Sequence

from passes.base.target import Target
from passes.lowering.cuda import targets as cuda_targets

# The flags of the llvm-cpu path that keep the numerics and the artifact the same on cuda: bf16
# constants stay out of line (they fail to verify on llvm-cpu otherwise); no compile-time
# evaluation (IREE decodes the FP8 weight constants once in an initializer at module load: the
# artifact keeps FP8 bytes; with const-eval every call of the MLP ran 2-3x slower); f64
# arithmetic kept, not demoted (quantize's scale_inv divides in f64 to keep f32-subnormal
# results exact).
SHARED_FLAGS = (
    "--iree-flow-inline-constants-max-byte-length=0",
    "--iree-opt-const-eval=false",
    "--iree-input-demote-f64-to-f32=false",
)


def cpu_flags(cpu: str = "host") -> list[str]:
    """The llvm-cpu target for an LLVM CPU: ``host`` (the compiling host's, TOOLCHAIN.md),
    ``generic`` or a CPU name (``compiler/pipeline/cpu_target.py``)."""
    return [
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        f"--iree-llvmcpu-target-cpu={cpu}",
    ]


# An artifact on llvm-cpu:
# - data tiling (GEMM operands packed into the CPU's mmt4d tiles) made IREE `none` 0.67-0.76x as
#   slow on the MLP, transformer block, MiniLM and decoder (AVX2 host, benchmarks/RESULTS.md);
#   `--iree-llvmcpu-enable-ukernels=all` on top was no faster;
# - every weight decode (FP8/E2M1 codes x scales → the f32 GEMM operand) hoisted into the module's
#   initializer, run once at load: IREE hoists only what grows by less than its size threshold
#   (a 1024x1024 FP8 weight decoded to f32 grows by 3 MiB and was decoded on every call, 1.9x
#   `none` on the MLP; hoisted: 1.2x). The artifact keeps the low-precision bytes.
# - floating-point reductions vectorized (`--iree-llvmcpu-reassociate-fp-reductions`): without
#   it, IREE sums (and takes the max of) each softmax row one element after another in scalar
#   code; MiniLM's [8, 12, 128, 128] softmax took 2.3 ms a layer, 1.4 ms with it (AVX-512 host,
#   benchmarks/RESULTS.md). It changes only the order of f32 sums (softmax, norms, means), which
#   no numerics contract fixes: an amax is a max, exact in any order, and the GEMMs' order is
#   their tiles' either way.
# Not in HOST_CPU_FLAGS: the named-op evaluator runs no GEMM and holds no weight.
HOIST_ALL_FLAG = f"--iree-opt-const-expr-max-size-increase-threshold={1 << 40}"
# `pack_weights="call"`: no constant expression is hoisted into the initializer, so the packs of
# the weights into IREE's GEMM tiles are made in every call instead of once at load, beside
# the weights (a second copy: 1.83x the parameter file's RSS for a 1.1B `none`, RESULTS.md)
PACK_PER_CALL_FLAG = "--iree-opt-const-expr-hoisting=false"
REASSOCIATE_FLAG = "--iree-llvmcpu-reassociate-fp-reductions=true"
ARTIFACT_CPU_FLAGS = ("--iree-opt-data-tiling", HOIST_ALL_FLAG, REASSOCIATE_FLAG)

# An llvm-cpu artifact with dynamic dims is data-tiled from IREE's global-optimization phase
# (`--iree-global-opt-data-tiling`) rather than from dispatch creation, the static artifacts' path:
# there, a GEMM with a dynamic M gives its weight operand an encoding that names M, so the weight's
# decode into that encoding is not a constant expression and runs on every call (the MLP under
# fp8-current: 9.9 ms dynamic vs 6.9 ms static); from global optimization it is hoisted into the
# initializer like a static one (5.7 ms), and MiniLM's attention compiles (207 ms against 318 ms
# without data tiling; AVX-512 host, benchmarks/RESULTS.md). Static artifacts keep dispatch
# creation's path, faster on MiniLM (151 vs 172 ms) and the decoder (68 vs 71 ms). A dynamic
# compile that IREE 3.13 still fails to data-tile (its two known failures below) runs again
# without it.
DYNAMIC_ARTIFACT_CPU_FLAGS = ("--iree-global-opt-data-tiling", HOIST_ALL_FLAG, REASSOCIATE_FLAG)
# AVX2 code with dynamic dims: IREE peels each vectorized loop of a dynamic trip count into a
# vector body and a remainder, rather than its heuristic's choice; MiniLM's dynamic artifact
# (softmax over a dynamic sequence, attention's P·V) 283 -> 238 ms on an AVX2 host
# (benchmarks/RESULTS.md). Not measured on AVX-512 targets, which keep IREE's heuristic.
DYNAMIC_AVX2_CPU_FLAGS = ("--iree-llvmcpu-vector-pproc-strategy=peel",)
DYNAMIC_CPU_RETRY_FLAGS = ("--iree-global-opt-data-tiling=false",)
DYNAMIC_CPU_RETRY_ON = (
    "no basis element may be statically non-positive",
    "all stack allocations need to be hoisted",
)


# llvm-cpu: a dispatch whose vectors outgrow IREE's 32 KiB stack limit (a training step's
# fused backward at batch 8 x 32: 33 KiB) compiles with a 64 KiB limit; IREE's CPU workers run on
# 128 KiB stacks (the runtime's `--task_worker_stack_size` default)
STACK_RETRY_FLAGS = ("--iree-llvmcpu-stack-allocation-limit=65536",)
STACK_RETRY_ON = ("exceeded stack allocation limit",)
# llvm-cpu: a dispatch with vectors over IREE's size check (an untied GPT-2 step's MLP backward
# at 8 x 32 tokens, vector<128x128xf32>) compiles without the check, to slower but correct code
# (it then needs the larger stack too: a second retry adds it)
LARGE_VECTOR_RETRY_FLAGS = ("--iree-llvmcpu-fail-on-large-vector=false",)
LARGE_VECTOR_RETRY_ON = ("operations with large vector sizes",)


def dropped_flags(diagnostics: str, flags: Sequence[str]) -> tuple[str, ...]:
    """The flags a failed compile runs again without: dynamic AVX2 code's peel strategy
    (:data:`DYNAMIC_AVX2_CPU_FLAGS`, for IREE's own heuristic) when a dispatch is over the
    stack limit even with the larger one. Peeling the vectorized rows of a 1.1B Llama's final
    RMSNorm under nvfp4 (2048 bf16 values widened to f32, the last position sliced, dynamic
    rows) put 120 KiB on the stack, nearly a CPU worker's whole stack; IREE's heuristic compiles
    it within 64 KiB. The rest of that artifact loses the peeling's speed (MiniLM's dynamic
    artifact: 238 against 283 ms with it, benchmarks/RESULTS.md)."""
    if STACK_RETRY_FLAGS[0] in flags and any(message in diagnostics for message in STACK_RETRY_ON):
        return tuple(f for f in DYNAMIC_AVX2_CPU_FLAGS if f in flags)
    return ()


def retry_flags(target: Target, dynamic: bool, diagnostics: str) -> tuple[str, ...]:
    """The flags a failed compile runs again with, for the known errors ``diagnostics`` names:
    a dynamic llvm-cpu artifact without data tiling; an llvm-cpu dispatch over the stack limit
    with a larger one, over the vector-size check without it; ``()`` for any other failure."""
    if target.is_cuda:
        return ()
    flags: tuple[str, ...] = ()
    if dynamic and any(message in diagnostics for message in DYNAMIC_CPU_RETRY_ON):
        flags += DYNAMIC_CPU_RETRY_FLAGS
    if any(message in diagnostics for message in STACK_RETRY_ON):
        flags += STACK_RETRY_FLAGS
    if any(message in diagnostics for message in LARGE_VECTOR_RETRY_ON):
        flags += LARGE_VECTOR_RETRY_FLAGS
    return flags


# The llvm-cpu target on the host CPU: what runs on this host (weight folding, quantize).
HOST_CPU_FLAGS = (*cpu_flags("host"), *SHARED_FLAGS)


def target_flags(target: Target, dynamic: bool = False, external: bool = False) -> list[str]:
    """``iree-compile`` flags for an artifact for ``target`` (``dynamic``: a module with dynamic
    dims; ``external``: its weights are parameters). A cuda architecture IREE does not know by
    name takes none: its device target goes on the module (``passes/lowering/cuda/targets.py``)."""
    if target.is_cuda:
        assert target.cuda_arch is not None  # Target checks it
        return [*cuda_targets.iree_flags(target.cuda_arch), *SHARED_FLAGS]
    flags = artifact_cpu_flags(target.cpu_name, dynamic, external)
    if dynamic and not target.has_avx512:
        flags += DYNAMIC_AVX2_CPU_FLAGS
    return flags


# Weights outside the module (a parameter file, mapped at load) are not decoded into the
# initializer: the decoded f32 copies would take 4x the FP8 bytes (8x NVFP4's) for the life of
# the module, which is what keeping a large model's weights in their stored format is for. Only
# what does not grow is hoisted (a pack of a high-precision weight, a weight's scales unswizzled,
# a row's NaN check: passes/lowering/cpu/gemv.py); each call decodes the FP8/FP4 weights it
# multiplies (benchmarks/RESULTS.md has the cost). IREE's own threshold (1 MiB of growth) had
# kept the decoded copies of every weight under about 0.3 M elements: a 0.35B generator's 48 K/V
# projections, 48 MB of its 482 MB peak (benchmarks/RESULTS.md).
HOIST_NO_GROWTH_FLAG = "--iree-opt-const-expr-max-size-increase-threshold=0"


def artifact_cpu_flags(cpu: str, dynamic: bool = False, external: bool = False) -> list[str]:
    """``iree-compile`` flags for an llvm-cpu artifact for the LLVM CPU named ``cpu``."""
    artifact = DYNAMIC_ARTIFACT_CPU_FLAGS if dynamic else ARTIFACT_CPU_FLAGS
    if external:
        artifact = tuple(HOIST_NO_GROWTH_FLAG if f == HOIST_ALL_FLAG else f for f in artifact)
    return [*cpu_flags(cpu), *SHARED_FLAGS, *artifact]


_NOTE_LAYER = re.compile(r'note: loc\("([^"]+)"\)')


def first_error_line(text: str) -> str:
    """The first ``error:`` line of an IREE tool's output, without its location prefix, and the
    layer its notes name (``loc("mlp.c_fc"): called from``: the importer's module path), which
    the error line itself often lacks: ``... for function. Got 33792 bytes (in layer mlp.c_fc)``."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "error:" not in line:
            continue
        message = line.split("error:", 1)[1].strip().rstrip(":;").strip()
        for note in lines[i + 1 :]:
            if "error:" in note:
                break
            match = _NOTE_LAYER.search(note)
            if match and match.group(1) not in message:
                return f"{message} (in layer {match.group(1)})"
        return message
    lines = [line for line in lines if line.strip()]
    return lines[0].strip() if lines else "no message"
