"""The parameter file of a module with weights outside it: a plain safetensors file, written by
carrying out ``externalize-weights``' plan one checkpoint tensor at a time.

The header goes first (every tensor's key, type and shape is in the plan before any value is
computed), then each tensor's bytes in the plan's order, hashed (SHA-256) as they are written.
A checkpoint tensor is read when a call first needs it and dropped after its last use; a call's
result is kept only until the calls that read it have run. The compile's peak memory is then the
largest weight's chain (its stored bytes, its f32 copy, its codes and scales), whatever the
model's size. The quantize calls are the named ops' llvm-cpu definitions compiled for this host
(``passes/host/evaluate.py``): the bytes an inlined artifact would carry.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from passes.host.call import call, host_copies
from passes.host.evaluate import compile_host_module
from passes.ir.parameters import NUMPY_DTYPES, ParameterRef, Reader
from passes.ir.weight_plan import CallResult, PlannedTensor, WeightPlan

SAFETENSORS_DTYPES = {
    "f32": "F32",
    "bf16": "BF16",
    "f16": "F16",
    "f64": "F64",
    "i8": "I8",
    "i32": "I32",
    "i64": "I64",
}

ALIGNMENT = 64  # bytes: each tensor's start in the file (IREE maps aligned tensors in place)
Progress = Callable[[int, int, str], None]  # bytes written, bytes in all, current tensor


@dataclass(frozen=True)
class WrittenParameters:
    """What was written: the file's size, its SHA-256 and how many tensors it holds."""

    nbytes: int
    sha256: str
    tensors: int


def safetensors_header(tensors: list[PlannedTensor]) -> tuple[bytes, dict[str, int]]:
    """The 8-byte length and the JSON header for ``tensors`` in their order, and the padding
    bytes written before each.

    Every tensor starts :data:`ALIGNMENT` bytes into the file times a whole number, so IREE maps
    it in place rather than copying it into an allocation of its own (unaligned, it copied:
    measured, RSS after one call of a 0.35B model 0.79 GB against 0.37 GB of parameters). The
    header is padded with spaces to put the data there; the padding between tensors is a
    ``__pad<n>`` tensor (U8) of its own, as safetensors allows no bytes outside a tensor."""
    body: dict[str, Any] = {}
    pads: dict[str, int] = {}
    offset = 0
    for t in tensors:
        pad = -offset % ALIGNMENT
        if pad:
            body[f"__pad{len(pads)}"] = {
                "dtype": "U8",
                "shape": [pad],
                "data_offsets": [offset, offset + pad],
            }
            pads[t.key] = pad
            offset += pad
        body[t.key] = {
            "dtype": SAFETENSORS_DTYPES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + t.nbytes],
        }
        offset += t.nbytes
    entries = {"__metadata__": {"producer": "qmlir"}, **body}
    text = json.dumps(entries, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % ALIGNMENT)
    return struct.pack("<Q", len(text)) + text, pads


def write_parameters(
    plan: WeightPlan, reader: Reader, out: BinaryIO, progress: Progress | None = None
) -> WrittenParameters:
    """Writes the parameter file of ``plan`` to ``out``, reading weights through ``reader``."""
    digest = hashlib.sha256()

    def emit(data: bytes | memoryview) -> None:
        digest.update(data)
        out.write(data)

    header, pads = safetensors_header(plan.tensors)
    emit(header)
    total = plan.nbytes + sum(pads.values())
    written = 0

    def emit_tensor(tensor: PlannedTensor, array: Any) -> int:
        if tensor.key in pads:
            emit(bytes(pads[tensor.key]))
        return pads.get(tensor.key, 0) + _emit_tensor(emit, tensor, array)

    pending = {t.source: t for t in plan.tensors}
    run = _Run(plan, reader)
    for index in range(len(plan.calls)):
        results = run.call(index)
        for i, array in enumerate(results):
            tensor = pending.get(CallResult(index, i))
            if tensor is not None:
                written += emit_tensor(tensor, array)
                if progress is not None:
                    progress(written, total, tensor.key)
    for tensor in plan.tensors:
        if isinstance(tensor.source, ParameterRef):
            written += emit_tensor(tensor, tensor.source.read(reader))
            if progress is not None:
                progress(written, total, tensor.key)
    assert written == total, (written, total)
    return WrittenParameters(len(header) + total, digest.hexdigest(), len(plan.tensors))


def _emit_tensor(emit: Callable[[memoryview], None], tensor: PlannedTensor, array: Any) -> int:
    data = np.ascontiguousarray(array)
    expected = NUMPY_DTYPES[tensor.dtype]
    if data.dtype.itemsize != expected.itemsize or data.size * data.itemsize != tensor.nbytes:
        raise AssertionError(f"{tensor.key}: {data.dtype}{list(data.shape)} for {tensor}")
    emit(memoryview(data.reshape(-1).view(np.uint8)))
    return tensor.nbytes


class _Run:
    """The plan's calls, run in order, each input held only as long as a later call needs it."""

    def __init__(self, plan: WeightPlan, reader: Reader) -> None:
        self._plan = plan
        self._reader = reader
        self._uses: Counter[Any] = Counter()
        for planned in plan.calls:
            for a in planned.arguments:
                if isinstance(a, (ParameterRef, CallResult)):
                    self._uses[a] += 1
        self._held: dict[Any, np.ndarray] = {}
        self._context: Any = None
        self._stored: dict[str, np.ndarray] = {}  # checkpoint tensors in use, by name

    def call(self, index: int) -> list[np.ndarray]:
        planned = self._plan.calls[index]
        if self._context is None:
            text = "module {\n" + "\n".join(self._plan.functions.values()) + "\n}\n"
            self._context = compile_host_module(text)
        args = [self._value(a) for a in planned.arguments]
        results = host_copies(call(self._context.modules.module[planned.function], *args))
        del args
        for i, array in enumerate(results):
            if self._uses[CallResult(index, i)]:
                self._held[CallResult(index, i)] = array
        return results

    def _value(self, argument: Any) -> np.ndarray:
        if isinstance(argument, np.ndarray):
            return argument
        if argument not in self._held:
            assert isinstance(argument, ParameterRef), argument
            self._held[argument] = argument.read(self._read_stored)
        value = self._held[argument]
        self._uses[argument] -= 1
        if not self._uses[argument]:
            del self._held[argument]
            if isinstance(argument, ParameterRef) and not any(
                isinstance(k, ParameterRef) and k.name == argument.name for k in self._held
            ):
                self._stored.pop(argument.name, None)
        return value

    def _read_stored(self, name: str) -> np.ndarray:
        """A checkpoint tensor, kept while views of it are in use (q, k, v of one tensor)."""
        if name not in self._stored:
            self._stored[name] = self._reader(name)
        return self._stored[name]


def write_parameter_file(
    plan: WeightPlan, reader: Reader, path: Path, progress: Progress | None = None
) -> WrittenParameters:
    """:func:`write_parameters` to ``path``, through a temporary file beside it renamed at the
    end: never a half-written parameter file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        with open(tmp, "wb") as f:
            written = write_parameters(plan, reader, f, progress)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return written
