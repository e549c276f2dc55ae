"""The inference compile, one stage per line: export → import → the core (recipe → fold weights
→ lower → IREE, ``core.py``).

On cuda, ``fuse-quantize-core`` runs before the lowering: each activation's block quantize chain,
and fp8-delayed's cast with the stored scale plus its amax, becomes one ``fused_quantize`` named
op (one kernel, one read). Weights are quantized on the host either way.
"""

from __future__ import annotations

import dataclasses
import shutil
import warnings
from pathlib import Path

from iree.compiler import ir

from compiler.backend.artifact import public_functions
from compiler.backend.inspection import weight_bytes
from compiler.backend.scratch import params_dir
from compiler.frontend.checkpoint import materialize
from compiler.frontend.dynamic_dims import dim_names
from compiler.frontend.export import export_model
from compiler.frontend.importer import import_program, lift_mutated_buffers
from compiler.frontend.input_roles import input_roles, output_dims
from compiler.frontend.model_source import ModelSource
from compiler.frontend.moe import moe_routers
from compiler.frontend.output_tree import output_structure
from compiler.frontend.weights import chain_readers, tensor_reader
from compiler.pipeline.core import compile_core
from compiler.pipeline.describe import artifact_metadata, described_signature
from compiler.pipeline.options import (
    CompileOptions,
    Progress,
    attention_as_matmuls,
    check_target_recipes,
    check_weights,
    experts_form,
    gemm_operand_type,
    resolve_pack_weights,
)
from compiler.pipeline.pass_runner import run_pass
from compiler.runtime import CompiledModule, Generator
from compiler.runtime.metadata import ArtifactMetadata, Generation, HeldBuffer, Layer
from compiler.runtime.parameters import SUFFIX
from passes.add_decode_step import AddDecodeStep, RefinementFailed
from passes.base.abi import DECODE, ENTRY
from passes.base.errors import QmlirError
from passes.hold_buffers import HoldBuffers, buffer_types
from passes.recipes import get_recipe


class DecodeStepWarning(UserWarning):
    """A generator compiled without ``@decode`` (its decode steps run ``@main``)."""


def compile_model(
    source: ModelSource,
    options: CompileOptions,
    progress: Progress | None = None,
    scratch: Path | None = None,
    parameters_name: str = f"model{SUFFIX}",
    generation: Generation | None = None,
) -> CompiledModule:
    """``options.weights="external"``: the weights go to a parameter file, read one at a time
    from the model's state (or the checkpoint a folder holds, ``source.reader``), written to
    ``options.parameters`` or else to a ``qmlir-<pid>-params-*`` directory in ``scratch`` (the
    temporary directory by default) that the returned module owns until it is saved, named
    ``parameters_name`` (the name the seal records); pass the output's directory and the name
    saving gives it, and saving is a rename. Buffers the model mutates are held in the module
    (``passes/hold_buffers.py``); ``generation`` records a generator's (``generation.py``)."""
    note = progress or (lambda stage: None)
    check_weights(options)
    check_target_recipes(options)
    external = options.weights == "external"
    stored = source.prequantized
    if stored is not None:
        if not external:
            raise QmlirError(stored.inline_refusal())
        stored_recipes = tuple(
            (layer, get_recipe(name, recipe_options))
            for layer, name, recipe_options in stored.layer_recipes
        )
        options = dataclasses.replace(
            options,
            unquantized=stored.unquantized,
            activation_scales=stored.activation_scales + options.activation_scales,
            layer_recipes=stored_recipes + options.layer_recipes,
        )
    if options.activation_scales:
        layers = frozenset(name for name, _ in source.module.named_modules())
        options = dataclasses.replace(options, model_layers=layers)
    as_matmuls = attention_as_matmuls(options)  # a contradictory attention mode, before export
    gemm = gemm_operand_type(options, options.target.cpu)
    weights = sum(p.numel() for p in source.module.parameters())  # a folder's: on meta
    decoded = weights * (2 if gemm == "bf16" else 4)  # llvm-cpu's decoded copies
    options = resolve_pack_weights(options, generation is not None, decoded)
    if not external and source.reader is not None:
        materialize(source)  # a checkpoint folder's weights inline: the whole model in memory
    note("export")
    program = export_model(source, as_matmuls, experts_form(options))
    options = dataclasses.replace(options, routers=moe_routers(source.module))
    names = dim_names(source.dynamic_shapes, source.input_names())
    roles, outputs = input_roles(program, names), output_dims(program, names)
    held = lift_mutated_buffers(program)  # @main's first arguments and results
    outputs = outputs[len(held.outputs) :]
    tree, output_names = output_structure(program, len(outputs))
    note("import")
    text = import_program(program, external=external)
    reader = None
    owned = None
    if external:
        state = {**program.constants, **program.state_dict}
        reader = chain_readers(source.reader, state) if source.reader else tensor_reader(state)
        if options.parameters is None:
            owned = params_dir(scratch)
            options = dataclasses.replace(options, parameters=owned / parameters_name)

    def hold_buffers(module: ir.Module) -> None:
        """The buffers the model mutates (a KV cache, a counter) held in the module."""
        functions = (ENTRY, DECODE) if DECODE in public_functions(module) else (ENTRY,)
        run_pass(HoldBuffers(held.inputs, held.outputs, functions, held.initial), module)

    def add_decode(module: ir.Module) -> None:
        """A generator's decode function: ``@main`` with one token a call (where the model's
        ops allow its shapes to be refined; else a warning, and the steps run ``@main``)."""
        if generation is None:
            return
        try:
            run_pass(AddDecodeStep(decode=DECODE, arg=len(held.inputs)), module)
        except RefinementFailed as e:
            warnings.warn(f"{e}; the decode steps run @main", DecodeStepWarning, stacklevel=2)

    def describe(module: ir.Module, layers: tuple[Layer, ...]) -> ArtifactMetadata:
        record = artifact_metadata(
            source.name,
            options,
            module,
            layers,
            described_signature(module, roles, outputs, tree, output_names),
            gemm,
            attention="matmuls" if as_matmuls else "fused",
            weights=weight_bytes(module),
        )
        types = buffer_types(module)
        buffers = tuple(
            HeldBuffer(name, tuple(types[name].shape), dtype, initial is None)
            for name, dtype, initial in zip(held.inputs, held.dtypes, held.initial, strict=True)
        )
        return dataclasses.replace(record, buffers=buffers, generation=generation)

    with ir.Context():
        module = ir.Module.parse(text)
        try:
            artifact = compile_core(
                module,
                options,
                gemm,
                describe,
                note,
                after_recipe=hold_buffers,
                before_recipe=add_decode,
                weights=reader,
                stored=stored,
            )
        except BaseException:
            if owned is not None:
                shutil.rmtree(owned, ignore_errors=True)
            raise
    kind = CompiledModule if generation is None else Generator
    return kind(artifact, parameters=options.parameters, owned=owned)
