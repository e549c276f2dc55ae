"""Stage 1, export: ``torch.export`` with static shapes, ATen ops kept as they are.

``run_decompositions({})`` lowers to inference ATen IR without decomposing anything, so
``aten.linear``/``matmul`` survive in their dtypes for the recipe pass.
"""

from __future__ import annotations

import warnings

import torch

from compiler.model_source import ModelSource, _first
from passes.errors import QmlirError


def export_model(source: ModelSource) -> torch.export.ExportedProgram:
    model = source.module.eval()
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch's own deprecation chatter
            if source.program is not None:
                return source.program.run_decompositions({})
            program = torch.export.export(model, source.example_inputs, strict=False)
            return program.run_decompositions({})
    except Exception as e:
        raise QmlirError(f"torch.export rejected the model: {_first(e)}") from e
