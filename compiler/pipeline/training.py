"""The compile of a training step, one stage per line: capture (the gradients, and the
optimizer's update, ``training_capture.py``) → import (``@main``, ``@qmlir.apply_update``) →
training-gemms → recipe → hold the state in the module → lower → IREE. The result is a
:class:`TrainingStep`, whose call runs both functions.

The recipe passes are the inference compile's (``pipeline.py``); ``training-gemms`` tells them
which matmuls are a linear's fprop, dgrad and wgrad and which operands are parameters and
gradients. Parameters are no constants here: every operand is quantized every step, from its
f32 source; only frozen weights are folded at compile time. ``dump_ir`` writes the same four
stages as an inference compile.
"""

from __future__ import annotations

from iree.compiler import ir

from compiler.frontend.importer import import_graphs
from compiler.frontend.input_roles import input_roles
from compiler.frontend.model_source import ModelSource
from compiler.frontend.optimizers import OptimizerOptions
from compiler.frontend.training_capture import CapturedStep, capture_training_step
from compiler.pipeline.cpu_target import DEFAULT_CPU, resolve_cpu
from compiler.pipeline.inference import (
    CompileOptions,
    Progress,
    build_metadata,
    check_quantized,
    describe_inputs,
    dump_stage,
    gemm_operand_type,
    layer_map,
    lower_and_compile,
)
from compiler.pipeline.layer_globs import check_globs, matmul_layer_names
from compiler.runtime import TrainingStep
from passes.base.abi import APPLY_UPDATE
from passes.base.errors import QmlirError
from passes.expose_scaling_state import ExposeScalingState
from passes.fold_constant_quantize import FoldConstantQuantize
from passes.fold_weight_views import FoldWeightViews
from passes.gemm_operands import GemmOperands
from passes.hold_training_state import HoldTrainingState
from passes.host.flags import target_flags
from passes.probe_gemms import ProbeGemms, probe_entries
from passes.quantize_matmuls import QuantizeMatmuls
from passes.training_gemms import TrainingGemms

# recipes whose training rules qmlir does not implement yet (NVFP4: 16x16 weight blocks,
# stochastic rounding and a random Hadamard transform of the wgrad operands)
UNTRAINED_RECIPES = ("nvfp4",)


def compile_training_model(
    source: ModelSource,
    options: CompileOptions,
    optimizer: OptimizerOptions,
    progress: Progress | None = None,
    probes: bool = False,
) -> TrainingStep:
    """``probes``: the test hook (``passes/probe_gemms.py``): the step keeps each quantized
    GEMM's operands, read by ``TrainingStep.probes()``."""
    note = progress or (lambda stage: None)
    _check_trainable(source, options)
    target_flags(options.target, options.cuda_arch, options.cpu)
    cpu = resolve_cpu(options.cpu or DEFAULT_CPU) if options.target == "llvm-cpu" else None
    gemm = gemm_operand_type(options, cpu)
    note("capture")
    step = capture_training_step(source.module, source.example_inputs, optimizer)
    roles = input_roles(step.program)
    note("import")
    text = import_graphs({"main": step.graph, APPLY_UPDATE: step.update})
    with ir.Context():
        module = ir.Module.parse(text)
        dump_stage(options, "01-import", module)
        note("recipe")
        FoldWeightViews().apply(module)  # a frozen weight's views: a literal (a weight)
        TrainingGemms(tuple(step.parameters)).apply(module)
        globs = [glob for glob, _ in options.layer_recipes]
        check_globs(options.exclude, globs, matmul_layer_names(module))
        QuantizeMatmuls(
            options.recipe, options.quantize_all_matmuls, options.exclude, options.layer_recipes
        ).apply(module)
        probed = probe_entries(module) if probes else []
        if probes:
            ProbeGemms().apply(module)
        HoldTrainingState(tuple(step.state), tuple(step.parameters), tuple(step.initial)).apply(
            module
        )
        ExposeScalingState().apply(module)
        GemmOperands(gemm).apply(module)
        dump_stage(options, "02-recipe", module)
        layers = layer_map(module)
        check_quantized(options, layers)
        # frozen weights: quantized at compile time, after gemm-operands read their scale chains
        FoldConstantQuantize().apply(module)
        dump_stage(options, "03-fold-weights", module)
        metadata = build_metadata(source, options, module, layers)
        describe_inputs(metadata["signature"]["inputs"], roles)
        metadata["cpu"] = cpu
        metadata["gemm_operands"] = gemm
        metadata["training"] = training_metadata(step, optimizer)
        if probes:
            metadata["training"]["probes"] = probed
        return TrainingStep(lower_and_compile(module, options, metadata, note))


def training_metadata(step: CapturedStep, optimizer: OptimizerOptions) -> dict[str, object]:
    shapes = [list(value.shape) for value in step.initial]
    count = len(step.parameters)
    return {
        "optimizer": optimizer.to_dict(),
        "parameters": [
            {"name": n, "shape": s} for n, s in zip(step.parameters, shapes[:count], strict=True)
        ],
        "optimizer_state": [
            {"name": n, "shape": s}
            for n, s in zip(step.optimizer_state, shapes[count:], strict=True)
        ],
    }


def _check_trainable(source: ModelSource, options: CompileOptions) -> None:
    if source.program is not None:
        raise QmlirError(
            "a training step is compiled from a model in a .py file (file.py:function), not a "
            ".pt2: its backward is traced from the module"
        )
    if source.dynamic_shapes is not None:
        raise QmlirError("a training step is compiled for static shapes (no dynamic_shapes)")
    recipes = [options.recipe, *(r for _, r in options.layer_recipes)]
    for recipe in recipes:
        if recipe.name in UNTRAINED_RECIPES:
            raise QmlirError(
                f"recipe '{recipe.name}' cannot compile a training step yet (its training "
                "rules: 16x16 weight blocks, stochastic rounding of gradients, a random "
                "Hadamard transform of the wgrad operands, are not implemented)"
            )
