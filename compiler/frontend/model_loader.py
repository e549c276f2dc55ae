"""Any model a command names: ``file.py[:function]``, a ``.pt2`` (``model_source.py``) or a
checkpoint folder (``checkpoint.py``)."""

from __future__ import annotations

from pathlib import Path

from compiler.frontend import checkpoint, model_source
from compiler.frontend.model_source import ModelSource
from passes.base.errors import QmlirError


def load_model(
    spec: str,
    *,
    output: str | None = None,
    batch: int | None = None,
    seq: int | None = None,
    materialize: bool = False,
    last_mlp: bool = False,
) -> ModelSource:
    """The model ``spec`` names. A checkpoint folder's model is built without its weights
    (``reader`` reads them) unless ``materialize`` (to run it in torch); ``output``, ``batch``,
    ``seq`` and ``last_mlp`` are a folder's choices (``checkpoint.load_checkpoint``)."""
    if Path(spec).is_dir():
        source = checkpoint.load_checkpoint(Path(spec), output, batch, seq, last_mlp)
        if materialize:
            checkpoint.materialize(source)
        return source
    if output is not None or batch is not None or seq is not None:
        raise QmlirError("--output-field, --batch and --seq apply to a checkpoint folder only")
    return model_source.load_model(spec)
