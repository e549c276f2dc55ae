"""A compiled training step (``compiler.compile_training``): each call runs one step.

The module holds the parameters, the optimizer's state and (fp8-delayed) the amax histories;
``step(*inputs)`` runs forward, backward and the optimizer update on them and returns the loss.
``parameters()`` / ``load_parameters()`` move the parameters out and in as a state dict,
``gradients()`` returns the last step's gradients, ``optimizer_state()`` the optimizer's.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from compiler.runtime.input_check import check_inputs
from compiler.runtime.metadata import Training
from compiler.runtime.module import CompiledModule, to_numpy, to_torch
from passes.base.abi import (
    APPLY_UPDATE,
    ENTRY,
    GET_GRADIENTS,
    GET_PROBES,
    GET_TRAIN_STATE,
    SET_TRAIN_STATE,
)
from passes.base.errors import QmlirError


class TrainingStep(CompiledModule):
    """``loss = step(x, y)`` runs one training step (``run_numpy``: the loss and gradients, then
    the update); ``.parameters()``, ``.load_parameters()``,
    ``.gradients()``, ``.optimizer_state()``, ``.save(path)``; ``.training`` (its state)."""

    def __init__(self, artifact: bytes, device: str = "") -> None:
        super().__init__(artifact, device)
        self._step_lock = threading.Lock()  # a step's two calls are not interleaved with another

    @property
    def training(self) -> Training:
        """The step's state in module order: the optimizer, parameters and optimizer state."""
        assert self.record.training is not None  # loading.py picks this class by it
        return self.record.training

    @property
    def parameter_names(self) -> list[str]:
        return [entry.name for entry in self.training.parameters]

    @property
    def optimizer(self) -> dict[str, Any]:
        """The optimizer and its settings (``{"name": "adamw", "lr": ..., ...}``)."""
        return dict(self.training.optimizer)

    def parameters(self, as_torch: bool = True) -> dict[str, Any]:
        """The parameters now, by name (torch tensors; numpy arrays with ``as_torch=False``)."""
        count = len(self.parameter_names)
        return _named(self.parameter_names, self._call(GET_TRAIN_STATE)[:count], as_torch)

    def optimizer_state(self, as_torch: bool = True) -> dict[str, Any]:
        """The optimizer's state by name (``adamw.exp_avg.<parameter>``, ``adamw.step``...)."""
        count = len(self.parameter_names)
        names = [entry.name for entry in self.training.optimizer_state]
        return _named(names, self._call(GET_TRAIN_STATE)[count:], as_torch)

    def gradients(self, as_torch: bool = True) -> dict[str, Any]:
        """The last step's gradient of each parameter (zeros before the first step)."""
        return _named(self.parameter_names, self._call(GET_GRADIENTS), as_torch)

    def load_parameters(self, state_dict: dict[str, Any]) -> None:
        """Sets every parameter from ``state_dict`` (name → tensor or array, the shapes of
        :meth:`parameters`); the optimizer's state stays as it is."""
        entries = self.training.parameters
        names = {entry.name for entry in entries}
        unknown = sorted(set(state_dict) - names)
        if unknown:
            raise QmlirError(f"the training step has no parameter '{unknown[0]}'")
        values = self._call(GET_TRAIN_STATE)
        for i, entry in enumerate(entries):
            name = entry.name
            if name not in state_dict:
                raise QmlirError(f"load_parameters() misses parameter '{name}'")
            value = np.array(to_numpy(state_dict[name]), dtype=np.float32, order="C")
            if value.shape != entry.shape:
                raise QmlirError(
                    f"parameter '{name}' has shape {list(value.shape)}, the step keeps "
                    f"{list(entry.shape)}"
                )
            values[i] = value
        self._call(SET_TRAIN_STATE, *values)

    def probes(self) -> list[dict[str, Any]]:
        """The test hook (a step compiled with ``probes=True``): per quantized GEMM of the last
        step, in program order, its ``layer``, ``gemm``, operand ``roles`` and ``usages``, and
        ``a`` / ``b`` (``source``: the f32 tensor quantized, ``data``: uint8 codes, ``scale``:
        compact scale_inv) and ``out`` (the GEMM's f32 result), as numpy arrays."""
        entries = self.training.probes
        if entries is None:
            raise QmlirError("the step was compiled without probes (probes=True)")
        values = self._call(GET_PROBES)
        out = []
        for n, entry in enumerate(entries):
            part = values[7 * n : 7 * n + 7]
            operands = [
                {"source": src, "data": data.view(np.uint8), "scale": _scale(scale)}
                for src, data, scale in (part[0:3], part[3:6])
            ]
            out.append({**entry, "a": operands[0], "b": operands[1], "out": part[6]})
        return out

    def run_numpy(self, *inputs: np.ndarray) -> list[np.ndarray]:
        """One step: the loss and gradients (``@main``), then the optimizer's update."""
        arrays = check_inputs(inputs, self.signature["inputs"])
        with self._step_lock:
            outputs = self._call(ENTRY, *arrays)
            self._call(APPLY_UPDATE)
        return outputs


def _scale(value: np.ndarray) -> np.ndarray:
    """Block scale codes (E8M0) as uint8, as ``compiler.quantize`` returns them."""
    return value.view(np.uint8) if value.dtype == np.int8 else value


def _named(names: list[str], values: list[np.ndarray], as_torch: bool) -> dict[str, Any]:
    return {n: (to_torch(v) if as_torch else v) for n, v in zip(names, values, strict=True)}
