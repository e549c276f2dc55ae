"""What a compile is asked for (:class:`CompileOptions`), and the choices made from it before
anything is built: how SDPA is compiled, which element type the llvm-cpu scaled GEMMs take."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from passes.base.errors import QmlirError
from passes.base.target import Cpu, Target
from passes.gemm_operands import GEMM_OPERAND_TYPES
from passes.recipes import Recipe

Progress = Callable[[str], None]  # called with each stage's name as it starts

ATTENTION_MODES = ("auto", "matmuls", "fused")
EXPERTS_MODES = ("auto", "routed", "dense")
GEMM_OPERAND_MODES = ("auto", *GEMM_OPERAND_TYPES)


@dataclass(frozen=True)
class CompileOptions:
    recipe: Recipe
    target: Target  # resolved once, by the caller (compiler/pipeline/target.py)
    quantize_all_matmuls: bool = False
    dump_ir: Path | None = None
    exclude: tuple[str, ...] = ()
    layer_recipes: tuple[tuple[str, Recipe], ...] = ()
    routers: tuple[str, ...] = ()  # MoE routers kept in high precision (found at export)
    # layers whose weights a quantized checkpoint stores in high precision (kept so)
    unquantized: tuple[str, ...] = ()
    # fixed activation scales by layer (scale_inv: the dequantizing multiplier), fp8-current
    activation_scales: tuple[tuple[str, float], ...] = ()
    # the model's module paths: a scale for one the compiled function does not compute (a
    # pooler nothing returns) is dropped, not taken for a typo
    model_layers: frozenset[str] = frozenset()
    attention: str = "auto"  # how SDPA is compiled: auto (per target), matmuls or fused
    experts: str = "auto"  # MoE experts: auto, routed or dense (compiler/frontend/moe.py)
    iree_flags: tuple[str, ...] = ()  # passed to iree-compile after qmlir's own (experiments)
    allow_unquantized: bool = False  # a quantizing recipe that quantizes no matmul: no error
    gemm_operands: str = "auto"  # llvm-cpu scaled GEMMs' decoded operands: auto, f32 or bf16
    # where the weights go: inline (constants of the module) or external (a parameter file,
    # written to ``parameters``, else to a temporary file the artifact owns until saved)
    weights: str = "inline"
    # llvm-cpu: when IREE packs the weights into its GEMM tiles: "load" (once, into the module's
    # memory beside the weights: a second copy), "call" (every call, no second copy) or
    # "decoded" (as load, and external FP8/FP4 weights decoded at load too, not in every call);
    # "panels" (as decoded, the decoded weights of a dynamic number of rows' FP8/FP4 GEMMs laid
    # out as the hand-written bf16 GEMM's panels: passes/dynamic_gemm.py);
    # "auto": decoded for a generator whose weights are external on llvm-cpu, else load
    pack_weights: str = "load"
    # pack_weights was "auto" when resolved: "decoded" then keeps no decoded copies where the
    # decode step multiplies every weight as stored (core.lower_and_compile)
    pack_weights_auto: bool = False
    # llvm-cpu: one-row per-tensor FP8 GEMMs (a generator's decode step) as matrix-vector
    # products over the weights' codes (passes/decode_gemv.py): "auto" (where the CPU has
    # AVX512-BF16 and AVX512-VBMI, or AVX2, FMA and F16C) or "off"
    decode_gemv: str = "auto"
    parameters: Path | None = None
    progress_bytes: Callable[[int, int, str], None] | None = None  # parameter file progress

    @property
    def rows_apart(self) -> bool:
        """Whether every recipe of the compile (the recipe, the per-layer ones) quantizes each
        activation row alone (``Recipe.rows_apart``): then a causal LM's last MLP may take the
        last position only (``compiler/frontend/final_norm.py``)."""
        recipes = [self.recipe, *(recipe for _, recipe in self.layer_recipes)]
        return all(recipe.rows_apart() for recipe in recipes)


WEIGHT_MODES = ("inline", "external")
PACK_MODES = ("auto", "load", "call", "decoded", "panels")
DECODE_GEMV_MODES = ("auto", "off")


def resolve_pack_weights(
    options: CompileOptions, generator: bool, decoded_bytes: int = 0
) -> CompileOptions:
    """``pack_weights="auto"`` made a mode: ``decoded`` for a generator whose weights are in a
    parameter file on llvm-cpu (its decode step reads every weight each token: decoded and
    packed once at load it ran 2-6x faster than repacked in every step, benchmarks/RESULTS.md)
    where those decoded copies (``decoded_bytes``) take at most half of this host's memory,
    else ``load`` (an 8B model's bf16 copies beside its mapped file would not fit 24 GB). An
    auto ``decoded`` keeps no decoded copies after all where the decode step multiplies every
    weight as stored (``decode-gemv``): they would only speed up the prefill, at 2-3x the
    memory (``compiler/pipeline/core.py``)."""
    if options.pack_weights != "auto":
        return options
    decoded = generator and options.weights == "external" and not options.target.is_cuda
    decoded = decoded and decoded_bytes <= host_memory_bytes() // 2
    return dataclasses.replace(
        options, pack_weights="decoded" if decoded else "load", pack_weights_auto=True
    )


def host_memory_bytes() -> int:
    """This host's physical memory."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def check_weights(options: CompileOptions) -> None:
    if options.weights not in WEIGHT_MODES:
        raise QmlirError(
            f"unknown --weights '{options.weights}' (known: {', '.join(WEIGHT_MODES)})"
        )
    if options.pack_weights not in PACK_MODES:
        raise QmlirError(
            f"unknown --pack-weights '{options.pack_weights}' (known: {', '.join(PACK_MODES)})"
        )
    if options.parameters is not None and options.weights != "external":
        raise QmlirError("a parameter file path needs weights='external'")


def check_target_recipes(options: CompileOptions) -> None:
    """One line for a recipe the target does not take (fp8-rowwise on cuda)."""
    if not options.target.is_cuda:
        return
    for recipe in (options.recipe, *(r for _, r in options.layer_recipes)):
        reason = getattr(recipe, "cuda_refusal", None)
        if reason:
            raise QmlirError(
                f"recipe '{recipe.name}' does not run on --target cuda yet ({reason}): "
                "compile it for llvm-cpu"
            )


def gemm_operand_type(options: CompileOptions, cpu: Cpu | None) -> str:
    """The element type of the llvm-cpu scaled GEMMs' decoded operands (passes/gemm_operands.py):
    ``auto`` is bf16 on a CPU with AVX512-BF16 (IREE's data-tiled bf16 GEMM, 1.6-1.8x its f32 one
    there, RESULTS.md) and f32 elsewhere; ``bf16`` elsewhere is allowed (the same sums, without
    the CPU's bf16 dot product). The cuda target's GEMMs take the FP8/FP4 codes: f32 there."""
    mode = options.gemm_operands
    if mode not in GEMM_OPERAND_MODES:
        raise QmlirError(
            f"unknown --gemm-operands '{mode}' (known: {', '.join(GEMM_OPERAND_MODES)})"
        )
    if cpu is None:
        if mode == "bf16":
            raise QmlirError("--gemm-operands bf16 needs --target llvm-cpu")
        return "f32"
    if mode == "auto":
        return "bf16" if "avx512bf16" in cpu.features else "f32"
    return mode


def experts_form(options: CompileOptions) -> str:
    """How transformers' MoE experts export (``compiler/frontend/moe.py``'s ``FORMS``).
    ``auto`` and ``routed``: each expert over the tokens routed to it; on cuda with one spare
    zero row an expert (``padded``: no zero-row tensor, as an expert no token reaches would
    give, which IREE's cuda runtime may refuse: its zero-size buffers were, in another case).
    ``dense``: every expert over every token, masked (the reference)."""
    if options.experts not in EXPERTS_MODES:
        raise QmlirError(
            f"unknown experts mode '{options.experts}' (known: {', '.join(EXPERTS_MODES)})"
        )
    if options.experts == "dense":
        return "dense"
    return "padded" if options.target.is_cuda else "routed"


def attention_as_matmuls(options: CompileOptions) -> bool:
    """``auto``: SDPA as ``bmm → softmax → bmm`` on llvm-cpu (IREE's CPU attention op is several
    times slower, RESULTS.md), and wherever ``--quantize-all-matmuls`` must see its two GEMMs; on
    cuda without it, SDPA stays one ``iree_linalg_ext.attention`` op for IREE's GPU attention
    pipeline (not yet measured against the decomposition on a GPU). ``matmuls``/``fused`` force
    one or the other; ``fused`` with ``--quantize-all-matmuls`` is refused (its GEMMs would stay
    in high precision without a word)."""
    if options.attention not in ATTENTION_MODES:
        raise QmlirError(
            f"unknown attention mode '{options.attention}' (known: {', '.join(ATTENTION_MODES)})"
        )
    if options.attention == "fused":
        if options.quantize_all_matmuls:
            raise QmlirError(
                "--attention fused keeps SDPA as one op whose GEMMs --quantize-all-matmuls "
                "cannot quantize; use --attention matmuls (or auto)"
            )
        return False
    if options.attention == "matmuls":
        return True
    return not options.target.is_cuda or options.quantize_all_matmuls


def check_decode_gemv(mode: str) -> str:
    if mode not in DECODE_GEMV_MODES:
        raise QmlirError(f"decode_gemv '{mode}' is not one of {', '.join(DECODE_GEMV_MODES)}")
    return mode
