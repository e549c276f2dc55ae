"""The compile of a training step, one stage per line: capture (the gradients, and the
optimizer's update, ``training_capture.py``) → import (``@main``, ``@qmlir.apply_update``) →
the core (``core.py``), with training-gemms before the recipe pass and the state held in the
module after it → lower → IREE. The result is a :class:`TrainingStep`, whose call runs both
functions.

The recipe passes are the inference compile's; ``training-gemms`` tells them
which matmuls are a linear's fprop, dgrad and wgrad and which operands are parameters and
gradients. Parameters are no constants here: every operand is quantized every step, from its
f32 source; only frozen weights are folded at compile time. ``dump_ir`` writes the same four
stages as an inference compile.
"""

from __future__ import annotations

from typing import Any

from iree.compiler import ir

from compiler.frontend.importer import import_graphs
from compiler.frontend.input_roles import input_roles
from compiler.frontend.model_source import ModelSource
from compiler.frontend.optimizers import OptimizerOptions
from compiler.frontend.training_capture import CapturedStep, capture_training_step
from compiler.pipeline.core import compile_core
from compiler.pipeline.describe import artifact_metadata, described_signature
from compiler.pipeline.options import CompileOptions, Progress, gemm_operand_type
from compiler.pipeline.pass_runner import run_pass
from compiler.runtime import TrainingStep
from compiler.runtime.metadata import ArtifactMetadata, Layer, NamedShape, Training
from passes.base.abi import APPLY_UPDATE
from passes.base.errors import QmlirError
from passes.hold_training_state import HoldTrainingState
from passes.probe_gemms import ProbeGemms, probe_entries
from passes.training_gemms import TrainingGemms

# recipes whose training rules qmlir does not implement yet, and why
UNTRAINED_RECIPES = {
    "nvfp4": "its training rules: 16x16 weight blocks, stochastic rounding of gradients, a random "
    "Hadamard transform of the wgrad operands, are not implemented",
    "mxfp4": "FP4 training needs stochastic rounding of gradients, which qmlir does not implement",
}


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
    gemm = gemm_operand_type(options, options.target.cpu)
    note("capture")
    step = capture_training_step(source.module, source.example_inputs, optimizer)
    roles = input_roles(step.program)
    note("import")
    text = import_graphs({"main": step.graph, APPLY_UPDATE: step.update})
    probed: list[dict[str, Any]] = []  # each probed GEMM, read before probe-gemms runs

    def mark_gemms(module: ir.Module) -> None:
        """Which matmuls are a linear's fprop, dgrad and wgrad; which operands are parameters
        and gradients."""
        run_pass(TrainingGemms(tuple(step.parameters)), module)

    def hold_state(module: ir.Module) -> None:
        """The parameters and the optimizer's state held in the module (and the probes)."""
        if probes:
            probed.extend(probe_entries(module))
            run_pass(ProbeGemms(), module)
        state = HoldTrainingState(tuple(step.state), tuple(step.parameters), tuple(step.initial))
        run_pass(state, module)

    def describe(module: ir.Module, layers: tuple[Layer, ...]) -> ArtifactMetadata:
        signature = described_signature(module, roles)
        training = training_metadata(step, optimizer, probed if probes else None)
        return artifact_metadata(
            source.name, options, module, layers, signature, gemm, training=training
        )

    with ir.Context():
        module = ir.Module.parse(text)
        artifact = compile_core(
            module,
            options,
            gemm,
            describe,
            note,
            before_recipe=mark_gemms,
            after_recipe=hold_state,
        )
        return TrainingStep(artifact)


def training_metadata(
    step: CapturedStep, optimizer: OptimizerOptions, probes: list[dict[str, Any]] | None
) -> Training:
    shapes = [tuple(value.shape) for value in step.initial]
    count = len(step.parameters)
    return Training(
        optimizer.to_dict(),
        tuple(NamedShape(n, s) for n, s in zip(step.parameters, shapes[:count], strict=True)),
        tuple(NamedShape(n, s) for n, s in zip(step.optimizer_state, shapes[count:], strict=True)),
        None if probes is None else tuple(probes),
    )


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
                f"recipe '{recipe.name}' cannot compile a training step yet "
                f"({UNTRAINED_RECIPES[recipe.name]})"
            )
