"""The whole compile, one stage per line: export → import → recipe → fold weights → lower → IREE.

On cuda, ``fuse-quantize-core`` runs before the lowering: each activation's block quantize chain,
and fp8-delayed's cast with the stored scale plus its amax, becomes one ``fused_quantize`` named
op (one kernel, one read). Weights are quantized on the host either way.

``dump_ir`` writes the module after each MLIR stage (``01-import.mlir`` ... ``04-lower.mlir``;
large constants elided) so a user can read exactly what the recipe did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iree.compiler import ir

from compiler.backend.artifact import embed_metadata, io_signature, public_functions
from compiler.backend.inspection import weight_bytes
from compiler.backend.iree_compile import compile_module
from compiler.frontend.dynamic_dims import dim_names
from compiler.frontend.export import export_model
from compiler.frontend.importer import import_program
from compiler.frontend.input_roles import input_roles, output_dims
from compiler.frontend.model_source import ModelSource
from compiler.pipeline.cpu_target import DEFAULT_CPU, resolve_cpu
from compiler.pipeline.layer_globs import check_globs, matmul_layer_names
from compiler.runtime import CompiledModule
from compiler.runtime.seal import seal
from compiler.version import IREE_VERSION, __version__
from passes.base.errors import QmlirError
from passes.expose_scaling_state import ExposeScalingState, state_globals
from passes.fold_constant_quantize import FoldConstantQuantize
from passes.fold_weight_views import FoldWeightViews
from passes.fuse_quantize_core import FuseQuantizeCore
from passes.gemm_operands import GEMM_OPERAND_TYPES, GemmOperands
from passes.host.flags import target_flags
from passes.ir.dialect import OpKind, decode_kind
from passes.ir.named_ops import (
    GEMM_ATTR,
    LAYER_ATTR,
    callee_name,
    is_named_op_decl,
    symbol_name,
)
from passes.lower_named_ops import LowerNamedOps
from passes.lowering.cuda.targets import DEFAULT_CUDA_ARCH
from passes.quantize_matmuls import (
    KEPT_ATTR,
    RECIPE_ATTR,
    USER_CHOICES,
    WHY_ATTR,
    QuantizeMatmuls,
    layer_name,
)
from passes.recipes import Recipe
from passes.separate_gemm_operands import SeparateGemmOperands

Progress = Callable[[str], None]


@dataclass(frozen=True)
class CompileOptions:
    recipe: Recipe
    target: str = "llvm-cpu"
    quantize_all_matmuls: bool = False
    dump_ir: Path | None = None
    exclude: tuple[str, ...] = ()
    layer_recipes: tuple[tuple[str, Recipe], ...] = ()
    cuda_arch: str | None = None  # --target cuda only; default sm_90
    attention: str = "auto"  # how SDPA is compiled: auto (per target), matmuls or fused
    cpu: str | None = None  # llvm-cpu only: host (default), generic or an LLVM CPU name
    iree_flags: tuple[str, ...] = ()  # passed to iree-compile after qmlir's own (experiments)
    allow_unquantized: bool = False  # a quantizing recipe that quantizes no matmul: no error
    gemm_operands: str = "auto"  # llvm-cpu scaled GEMMs' decoded operands: auto, f32 or bf16

    @property
    def arch(self) -> str | None:
        """The CUDA architecture compiled for (None on llvm-cpu)."""
        return (self.cuda_arch or DEFAULT_CUDA_ARCH) if self.target == "cuda" else None


ATTENTION_MODES = ("auto", "matmuls", "fused")
GEMM_OPERAND_MODES = ("auto", *GEMM_OPERAND_TYPES)


def gemm_operand_type(options: CompileOptions, cpu: dict[str, Any] | None) -> str:
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
        return "bf16" if "avx512bf16" in cpu["features"] else "f32"
    return mode


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
    return options.target == "llvm-cpu" or options.quantize_all_matmuls


def compile_model(
    source: ModelSource, options: CompileOptions, progress: Progress | None = None
) -> CompiledModule:
    note = progress or (lambda stage: None)
    target_flags(options.target, options.cuda_arch, options.cpu)  # refuse a bad target early
    cpu = resolve_cpu(options.cpu or DEFAULT_CPU) if options.target == "llvm-cpu" else None
    as_matmuls = attention_as_matmuls(options)  # and a contradictory attention mode
    gemm = gemm_operand_type(options, cpu)
    note("export")
    program = export_model(source, as_matmuls)
    names = dim_names(source.dynamic_shapes, source.input_names())
    roles, outputs = input_roles(program, names), output_dims(program, names)
    note("import")
    text = import_program(program)
    with ir.Context():
        module = ir.Module.parse(text)
        dump_stage(options, "01-import", module)
        note("recipe")
        globs = [glob for glob, _ in options.layer_recipes]
        check_globs(options.exclude, globs, matmul_layer_names(module))  # a typo is an error
        FoldWeightViews().apply(module)
        QuantizeMatmuls(
            options.recipe, options.quantize_all_matmuls, options.exclude, options.layer_recipes
        ).apply(module)
        ExposeScalingState().apply(module)
        GemmOperands(gemm).apply(module)
        dump_stage(options, "02-recipe", module)
        layers = layer_map(module)
        check_quantized(options, layers)
        note("fold weights")
        FoldConstantQuantize().apply(module)
        dump_stage(options, "03-fold-weights", module)
        weights = weight_bytes(module)
        metadata = build_metadata(source, options, module, layers)
        describe_inputs(metadata["signature"]["inputs"], roles)
        _describe_outputs(metadata["signature"]["outputs"], outputs)
        metadata["attention"] = "matmuls" if as_matmuls else "fused"
        metadata["cpu"] = cpu
        metadata["gemm_operands"] = gemm
        metadata["weights"] = weights
        return CompiledModule(lower_and_compile(module, options, metadata, note))


def lower_and_compile(
    module: ir.Module, options: CompileOptions, metadata: dict[str, Any], note: Progress
) -> bytes:
    """Stages 4 and 5 on a module after its recipe passes: the sealed artifact's bytes."""
    note("lower")
    if options.arch is not None:
        FuseQuantizeCore().apply(module)
    elif separates_gemm_operands(metadata.get("cpu")):
        SeparateGemmOperands().apply(module)
    LowerNamedOps(options.target, options.arch or DEFAULT_CUDA_ARCH).apply(module)
    dump_stage(options, "04-lower", module)
    embed_metadata(module, metadata)
    note("iree compile")
    dynamic = any("dims" in entry for entry in metadata["signature"]["inputs"])
    vmfb = compile_module(
        module, options.target, options.arch, options.cpu, options.iree_flags, dynamic
    )
    return seal(vmfb, metadata)


def separates_gemm_operands(cpu: dict[str, Any] | None) -> bool:
    """Whether an llvm-cpu artifact for ``cpu`` takes ``separate-gemm-operands``: on an AVX-512
    target, where a producer fused into a GEMM operand's pack ran 2-3x slower than apart (MiniLM
    `none` 150 -> 129 ms); not on AVX2 code, where the fused dispatch was no slower and the
    separate pack cost MiniLM and the decoder 4-9% (benchmarks/RESULTS.md)."""
    return cpu is not None and "avx512f" in cpu["features"]


def check_quantized(options: CompileOptions, layers: list[dict[str, str]]) -> None:
    """A quantizing recipe that quantized none of the model's matmuls is an error (unless
    ``allow_unquantized``): a user asking for FP8 must not ship an f32 model without a word.
    Matmuls the user kept (``--exclude``, ``--layer-recipe ...=none``) do not count against it."""
    if not options.recipe.quantizes or options.allow_unquantized or not layers:
        return
    if any(layer["matmul"] == OpKind.SCALED_MATMUL.value for layer in layers):
        return
    kept = [layer["note"] for layer in layers if not layer["note"].startswith(USER_CHOICES)]
    if not kept:
        return
    reasons = ", ".join(f"{n} x {why}" for why, n in Counter(kept).most_common())
    raise QmlirError(
        f"recipe '{options.recipe.name}' quantized none of the model's {len(layers)} matmuls "
        f"({reasons}); --allow-unquantized compiles it in high precision anyway"
    )


def _describe_outputs(outputs: list[dict[str, Any]], dims: list[list[str | None]]) -> None:
    """Each dynamic output dim's expression in the inputs' dim names (``batch``, ``2*seq``)."""
    for entry, names in zip(outputs, dims, strict=False):
        if any(n is not None for n in names):
            entry["dims"] = [None if n is None else {"name": n} for n in names]


def describe_inputs(inputs: list[dict[str, Any]], roles: list[dict[str, Any]]) -> None:
    """Adds each input's name and index range (``compiler/frontend/input_roles.py``) to its
    signature
    entry; ``@main`` takes exactly the program's user inputs, in order."""
    if len(roles) != len(inputs):
        raise QmlirError(
            f"internal: the module takes {len(inputs)} inputs, the program {len(roles)}"
        )
    for entry, role in zip(inputs, roles, strict=True):
        entry.update(role)


def build_metadata(
    source: ModelSource, options: CompileOptions, module: ir.Module, layers: list[dict[str, str]]
) -> dict[str, Any]:
    return {
        "format": "qmlir-artifact/1",
        "qmlir_version": __version__,
        "iree_version": IREE_VERSION,
        "model": source.name,
        "recipe": options.recipe.to_dict(),
        "target": options.target,
        "cuda_arch": options.arch,
        "quantize_all_matmuls": options.quantize_all_matmuls,
        "exclude": list(options.exclude),
        "layer_recipes": [[glob, r.to_dict()] for glob, r in options.layer_recipes],
        "signature": io_signature(module),
        "functions": public_functions(module),
        "layers": layers,
        "scaling_state": scaling_state_entries(module),
    }


def scaling_state_entries(module: ir.Module) -> list[dict[str, Any]]:
    """The state globals in the order ``qmlir.get_scaling_state`` returns them."""
    out = []
    for g in state_globals(module):
        attrs = ir.DictAttr(g.attributes["qmlir.state"])
        info = ir.ShapedType(ir.TypeAttr(g.attributes["type"]).value)
        out.append(
            {
                "key": ir.StringAttr(attrs["key"]).value,
                "layer": ir.StringAttr(attrs["layer"]).value,
                "kind": ir.StringAttr(attrs["kind"]).value,
                "shape": list(info.shape),
            }
        )
    return out


def layer_map(module: ir.Module) -> list[dict[str, str]]:
    """Each matmul after the recipe pass: its layer, its recipe (``none``: high precision), why."""
    out: list[dict[str, str]] = []
    scaled = {
        symbol_name(op.operation)
        for op in module.body.operations
        if is_named_op_decl(op.operation) and decode_kind(op.operation) is OpKind.SCALED_MATMUL
    }

    def visit(op: ir.Operation) -> ir.WalkResult:
        attrs = op.attributes
        entry: dict[str, str] | None = None
        if op.name == "func.call" and callee_name(op) in scaled:
            entry = {
                "layer": ir.StringAttr(attrs[LAYER_ATTR]).value if LAYER_ATTR in attrs else "",
                "matmul": OpKind.SCALED_MATMUL.value,
                "recipe": ir.StringAttr(attrs[RECIPE_ATTR]).value,
                "note": ir.StringAttr(attrs[WHY_ATTR]).value,
            }
        elif KEPT_ATTR in attrs:
            reason = ir.StringAttr(attrs[KEPT_ATTR]).value
            entry = {"layer": layer_name(op), "matmul": op.name, "recipe": "none", "note": reason}
        if entry is not None:
            if GEMM_ATTR in attrs:  # a training step's fprop, dgrad or wgrad
                entry["gemm"] = ir.StringAttr(attrs[GEMM_ATTR]).value
            out.append(entry)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return out


def dump_stage(options: CompileOptions, stage: str, module: ir.Module) -> None:
    if options.dump_ir is None:
        return
    options.dump_ir.mkdir(parents=True, exist_ok=True)
    text = module.operation.get_asm(enable_debug_info=True, large_elements_limit=16)
    (options.dump_ir / f"{stage}.mlir").write_text(text)
