"""Stage 1, export: ``torch.export`` with static shapes, ATen ops kept as they are.

``run_decompositions`` lowers to inference ATen IR decomposing only ``aten.new_ones`` and
``aten.__and__`` (transformers' attention-mask code would otherwise leave a 0-d bool literal that
IREE cannot legalize) and ``aten.diff`` (transformers' packed-sequence check on position ids; no
lowering in torch-mlir), so ``aten.linear``/``matmul`` survive in their dtypes for the recipe pass.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Iterator

import torch
from torch._decomp import core_aten_decompositions

from compiler.model_source import ModelSource
from passes.base.errors import QmlirError, exception_summary


def export_model(source: ModelSource) -> torch.export.ExportedProgram:
    try:
        with torch.no_grad(), warnings.catch_warnings(), _quiet_logging():
            warnings.simplefilter("ignore", FutureWarning)  # torch's own deprecation chatter
            if source.program is not None:
                return source.program.run_decompositions(_decompositions())
            model = source.module.eval()
            program = torch.export.export(model, source.example_inputs, strict=False)
            return program.run_decompositions(_decompositions())
    except Exception as e:
        raise QmlirError(f"torch.export rejected the model: {exception_summary(e)}") from e


def _decompositions() -> dict:  # type: ignore[type-arg]
    core = core_aten_decompositions()
    wanted = (
        "aten.new_ones.default",
        "aten.__and__.Tensor",
        "aten.__and__.Scalar",
        "aten.diff.default",
    )
    return {op: fn for op, fn in core.items() if str(op) in wanted}


@contextlib.contextmanager
def _quiet_logging() -> Iterator[None]:
    """torch.export prints whole graphs to stderr when it fails; the CLI's error says enough."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logging.disable(previous)
