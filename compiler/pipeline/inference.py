"""The inference compile, one stage per line: export → import → the core (recipe → fold weights
→ lower → IREE, ``core.py``).

On cuda, ``fuse-quantize-core`` runs before the lowering: each activation's block quantize chain,
and fp8-delayed's cast with the stored scale plus its amax, becomes one ``fused_quantize`` named
op (one kernel, one read). Weights are quantized on the host either way.
"""

from __future__ import annotations

from iree.compiler import ir

from compiler.backend.inspection import weight_bytes
from compiler.frontend.dynamic_dims import dim_names
from compiler.frontend.export import export_model
from compiler.frontend.importer import import_program
from compiler.frontend.input_roles import input_roles, output_dims
from compiler.frontend.model_source import ModelSource
from compiler.pipeline.core import compile_core
from compiler.pipeline.describe import artifact_metadata, described_signature
from compiler.pipeline.options import (
    CompileOptions,
    Progress,
    attention_as_matmuls,
    gemm_operand_type,
)
from compiler.runtime import CompiledModule
from compiler.runtime.metadata import ArtifactMetadata, Layer


def compile_model(
    source: ModelSource, options: CompileOptions, progress: Progress | None = None
) -> CompiledModule:
    note = progress or (lambda stage: None)
    as_matmuls = attention_as_matmuls(options)  # a contradictory attention mode, before export
    gemm = gemm_operand_type(options, options.target.cpu)
    note("export")
    program = export_model(source, as_matmuls)
    names = dim_names(source.dynamic_shapes, source.input_names())
    roles, outputs = input_roles(program, names), output_dims(program, names)
    note("import")
    text = import_program(program)

    def describe(module: ir.Module, layers: tuple[Layer, ...]) -> ArtifactMetadata:
        return artifact_metadata(
            source.name,
            options,
            module,
            layers,
            described_signature(module, roles, outputs),
            gemm,
            attention="matmuls" if as_matmuls else "fused",
            weights=weight_bytes(module),
        )

    with ir.Context():
        module = ir.Module.parse(text)
        return CompiledModule(compile_core(module, options, gemm, describe, note))
