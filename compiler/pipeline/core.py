"""The stages every compile shares, from the imported module to the sealed artifact:
recipe → fold weights → lower → IREE. ``inference.py`` and ``training.py`` each build their
module (export or capture, then import) and call :func:`compile_core`; a training step adds its
own passes through the two hooks, before and after the recipe pass.

Every pass runs through ``pass_runner.run_pass`` (a failing one saves its input IR and names
the command that reproduces it). ``dump_ir`` writes the module after each stage
(``01-import.mlir`` ... ``04-lower.mlir``; large constants elided).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from iree.compiler import ir

from compiler.backend.artifact import embed_metadata
from compiler.backend.iree_compile import compile_module
from compiler.backend.parameter_file import write_parameter_file
from compiler.pipeline.describe import check_quantized, layer_map
from compiler.pipeline.layer_globs import check_globs, matmul_layer_names
from compiler.pipeline.options import CompileOptions, Progress
from compiler.pipeline.pass_runner import run_pass
from compiler.runtime.metadata import ArtifactMetadata, Layer, Parameters
from compiler.runtime.seal import seal
from passes.assume_multiples import AssumeMultiples
from passes.base.errors import QmlirError
from passes.base.target import Target
from passes.batched_contractions import BatchedContractions
from passes.bf16_decode_gemv import Bf16DecodeGemv
from passes.bf16_prefill_gemm import Bf16PrefillGemm
from passes.check_indices import CheckIndices
from passes.compact_block_scales import CompactBlockScales
from passes.decode_attention import DecodeAttention
from passes.decode_gemv import DecodeGemv, decode_step_reads_codes
from passes.dynamic_gemm import DynamicGemm
from passes.expose_scaling_state import ExposeScalingState
from passes.externalize_weights import ExternalizeWeights
from passes.fold_constant_quantize import FoldConstantQuantize
from passes.fold_weight_views import FoldWeightViews
from passes.fuse_quantize_core import FuseQuantizeCore
from passes.gemm_operands import GemmOperands
from passes.host.flags import HOIST_ALL_FLAG, PACK_PER_CALL_FLAG
from passes.int_fp4_gemm import IntFp4Gemm
from passes.ir.dialect import GemvIsa
from passes.ir.parameters import Reader
from passes.kv_cache_codes import KvCacheCodes
from passes.lower_named_ops import LowerNamedOps
from passes.lowering.cpu.gemv import gemv_isa
from passes.prefill_attention import PrefillAttention
from passes.prefill_gemm import PrefillGemm
from passes.quantize_matmuls import QuantizeMatmuls
from passes.round_gemm_outputs import RoundGemmOutputs
from passes.separate_gemm_operands import SeparateGemmOperands
from passes.separate_rotate_half import SeparateRotateHalf
from passes.slice_cache_writes import SliceCacheWrites
from passes.unshare_scatter_inits import UnshareScatterInits
from passes.widen_bf16_matmuls import WidenBf16Matmuls

Hook = Callable[[ir.Module], None]  # a compile's own stage between the core's (passes: run_pass)
Describe = Callable[[ir.Module, tuple[Layer, ...]], ArtifactMetadata]


def _nothing(module: ir.Module) -> None:
    pass


def compile_core(
    module: ir.Module,
    options: CompileOptions,
    gemm_operands: str,
    describe: Describe,
    note: Progress,
    *,
    before_recipe: Hook = _nothing,
    after_recipe: Hook = _nothing,
    after_weights: Hook = _nothing,
    weights: Reader | None = None,
    stored: Any = None,
) -> bytes:
    """The sealed artifact of an imported ``module``. ``gemm_operands``: the llvm-cpu scaled
    GEMMs' operand type (``options.gemm_operand_type``); ``describe``: the artifact's record,
    from the module after its weights are folded and its layers (called once). ``weights``:
    where a module imported with its weights outside (placeholders) reads them; its parameter
    file is written to ``options.parameters``; ``stored``: a quantized checkpoint's FP8 weights
    (``compiler/frontend/prequantized.py``), written as stored rather than quantized.
    ``after_weights``: runs on the module after its weights are folded, before it is described
    (a generator's decode function, ``passes/add_decode_step.py``)."""
    dump_stage(options, "01-import", module)
    note("recipe")
    run_pass(FoldWeightViews(), module)  # a frozen weight's views: a literal (a weight)
    before_recipe(module)
    if not options.target.is_cuda:  # a prefill's cache positions: a copy at an offset
        run_pass(SliceCacheWrites(), module)
    run_pass(CheckIndices(), module)  # indices the model computes: checked at the call
    run_pass(UnshareScatterInits(), module)  # IREE: scatters into one shared fill miscompile
    run_pass(KvCacheCodes(), module)  # an FP8 KV cache's quantize and dequantize
    globs = [glob for glob, _ in options.layer_recipes]
    names = matmul_layer_names(module)
    # a module of the model that the compiled function never runs (dead code): its scale dropped
    scales = tuple(
        (layer, v)
        for layer, v in options.activation_scales
        if layer in names or layer not in options.model_layers
    )
    options = dataclasses.replace(options, activation_scales=scales)
    scaled = [layer for layer, _ in scales]
    check_globs(options.exclude, globs, names, scaled)  # a typo: an error
    run_pass(
        QuantizeMatmuls(
            options.recipe,
            options.quantize_all_matmuls,
            options.exclude,
            options.layer_recipes,
            options.routers,
            options.unquantized,
            options.activation_scales,
        ),
        module,
    )
    after_recipe(module)
    run_pass(ExposeScalingState(), module)
    run_pass(GemmOperands(gemm_operands), module)
    if not options.target.is_cuda and gemm_operands == "f32":
        run_pass(WidenBf16Matmuls(), module)  # bf16 GEMMs without bf16 instructions: f32 ones
    # the layers as the recipe left them: the CPU kernels below replace some kept matmuls
    # (attention's), which are still reported as such
    layers = layer_map(module)
    isa = decode_gemv_isa(options.target)
    if options.decode_gemv == "auto" and isa is not None:
        # before the weights are folded: a block scale's chain proves it a power of two
        run_pass(DecodeGemv(isa.value), module)
        run_pass(Bf16DecodeGemv(), module)  # bf16 weights widen-bf16-matmuls widened
        if multiplies_bf16_weights_as_stored(options, weights is not None, module):
            run_pass(Bf16PrefillGemm(), module)  # many rows over bf16 weights as stored
        run_pass(DecodeAttention(), module)  # one query position over the cache as stored
        run_pass(PrefillAttention(isa.value), module)  # a prefill's, over tiles of keys
    if not options.target.is_cuda:  # the CPU's GEMMs read block scales unswizzled
        run_pass(CompactBlockScales(), module)
    dump_stage(options, "02-recipe", module)
    check_quantized(options, layers)
    note("fold weights")
    # weights quantized at compile time, after gemm-operands read their scale chains
    run_pass(FoldConstantQuantize(), module)
    parameters = None
    if weights is not None:
        parameters = write_parameters(module, options, weights, note, stored)
    after_weights(module)
    dump_stage(options, "03-fold-weights", module)
    metadata = dataclasses.replace(describe(module, layers), parameters=parameters)
    return lower_and_compile(module, options, metadata, note)


def write_parameters(
    module: ir.Module, options: CompileOptions, weights: Reader, note: Progress, stored: Any = None
) -> Parameters:
    """Plans the module's weights as parameters (``externalize-weights``) and writes the
    parameter file to ``options.parameters``, one weight at a time."""
    assert options.parameters is not None
    externalize = ExternalizeWeights()
    run_pass(externalize, module)
    note("quantize code")
    try:
        written = write_parameter_file(
            externalize.plan,
            weights,
            options.parameters,
            options.progress_bytes,
            stored,
            lambda: note("write weights"),
        )
    except OSError as e:
        raise QmlirError(f"cannot write '{options.parameters}': {e.strerror or e}") from e
    return Parameters(options.parameters.name, written.nbytes, written.sha256, written.tensors)


def lower_and_compile(
    module: ir.Module, options: CompileOptions, metadata: ArtifactMetadata, note: Progress
) -> bytes:
    """Stages 4 and 5 on a module after its recipe passes: the sealed artifact's bytes."""
    note("lower")
    target = options.target
    if target.is_cuda:
        run_pass(FuseQuantizeCore(), module)
    else:
        # every weight GEMM's activation apart from its pack on AVX-512; in AVX2 code those of a
        # dynamic number of rows
        run_pass(SeparateGemmOperands(dynamic_only=not separates_gemm_operands(target)), module)
        run_pass(SeparateRotateHalf(), module)  # rotary embeddings' concat apart from its users
    # an auto "decoded" keeps no decoded copies where the decode step reads none (decode-gemv)
    keeps_decoded = not (options.pack_weights_auto and decode_step_reads_codes(module))
    external = metadata.parameters is not None
    if reads_codes_per_call(options, external, keeps_decoded):
        run_pass(PrefillGemm(), module)  # many rows over the weights' codes as stored
        run_pass(RoundGemmOutputs(), module)  # their rounding to bf16 in their stores
    decoded_at_load = options.pack_weights in DECODED_MODES and external and keeps_decoded
    if runs_int_fp4_gemms(options):  # FP4 many-row GEMMs in integers (AVX2 code)
        run_pass(IntFp4Gemm(stored=lays_out_per_call(options, external, decoded_at_load)), module)
    if options.pack_weights == "panels" and runs_gemm_kernels(options):
        run_pass(DynamicGemm(), module)  # dynamic rows: decoded weights as the bf16 GEMM's panels
    dynamic = any("dims" in entry for entry in metadata.signature["inputs"])
    if batches_contractions(target, dynamic):  # attention's matmuls kept from data tiling
        run_pass(BatchedContractions(), module)
    if dynamic:  # sizes computed as multiples (a padded key length) told to IREE as such
        run_pass(AssumeMultiples(), module)
    run_pass(LowerNamedOps(target), module)
    dump_stage(options, "04-lower", module)
    embed_metadata(module, metadata)
    note("iree compile")
    flags = options.iree_flags
    if options.pack_weights == "call" and not target.is_cuda:
        flags = (PACK_PER_CALL_FLAG, *flags)
    elif decoded_at_load and not target.is_cuda:
        flags = (HOIST_ALL_FLAG, *flags)  # what an inline artifact's "load" does already
    return seal(compile_module(module, target, flags, dynamic, external), metadata)


# the --pack-weights modes that keep a parameter file's FP8/FP4 weights decoded, once, at load
DECODED_MODES = ("decoded", "panels")


def decode_gemv_isa(target: Target) -> GemvIsa | None:
    """The variant of the decoding matrix-vector product (``passes/decode_gemv.py``) an artifact
    for ``target`` runs: llvm-cpu code for a CPU with its instructions (AVX512-BF16 and -VBMI,
    else AVX2 with FMA and F16C); None for any other target."""
    return None if target.is_cuda else gemv_isa(target.features)


def runs_gemm_kernels(options: CompileOptions) -> bool:
    """Whether an artifact may take the hand-written GEMMs of several rows (``prefill-gemm``,
    ``bf16-prefill-gemm``): llvm-cpu code for a CPU with decode-gemv's AVX-512 variant
    (AVX512-BF16 and -VBMI), unless ``decode_gemv="off"``."""
    return options.decode_gemv == "auto" and decode_gemv_isa(options.target) is GemvIsa.AVX512_BF16


def runs_int_fp4_gemms(options: CompileOptions) -> bool:
    """Whether an artifact's many-row FP4 GEMMs (nvfp4, mxfp4) may run in integers
    (``int-fp4-gemm``): llvm-cpu code for a CPU with decode-gemv's AVX2 variant and not its
    AVX-512 one (where IREE's bf16 GEMM runs them), unless ``decode_gemv="off"``; B laid out at
    load or, per :func:`lays_out_per_call`, inside the GEMM."""
    return options.decode_gemv == "auto" and decode_gemv_isa(options.target) is GemvIsa.AVX2


def lays_out_per_call(options: CompileOptions, external: bool, decoded_at_load: bool) -> bool:
    """Whether an artifact's integer FP4 GEMMs (``int-fp4-gemm``) read B's codes as stored,
    laying them out inside the GEMM each call: where IREE would not lay them out once, at load
    (a parameter file's weights without decoded copies, ``pack_weights="call"``), as a separate
    layout made each call cost a Mistral-like model's 5-token call 1.45x the data-tiled GEMM's
    time (benchmarks/RESULTS.md)."""
    return options.pack_weights == "call" or (external and not decoded_at_load)


def reads_codes_per_call(options: CompileOptions, external: bool, keeps_decoded: bool) -> bool:
    """Whether an artifact's many-row FP8 GEMMs read the weights' codes as stored
    (``prefill-gemm``): on a CPU that runs decode-gemv's AVX-512 variant (unless
    ``decode_gemv="off"``), where a call would otherwise decode and pack each weight, as no
    decoded copy is kept (weights in a parameter file without ``decoded`` copies, or
    ``pack_weights="call"``)."""
    if not runs_gemm_kernels(options):
        return False
    decoded = options.pack_weights in DECODED_MODES and keeps_decoded
    return options.pack_weights == "call" or (external and not decoded)


def multiplies_bf16_weights_as_stored(
    options: CompileOptions, external: bool, module: ir.Module
) -> bool:
    """Whether an artifact's many-row bf16 linears multiply the bf16 weights as stored
    (``bf16-prefill-gemm``) rather than IREE's data-tiled GEMM over a packed copy of each: on a
    CPU that runs decode-gemv's AVX-512 variant (unless ``decode_gemv="off"``), where no packed
    copy is wanted: ``pack_weights="call"`` (which would pack each weight in every call), or an
    ``"auto"`` generator whose weights are in a parameter file and whose decode step reads every
    weight as stored (a packed copy would only speed up the prefill, at twice the weights'
    memory: an explicit ``"load"`` or ``"decoded"`` keeps it)."""
    if not runs_gemm_kernels(options):
        return False
    if options.pack_weights == "call":
        return True
    return options.pack_weights_auto and external and decode_step_reads_codes(module)


def batches_contractions(target: Target, dynamic: bool) -> bool:
    """Whether an artifact takes ``batched-contractions`` (attention's matmuls as contractions
    IREE does not data-tile): one with dynamic dims in llvm-cpu AVX2 code, where MiniLM's
    dynamic artifact ran 724 -> 283 ms with it (benchmarks/RESULTS.md). Not on an AVX-512
    target, where it has not been measured (data tiling made that artifact faster there)."""
    return dynamic and not target.is_cuda and not target.has_avx512


def separates_gemm_operands(target: Target) -> bool:
    """Whether an llvm-cpu artifact for ``target`` takes ``separate-gemm-operands`` for every
    weight GEMM: on an AVX-512 target, where a producer fused into a GEMM operand's pack ran
    2-3x slower than apart (MiniLM `none` 150 -> 129 ms); in AVX2 code, where the fused dispatch
    was no slower and the separate pack cost MiniLM and the decoder 4-9% (benchmarks/RESULTS.md),
    only for the GEMMs with a dynamic number of rows, whose fused dispatch IREE failed to
    compile."""
    return target.has_avx512


def dump_stage(options: CompileOptions, stage: str, module: ir.Module) -> None:
    if options.dump_ir is None:
        return
    options.dump_ir.mkdir(parents=True, exist_ok=True)
    text = module.operation.get_asm(enable_debug_info=True, large_elements_limit=16)
    (options.dump_ir / f"{stage}.mlir").write_text(text)
