"""Opening an artifact file: a :class:`CompiledModule`, a :class:`TrainingStep` where the
artifact is a compiled training step (its metadata has ``training``), a :class:`Generator`
where it is a generator (``generation``)."""

from __future__ import annotations

import os
from pathlib import Path

from compiler.runtime.generator import Generator
from compiler.runtime.module import CompiledModule
from compiler.runtime.parameters import parameters_beside
from compiler.runtime.seal import Artifact, unseal
from compiler.runtime.training import TrainingStep
from passes.base.errors import QmlirError


def artifact_module(
    data: bytes, device: str = "", parameters: str | os.PathLike[str] | None = None
) -> CompiledModule:
    """The artifact ``data`` as the class its metadata calls for."""
    record = unseal(data).record
    if record.training is not None:
        return TrainingStep(data, device=device)
    if record.generation is not None:
        return Generator(data, device=device, parameters=parameters)
    return CompiledModule(data, device=device, parameters=parameters)


def load(
    path: str | os.PathLike[str],
    device: str = "",
    parameters: str | os.PathLike[str] | None = None,
) -> CompiledModule:
    """The artifact at ``path``. One whose weights are outside its module reads them from
    ``parameters``, by default ``<name>.params.safetensors`` beside it; the file is checked
    against the artifact's seal here, and mapped (not read) when the module loads."""
    p = Path(path)
    if not p.is_file():
        raise QmlirError(f"artifact '{p}' does not exist")
    data = p.read_bytes()
    if not data:
        raise QmlirError(f"artifact '{p}' is empty")
    try:
        if parameters is None and unseal(data).record.parameters is not None:
            parameters = parameters_beside(p)
        return artifact_module(data, device=device, parameters=parameters)
    except QmlirError as e:
        raise QmlirError(f"'{p}': {e}") from e


def read_artifact(path: str | os.PathLike[str]) -> Artifact:
    """The verified artifact at ``path`` (seal and metadata), without loading its module."""
    p = Path(path)
    if not p.is_file():
        raise QmlirError(f"artifact '{p}' does not exist")
    try:
        return unseal(p.read_bytes())
    except QmlirError as e:
        raise QmlirError(f"'{p}': {e}") from e
