"""Where a model comes from: ``file.py[:function]`` (default function ``build``) or a ``.pt2``
(a checkpoint folder: ``checkpoint.py``; ``model_loader.py`` takes all three)."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from compiler.frontend.dynamic_dims import forward_names
from passes.base.errors import QmlirError, exception_summary
from passes.ir.parameters import Reader

DEFAULT_FUNCTION = "build"


@dataclass
class ModelSource:
    """A model and its example inputs; ``program`` is set when it came as a ``.pt2`` (with the
    dynamic dims it was exported with); ``dynamic_shapes`` is ``torch.export``'s argument."""

    name: str
    module: torch.nn.Module
    example_inputs: tuple[torch.Tensor, ...]
    program: torch.export.ExportedProgram | None = None
    dynamic_shapes: Any = None
    reader: Reader | None = None  # the weights where the module has none (a checkpoint's)
    prequantized: Any = None  # a quantized checkpoint's FP8 weights (prequantized.Prequantized)

    def input_names(self) -> list[str]:
        """The model's input names: a ``.pt2``'s user inputs, else ``forward``'s parameters."""
        if self.program is not None:
            return user_input_names(self.program)
        return forward_names(self.module, len(self.example_inputs))


def user_input_names(program: torch.export.ExportedProgram) -> list[str]:
    """An exported program's user inputs (not its parameters and buffers), in order."""
    from torch.export.graph_signature import InputKind

    specs = program.graph_signature.input_specs
    return [s.arg.name for s in specs if s.kind == InputKind.USER_INPUT]


def load_model(spec: str) -> ModelSource:
    """The model ``spec`` names: ``file.py[:function]`` or a ``.pt2`` (a checkpoint folder:
    ``model_loader.load_model``)."""
    path_text, _, function = spec.partition(":")
    path = Path(path_text)
    if not path.exists():
        raise QmlirError(f"model file '{path}' does not exist")
    if path.suffix == ".pt2":
        if function:
            raise QmlirError(f"'{spec}': a .pt2 file takes no ':function'")
        return _load_pt2(path)
    if path.suffix != ".py":
        raise QmlirError(
            f"model '{spec}' is neither file.py[:function], a .pt2 file nor a checkpoint folder"
        )
    return _load_python(path, function or DEFAULT_FUNCTION)


def _load_pt2(path: Path) -> ModelSource:
    try:
        with _quiet_torch():  # torch logs a traceback for a damaged file before raising
            program = torch.export.load(str(path))
    except Exception as e:
        raise QmlirError(
            f"cannot load '{path}' as a torch.export program: {exception_summary(e)}"
        ) from e
    args, kwargs = program.example_inputs or ((), {})
    if kwargs:
        raise QmlirError(f"'{path}': keyword example inputs are not supported")
    if not args:
        raise QmlirError(f"'{path}' holds no example inputs (save it from torch.export.export)")
    return ModelSource(path.stem, program.module(), tuple(args), program)


def _load_python(path: Path, function: str) -> ModelSource:
    module_name = f"qmlir_model_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise QmlirError(f"cannot import '{path}'")
    py_module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = py_module
    with _script_directory_on_path(path):  # `import helper` finds helper.py beside the model
        try:
            spec.loader.exec_module(py_module)
        except Exception as e:
            raise QmlirError(f"importing '{path}' failed: {exception_summary(e)}") from e
        builder = getattr(py_module, function, None)
        if not callable(builder):
            raise QmlirError(f"'{path}' has no function '{function}' (expected file.py:function)")
        try:
            built = builder()
        except Exception as e:
            raise QmlirError(f"'{path}:{function}()' failed: {exception_summary(e)}") from e
    if not (isinstance(built, tuple) and len(built) in (2, 3)):
        raise QmlirError(
            f"'{path}:{function}()' must return (model, example_inputs) or "
            "(model, example_inputs, dynamic_shapes)"
        )
    model, inputs = built[:2]
    where = f"{path}:{function}"
    return ModelSource(
        f"{path.stem}:{function}",
        *check_model(model, inputs, where),
        dynamic_shapes=built[2] if len(built) == 3 else None,
    )


@contextlib.contextmanager
def _script_directory_on_path(path: Path) -> Iterator[None]:
    """The model file's directory first on ``sys.path`` while it is imported and its function
    runs, as Python puts a script's; then ``sys.path`` as it was."""
    entry = str(path.resolve().parent)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        if sys.path and sys.path[0] == entry:
            del sys.path[0]
        elif entry in sys.path:  # the model moved it: remove the entry it got from us
            sys.path.remove(entry)


@contextlib.contextmanager
def _quiet_torch() -> Iterator[None]:
    """No log records (``torch.export`` logs the deserializer's traceback as a warning) or
    Python warnings from torch while loading; a failure is the one-line error."""
    loggers = [logging.getLogger(name) for name in ("torch", "torch.export")]  # TORCH_LOGS
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def check_model(model: object, inputs: object, where: str) -> tuple[torch.nn.Module, tuple]:
    if not isinstance(model, torch.nn.Module):
        raise QmlirError(
            f"{where}: the model must be a torch.nn.Module, not {type(model).__name__}"
        )
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)) or not all(
        isinstance(t, torch.Tensor) for t in inputs
    ):
        raise QmlirError(f"{where}: example inputs must be a tensor or a tuple of tensors")
    for i, t in enumerate(inputs):
        if 0 in t.shape:
            raise QmlirError(
                f"{where}: example input {i} has a zero-size dimension {list(t.shape)} "
                "(example inputs must be non-empty)"
            )
    return model, tuple(inputs)
