"""Stage 6, execute: ``CompiledModule`` runs a ``.vmfb`` through ``iree.runtime``.

Inputs are numpy arrays or torch tensors; outputs come back as the same kind (torch if any input
was torch). Inputs are checked against the signature in the artifact's metadata first.

Running needs only ``iree-base-runtime``, numpy and ml_dtypes: this module imports neither torch
nor ``iree.compiler`` (torch only to convert torch tensors, when a caller passes them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import warnings
import weakref
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from iree import runtime as iree_runtime

from compiler.runtime.host_memory import retain_for_cpu_calls
from compiler.runtime.input_check import (
    NUMPY_DTYPES,
    NonFiniteInputWarning,
    check_array_likes,
    check_inputs,
    is_torch,
    non_finite_counts,
    non_finite_message,
)
from compiler.runtime.metadata import ArtifactMetadata, Signature
from compiler.runtime.outputs import rebuild
from compiler.runtime.parameters import (
    parameter_modules,
    parameters_beside,
    verify_parameters,
)
from compiler.runtime.scaling_health import (
    ScalingHealth,
    ScalingHealthWarning,
    broken_scales,
    scaling_health,
)
from compiler.runtime.seal import unseal
from compiler.runtime.summary import summary_line
from compiler.runtime.zero_pages import untouched_zeros
from passes.base.abi import (
    ENTRY,
    GET_BUFFERS,
    GET_STATE,
    INITIAL_BUFFERS,
    SET_BUFFERS,
    SET_STATE,
)
from passes.base.cpu_features import host_problem
from passes.base.errors import QmlirError
from passes.base.files import copy_file, move_file, write_atomically
from passes.host.call import call, host_copies, imported


class CompiledModule:
    """A compiled qmlir artifact: call it like the model; ``.save(path)``; ``.metadata``.

    A call returns what the model returns: one array, a tuple, or the dict / list / nesting the
    model's ``forward`` built (the signature's ``tree``); :meth:`run_numpy` returns the flat list.

    ``artifact`` is the file's bytes (``seal.py``): the seal is verified first, and
    nothing of the module is loaded until the first call (the initializer runs then, once).
    An artifact with its weights outside the module (``metadata.parameters``) needs its
    parameter file, ``parameters``: checked against the seal here, mapped at the first call
    (``parameters.py``). ``owned``: a directory removed with this object (a compile's temporary
    parameter file, until :meth:`save` moves it beside the artifact).
    Calls are serialized on modules with state (scaling state, a training step's parameters),
    so concurrent callers never lose an update; stateless modules run concurrent calls as they
    come.
    """

    def __init__(
        self,
        artifact: bytes,
        device: str = "",
        parameters: str | os.PathLike[str] | None = None,
        owned: Path | None = None,
    ) -> None:
        verified = unseal(artifact)
        self._artifact = verified
        self.record: ArtifactMetadata = verified.record
        self.metadata: dict[str, Any] = verified.metadata  # the record as JSON, by field name
        self.function_names: list[str] = list(self.record.functions)
        target = self.record.target
        self._device = device or ("cuda" if target.is_cuda else "local-task")
        # checked before its code can SIGILL here; a GPU artifact, or one for another CPU, loads
        # on first use: compile, save and inspect need neither the GPU nor that CPU
        cpu = target.cpu
        self._cpu_problem = host_problem(cpu.to_json()) if cpu is not None else None
        self._context: Any = None
        self._zeros: list[np.ndarray] | None = None
        self._module_name = ""
        self._load_lock = threading.Lock()
        self._warned_non_finite = False
        self._warned_scales = False  # fp8-delayed: a broken scale warned (until a reset)
        self._calls_since_state = 0  # fp8-delayed: calls since the state was set (the checks)
        self._call_lock: threading.Lock | contextlib.nullcontext[None] = (
            threading.Lock() if self.record.stateful else contextlib.nullcontext()
        )
        self.parameter_file: Path | None = None
        self._owned = owned
        if owned is not None:
            weakref.finalize(self, shutil.rmtree, owned, True)
        record = self.record.parameters
        if record is not None:
            if parameters is None:
                raise QmlirError(
                    f"the artifact's weights are in a parameter file ('{record.file}'): "
                    "give its path (--parameters)"
                )
            self.parameter_file = Path(parameters)
            verify_parameters(self.parameter_file, record)
        elif parameters is not None:
            raise QmlirError("the artifact holds its weights: it takes no parameter file")

    def _load(self) -> Any:
        with self._load_lock:
            if self._context is None:
                if self._device.startswith("local"):
                    retain_for_cpu_calls()  # the calls' buffers reuse their pages (host_memory.py)
                context, self._module_name = self._open()
                if self.record.buffers:
                    functions = context.modules[self._module_name]
                    initial = list(call(functions[INITIAL_BUFFERS], batch=False))
                    self._set_buffers(
                        context, functions[SET_BUFFERS], self._initial_buffers(host_copies(initial))
                    )
                self._context = context
            return self._context

    def _initial_buffers(self, nonzero: list[np.ndarray]) -> list[np.ndarray]:
        """Each held buffer's initial value (``hold_buffers.py``): the zeros of
        :meth:`_zero_buffers`, or a host array of its own."""
        values, zeros = iter(nonzero), iter(self._zero_buffers())
        return [next(zeros) if b.zeros else np.array(next(values)) for b in self.record.buffers]

    def _zero_buffers(self) -> list[np.ndarray]:
        """The zero-initialized buffers' initial values, made once (``zero_pages.py``)."""
        if self._zeros is None:
            buffers = [b for b in self.record.buffers if b.zeros]
            self._zeros = untouched_zeros([(b.shape, NUMPY_DTYPES[b.dtype]) for b in buffers])
        return self._zeros

    def _set_buffers(self, context: Any, function: Any, values: list[np.ndarray]) -> None:
        """``@qmlir.set_buffers(values)``. On a host device the zeros are imported, not copied
        (``zero_pages.py``). The module copies its arguments after the call has returned (with
        no results, its fence signals first), so the zeros stay alive as long as ``context``
        (nothing writes them: they cost no memory); other values IREE copies during the call."""
        args: list[Any] = list(values)
        if self._device.startswith("local"):
            zeros = {id(z) for z in self._zero_buffers()}
            device = context.config.device
            args = [imported(device, v) if id(v) in zeros else v for v in values]
            context.qmlir_zero_buffers = self._zero_buffers()  # released after the context's parts
        with self._call_lock:
            call(function, *args, batch=self._device == "local-task")

    def buffers(self) -> dict[str, np.ndarray]:
        """The buffers the model mutates, as the module holds them now (copies)."""
        if not self.record.buffers:
            return {}
        values = self._call(GET_BUFFERS)
        return {
            b.name: _as_dtype(v, b.dtype) for b, v in zip(self.record.buffers, values, strict=True)
        }

    def reset_buffers(self) -> None:
        """The buffers the model mutates back at their initial values."""
        if self.record.buffers:
            initial = self._initial_buffers(self._call(INITIAL_BUFFERS))
            context = self._load()
            self._set_buffers(context, context.modules[self._module_name][SET_BUFFERS], initial)

    def _open(self) -> tuple[Any, str]:
        if self.record.target.is_cuda and self._device != "cuda":
            arch = self.record.target.cuda_arch
            raise QmlirError(
                f"the artifact is compiled for an NVIDIA GPU ({arch}): run it with --device cuda"
            )
        if self._cpu_problem is not None and self._device.startswith("local"):
            raise QmlirError(self._cpu_problem)
        try:
            return open_module(
                self._artifact.vmfb, iree_runtime.Config(self._device), self.parameter_file
            )
        except (ValueError, RuntimeError) as e:
            raise QmlirError(
                f"cannot load the artifact on device '{self._device}': {str(e).splitlines()[0]}"
            ) from e

    @property
    def signature(self) -> Signature:
        return self.record.signature

    @property
    def vmfb(self) -> bytes:
        """The artifact file's bytes (the IREE module, then the sealed metadata)."""
        return self._artifact.data

    @property
    def digest(self) -> str:
        """The SHA-256 the artifact is sealed with (hex)."""
        return self._artifact.digest

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the artifact to ``path``; a parameter file goes beside it
        (``<name>.params.safetensors``): moved there from a compile's temporary directory,
        copied from anywhere else."""
        target = Path(path)
        if self.parameter_file is not None:
            beside = parameters_beside(target)
            if beside.resolve() != self.parameter_file.resolve():
                if self._owned is not None and self.parameter_file.is_relative_to(self._owned):
                    move_file(self.parameter_file, beside)
                else:
                    copy_file(self.parameter_file, beside)
                self.parameter_file = beside
        write_atomically(target, self._artifact.data)

    def run_numpy(self, *inputs: np.ndarray) -> list[np.ndarray]:
        return self._run_checked(ENTRY, inputs)

    def _run_checked(self, function: str, inputs: tuple[np.ndarray, ...]) -> list[np.ndarray]:
        """``function`` (``@main``, or a function of its signature at narrower shapes) on
        ``inputs`` checked against ``@main``'s signature."""
        arrays = check_inputs(inputs, self.signature["inputs"])
        if not self._warned_non_finite:
            found = non_finite_counts(arrays)
            if found:
                self._warned_non_finite = True  # once per module: a loop over bad data is one
                warnings.warn(non_finite_message(*found[0]), NonFiniteInputWarning, stacklevel=3)
        outputs = [
            _as_dtype(o, spec["dtype"])
            for o, spec in zip(
                self._call(function, *arrays), self.signature["outputs"], strict=False
            )
        ]
        if self.record.scaling_state and not self._warned_scales:
            self._calls_since_state += 1
            if _checks_scales(self._calls_since_state):
                self._warn_broken_scales()
        return outputs

    def _warn_broken_scales(self) -> None:
        """fp8-delayed: a call that left a scale which zeroes (or saturates, or NaNs) the next
        calls' outputs is warned once, with the state's verdict (checked on the schedule of
        :func:`_checks_scales`: reading and judging the state costs about as much as a small
        model's call)."""
        broken = broken_scales(self.scaling_health())
        if broken:
            self._warned_scales = True
            more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
            warnings.warn(f"{broken[0].verdict}{more}", ScalingHealthWarning, stacklevel=4)

    def __call__(self, *inputs: Any) -> Any:
        check_array_likes(inputs, self.signature["inputs"])
        as_torch = any(is_torch(x) for x in inputs)
        outputs = self.run_numpy(*[to_numpy(x) for x in inputs])
        if as_torch:
            outputs = [to_torch(o) for o in outputs]
        tree = self.signature.get("tree")
        if tree is not None:  # the model returned a dict, a list or a nested structure
            return rebuild(tree, outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    @property
    def summary(self) -> str:
        """One line: the recipe, how many matmuls it quantized, and what stayed in high
        precision (``qmlir compile`` prints it; ``compiler.compile`` logs it)."""
        return summary_line(self.record)

    def scaling_state(self) -> dict[str, dict[str, np.ndarray]]:
        """fp8-delayed's state: ``{key: {"amax_history": [L] f32, "scale": f32}}`` (a copy)."""
        entries = self.record.scaling_state
        if not entries:
            return {}
        values = self._call(GET_STATE)
        state: dict[str, dict[str, np.ndarray]] = {}
        for entry, value in zip(entries, values, strict=True):
            state.setdefault(entry.key, {})[entry.kind] = value
        return state

    def scaling_health(
        self, *, recent: int = 16, outlier_ratio: float = 100.0
    ) -> list[ScalingHealth]:
        """Each fp8-delayed state judged (non-finite history entries, a zero/inf/NaN/tiny scale,
        an outlier amax), a one-line ``verdict`` each; ``[]`` without scaling state."""
        return scaling_health(self.scaling_state(), recent=recent, outlier_ratio=outlier_ratio)

    def reset_scaling_state(self) -> None:
        """Back to the initial state: histories of zeros, scales of 1."""
        initial = {"amax_history": 0.0, "scale": 1.0}
        self._set_state(
            [np.full(e.shape, initial[e.kind], np.float32) for e in self.record.scaling_state]
        )

    def load_scaling_state(self, state: dict[str, dict[str, Any]]) -> None:
        """Restores a state from :meth:`scaling_state` (every key and kind must be there)."""
        arrays = []
        for e in self.record.scaling_state:
            try:
                value = np.asarray(state[e.key][e.kind], dtype=np.float32)
            except (KeyError, TypeError):
                raise QmlirError(f"scaling state misses {e.key}.{e.kind}") from None
            if value.shape != e.shape:
                raise QmlirError(
                    f"scaling state {e.key}.{e.kind} has shape {list(value.shape)}, "
                    f"the module keeps {list(e.shape)}"
                )
            arrays.append(value)
        unknown = set(state) - {e.key for e in self.record.scaling_state}
        if unknown:
            raise QmlirError(f"the module has no scaling state named {sorted(unknown)[0]}")
        self._set_state(arrays)

    def _set_state(self, arrays: list[np.ndarray]) -> None:
        if arrays:
            self._call(SET_STATE, *arrays)
        self._warned_scales = False  # a new state: its next broken scale is news again
        self._calls_since_state = 0

    def _call(self, name: str, *args: np.ndarray) -> list[np.ndarray]:
        function = self._load().modules[self._module_name][name]
        with self._call_lock:
            # the caller's scheduling matters where worker threads wake it (passes/host/call.py)
            return host_copies(call(function, *args, batch=self._device == "local-task"))


# fp8-delayed's scales are checked after each of the first calls on a state (a state breaks soonest,
# on the calls that fill its history), then after calls 8, 16, 32, 64 and every 64th: a scale that
# breaks later is warned within 64 calls, at 1/64 of a check's cost per call.
SCALE_CHECK_FIRST = 4
SCALE_CHECK_EVERY = 64


def _as_dtype(value: np.ndarray, dtype: str) -> np.ndarray:
    """An unsigned result as the signature says (IREE hands an unsigned tensor back as its
    signless bytes: ``int8`` for ``ui8``, an FP8 KV cache's codes)."""
    want = NUMPY_DTYPES.get(dtype)
    if want is not None and want.kind == "u" and value.dtype.itemsize == want.itemsize:
        return value.view(want)
    return value


def _checks_scales(call: int) -> bool:
    """Whether the ``call``-th call since the state was set checks its scales."""
    if call <= SCALE_CHECK_FIRST:
        return True
    if call < SCALE_CHECK_EVERY:
        return call & (call - 1) == 0  # a power of two
    return call % SCALE_CHECK_EVERY == 0


def open_module(
    vmfb: bytes, config: iree_runtime.Config, parameters: Path | None = None
) -> tuple[Any, str]:
    """A new ``SystemContext`` on ``config``'s device holding the module ``vmfb`` (its state at
    its initial values) after the parameter module serving ``parameters`` (if any), and the
    module's name (``context.modules[name][function]``)."""
    context = iree_runtime.SystemContext(config=config)
    if parameters is not None:
        for module in parameter_modules(context.instance, parameters):
            context.add_vm_module(module)
    vm_module = iree_runtime.VmModule.copy_buffer(context.instance, vmfb)
    try:
        context.add_vm_module(vm_module)
    except (IndexError, RuntimeError, ValueError) as e:  # IREE refuses an executable
        first = next((line for line in str(e).splitlines() if line.strip()), type(e).__name__)
        raise QmlirError(f"IREE cannot load the artifact: {first.strip()}") from e
    return context, vm_module.name


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if is_torch(x):
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
