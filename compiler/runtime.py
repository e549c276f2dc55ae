"""Stage 6, execute: ``CompiledModule`` runs a ``.vmfb`` through ``iree.runtime``.

Inputs are numpy arrays or torch tensors; outputs come back as the same kind (torch if any input
was torch). Inputs are checked against the signature in the artifact's metadata first.

Running needs only ``iree-base-runtime``, numpy and ml_dtypes: this module imports neither torch
nor ``iree.compiler`` (torch only to convert torch tensors, when a caller passes them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from iree import runtime as iree_runtime

from passes.base.abi import ENTRY, GET_STATE, METADATA_KEY, SET_STATE
from passes.base.cpu_features import host_problem
from passes.base.errors import QmlirError
from passes.base.files import write_atomically
from passes.host.call import call, host_copies

NUMPY_DTYPES: dict[str, Any] = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f64": np.dtype(np.float64),
    "si64": np.dtype(np.int64),
    "si32": np.dtype(np.int32),
    "i1": np.dtype(np.bool_),
}


class CompiledModule:
    """A compiled qmlir artifact: call it like the model; ``.save(path)``; ``.metadata``."""

    def __init__(
        self, vmfb: bytes, metadata: dict[str, Any] | None = None, device: str = ""
    ) -> None:
        self._vmfb = vmfb
        try:
            vm_module = iree_runtime.VmModule.copy_buffer(iree_runtime.VmInstance(), vmfb)
        except (ValueError, RuntimeError) as e:
            raise QmlirError(f"not a valid qmlir artifact: {str(e).splitlines()[0]}") from e
        function = vm_module.lookup_function(ENTRY)
        found = read_metadata(function.reflection) if function is not None else None
        if found is None:
            raise QmlirError("not a qmlir artifact: the module has no qmlir metadata on @main")
        self.metadata: dict[str, Any] = metadata or found
        self._module_name = vm_module.name
        self.function_names = [
            n for n in vm_module.function_names if not n.endswith("$async") and n != "__init"
        ]
        cuda = self.metadata.get("target") == "cuda"
        self._device = device or ("cuda" if cuda else "local-task")
        cpu = self.metadata.get("cpu")
        # checked before its code can SIGILL here; a GPU artifact, or one for another CPU, loads
        # on first use: compile, save and inspect need neither the GPU nor that CPU
        self._cpu_problem = host_problem(cpu) if (cpu and not cuda) else None
        self._context: Any = None
        if not cuda and self._cpu_problem is None:
            self._load()

    def _load(self) -> Any:
        if self._context is not None:
            return self._context
        if self.metadata.get("target") == "cuda" and self._device != "cuda":
            arch = self.metadata.get("cuda_arch") or "cuda"
            raise QmlirError(
                f"the artifact is compiled for an NVIDIA GPU ({arch}): run it with --device cuda"
            )
        if self._cpu_problem is not None and self._device.startswith("local"):
            raise QmlirError(self._cpu_problem)
        try:
            context, _ = open_module(self._vmfb, iree_runtime.Config(self._device))
        except (ValueError, RuntimeError) as e:
            raise QmlirError(
                f"cannot load the artifact on device '{self._device}': {str(e).splitlines()[0]}"
            ) from e
        self._context = context
        return context

    @property
    def signature(self) -> dict[str, list[dict[str, Any]]]:
        return self.metadata["signature"]

    @property
    def vmfb(self) -> bytes:
        return self._vmfb

    def save(self, path: str | os.PathLike[str]) -> None:
        write_atomically(Path(path), self._vmfb)

    def run_numpy(self, *inputs: np.ndarray) -> list[np.ndarray]:
        arrays = self._check_inputs(inputs)
        return self._call(ENTRY, *arrays)

    def __call__(self, *inputs: Any) -> Any:
        as_torch = any(_is_torch(x) for x in inputs)
        outputs = self.run_numpy(*[to_numpy(x) for x in inputs])
        if as_torch:
            outputs = [to_torch(o) for o in outputs]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def scaling_state(self) -> dict[str, dict[str, np.ndarray]]:
        """fp8-delayed's state: ``{key: {"amax_history": [L] f32, "scale": f32}}`` (a copy)."""
        entries = self.metadata.get("scaling_state", [])
        if not entries:
            return {}
        values = self._call(GET_STATE)
        state: dict[str, dict[str, np.ndarray]] = {}
        for entry, value in zip(entries, values, strict=True):
            state.setdefault(entry["key"], {})[entry["kind"]] = value
        return state

    def reset_scaling_state(self) -> None:
        """Back to the initial state: histories of zeros, scales of 1."""
        initial = {"amax_history": 0.0, "scale": 1.0}
        self._set_state(
            [
                np.full(e["shape"], initial[e["kind"]], np.float32)
                for e in self.metadata.get("scaling_state", [])
            ]
        )

    def load_scaling_state(self, state: dict[str, dict[str, Any]]) -> None:
        """Restores a state from :meth:`scaling_state` (every key and kind must be there)."""
        arrays = []
        for e in self.metadata.get("scaling_state", []):
            try:
                value = np.asarray(state[e["key"]][e["kind"]], dtype=np.float32)
            except (KeyError, TypeError):
                raise QmlirError(f"scaling state misses {e['key']}.{e['kind']}") from None
            if list(value.shape) != e["shape"]:
                raise QmlirError(
                    f"scaling state {e['key']}.{e['kind']} has shape {list(value.shape)}, "
                    f"the module keeps {e['shape']}"
                )
            arrays.append(value)
        unknown = set(state) - {e["key"] for e in self.metadata.get("scaling_state", [])}
        if unknown:
            raise QmlirError(f"the module has no scaling state named {sorted(unknown)[0]}")
        self._set_state(arrays)

    def _set_state(self, arrays: list[np.ndarray]) -> None:
        if arrays:
            self._call(SET_STATE, *arrays)

    def _call(self, name: str, *args: np.ndarray) -> list[np.ndarray]:
        function = self._load().modules[self._module_name][name]
        # the caller's scheduling matters where worker threads wake it (passes/host/call.py)
        return host_copies(call(function, *args, batch=self._device == "local-task"))

    def _check_inputs(self, inputs: tuple[np.ndarray, ...]) -> list[np.ndarray]:
        expected = self.signature["inputs"]
        if len(inputs) != len(expected):
            raise QmlirError(f"the module takes {len(expected)} input(s), got {len(inputs)}")
        arrays = []
        for i, (x, spec) in enumerate(zip(inputs, expected, strict=True)):
            want = NUMPY_DTYPES.get(spec["dtype"])
            if tuple(x.shape) != tuple(spec["shape"]):
                raise QmlirError(
                    f"input {i} has shape {list(x.shape)}, the module expects {spec['shape']}"
                )
            if want is not None and x.dtype != want:
                raise QmlirError(
                    f"input {i} has dtype {x.dtype}, the module expects {spec['dtype']} ({want})"
                )
            arrays.append(np.ascontiguousarray(x))
        return arrays


def open_module(vmfb: bytes, config: iree_runtime.Config) -> tuple[Any, str]:
    """A new ``SystemContext`` on ``config``'s device holding the module ``vmfb`` (its state at
    its initial values), and the module's name (``context.modules[name][function]``)."""
    context = iree_runtime.SystemContext(config=config)
    vm_module = iree_runtime.VmModule.copy_buffer(context.instance, vmfb)
    context.add_vm_module(vm_module)
    return context, vm_module.name


def read_metadata(reflection: dict[str, str]) -> dict[str, Any] | None:
    """The metadata JSON qmlir embeds in ``@main``'s reflection, or None if there is none."""
    text = reflection.get(METADATA_KEY)
    return json.loads(text) if text else None


def load(path: str | os.PathLike[str], device: str = "") -> CompiledModule:
    p = Path(path)
    if not p.is_file():
        raise QmlirError(f"artifact '{p}' does not exist")
    data = p.read_bytes()
    if not data:
        raise QmlirError(f"artifact '{p}' is empty")
    try:
        return CompiledModule(data, device=device)
    except QmlirError as e:
        raise QmlirError(f"'{p}' is {e}") from e


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if _is_torch(x):
        import torch  # a torch tensor came in: torch is installed (running does not need it)

        t = x.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return t.numpy()
    return np.asarray(x)


def to_torch(x: np.ndarray) -> Any:
    import torch  # only for callers that passed torch tensors (or compare with torch)

    if x.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(x.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.array(x))
