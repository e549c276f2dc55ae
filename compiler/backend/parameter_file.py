"""The parameter file of a module with weights outside it: a plain safetensors file, written by
carrying out ``externalize-weights``' plan one checkpoint tensor at a time.

The header goes first (every tensor's key, type and shape is in the plan before any value is
computed), then each tensor's bytes in the plan's order, hashed (SHA-256) as they are written.
A checkpoint tensor is read when a call first needs it and dropped after its last use; a call's
result is kept only until the calls that read it have run. The compile's peak memory is then the
largest weight's chain (its stored bytes, its f32 copy, its codes and scales), whatever the
model's size. The quantize calls are the named ops' llvm-cpu definitions compiled for this host
(``passes/host/evaluate.py``): the bytes an inlined artifact would carry.

The stream overlaps its parts (``weight_stream.py``): the next checkpoint tensor is read while
the current one is quantized, and the file's bytes are hashed and written behind the calls. The
quantize functions compile for the host (a stage of its own, "quantize code": its time does not
depend on the weights) while the first tensor is read.

A tensor only gathered by rows (an embedding table: ``PlannedTensor.gathered``) is written
:data:`GATHERED_WRITE` bytes at a time. The page cache keeps a file's bytes in folios as large as
the writes that made them (ext4 on Linux 6.18 makes folios of megabytes from one large write),
and a fault in a mapped file maps its whole folio: a generator that gathers 160 rows of 2 KiB
from a 62.5 MiB table written in one piece had 45 MiB of it resident, where 64 KiB writes leave
2 MiB (``benchmarks/RESULTS.md``). Other tensors are read whole and keep the large writes
(64 KiB ones copy into the page cache at ~0.75x the speed).

A quantized checkpoint's FP8 weights (``stored``, ``compiler/frontend/prequantized.py``) are
not quantized again: the quantize call of such a weight gives the checkpoint's codes and scale
as they are stored, and the calls that only fed it (its amax and scale) are not run. Any other
call that would read such a weight (a quantize of another format, through a view) is an error
naming the layer's weight.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from iree import runtime as iree_runtime

from compiler.backend.weight_stream import ReadAhead, WriteBehind
from passes.base.errors import QmlirError
from passes.host.call import call, imported
from passes.host.evaluate import compile_host_module
from passes.ir.choices import ScaleFormat, Scaling
from passes.ir.dialect import Amax, ComputeScale, Quantize, ScaleRule
from passes.ir.formats import E2M1, E4M3
from passes.ir.parameters import NUMPY_DTYPES, ParameterRef, Reader, Step
from passes.ir.weight_plan import CallResult, PlannedTensor, Signature, WeightPlan

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
    plan: WeightPlan,
    reader: Reader,
    out: BinaryIO,
    progress: Progress | None = None,
    stored: Any = None,
    ready: Callable[[], None] | None = None,
) -> WrittenParameters:
    """Writes the parameter file of ``plan`` to ``out``, reading weights through ``reader``
    (and a quantized checkpoint's FP8 weights from ``stored``, a ``Prequantized``); ``ready``
    is called once the quantize functions are compiled, as the stream starts."""
    header, pads = safetensors_header(plan.tensors)
    total = plan.nbytes + sum(pads.values())
    run = _Run(plan, reader, stored)
    if ready is not None:
        ready()
    sink = WriteBehind(out)
    written = 0

    def emit_tensor(tensor: PlannedTensor, array: Any) -> int:
        if tensor.key in pads:
            sink.emit(bytes(pads[tensor.key]))
        return pads.get(tensor.key, 0) + _emit_tensor(sink.emit, tensor, array)

    try:
        sink.emit(header)
        pending = {t.source: t for t in plan.tensors}
        for index in run.indices():
            results = run.call(index)
            for i, array in enumerate(results):
                tensor = pending.get(CallResult(index, i))
                if tensor is not None:
                    written += emit_tensor(tensor, array)
                    if progress is not None:
                        progress(written, total, tensor.key)
        for tensor in plan.tensors:
            if isinstance(tensor.source, ParameterRef):
                written += emit_tensor(tensor, tensor.source.read(run.read))
                if progress is not None:
                    progress(written, total, tensor.key)
        assert written == total, (written, total)
        sha256 = sink.finish()
    except BaseException:
        sink.abandon()
        raise
    finally:
        run.close()
    return WrittenParameters(len(header) + total, sha256, len(plan.tensors))


# bytes a write of a gathered tensor takes at most: the kernel's fault-around (64 KiB), so a
# gathered row maps no more of the file than the fault around it would
GATHERED_WRITE = 64 << 10


def _emit_tensor(emit: Callable[..., Any], tensor: PlannedTensor, array: Any) -> int:
    """Queues ``array``'s bytes (an IREE result: its host mapping, the result kept alive until
    written) for the file: in one piece, or pieces of :data:`GATHERED_WRITE` bytes for a
    tensor only gathered by rows."""
    owner = array if isinstance(array, iree_runtime.DeviceArray) else None
    data = np.ascontiguousarray(array.to_host() if owner is not None else array)
    expected = NUMPY_DTYPES[tensor.dtype]
    if data.dtype.itemsize != expected.itemsize or data.size * data.itemsize != tensor.nbytes:
        raise AssertionError(f"{tensor.key}: {data.dtype}{list(data.shape)} for {tensor}")
    view = memoryview(data.reshape(-1).view(np.uint8))
    piece = GATHERED_WRITE if tensor.gathered else max(len(view), 1)
    for start in range(0, len(view), piece):
        emit(view[start : start + piece], owner)
    return tensor.nbytes


def _narrow(argument: Any) -> Any:
    """A bf16/f16 checkpoint tensor cast to f32 as its last step: the tensor before the cast
    (the call's wrapper widens it, inside IREE's dispatch), else None."""
    if not isinstance(argument, ParameterRef) or not argument.steps:
        return None
    if argument.steps[-1].kind != "f32" or argument.dtype not in ("bf16", "f16"):
        return None
    return ParameterRef(argument.name, argument.dtype, argument.steps[:-1])


_FLAT_VIEW = re.compile(
    r"(%[\w.]+) = tensor\.collapse_shape %(?P<arg>[\w.]+) \[\[0, 1\]\] : tensor<\d+x\d+xf32>"
    r" into tensor<\d+xf32>\s*%[\w.]+ = tensor\.expand_shape \1 \[\[0, 1\]\] "
    r"output_shape \[(?P<p>\d+), (?P<q>\d+)\]"
)


def _argument_names(function: str) -> list[str]:
    """The SSA names of ``function``'s (MLIR text) arguments, in order."""
    head = re.search(r"func\.func @[^(\s]+\(([^)]*)\)", function)
    return re.findall(r"%([\w.]+):", head[1]) if head else []


def _block_view(function: str, argument: str, shape: tuple[int, ...]) -> tuple[int, int] | None:
    """The [blocks, block size] view ``function`` takes of its 2-D argument ``argument`` (of
    ``shape``) by collapsing it to 1-D and expanding that (``amax_block_rows.mlir``, NVFP4's
    quantize), or None."""
    if len(shape) != 2:
        return None
    for m in _FLAT_VIEW.finditer(function):
        blocks, size = int(m["p"]), int(m["q"])
        if m["arg"] == argument and blocks * size == shape[0] * shape[1]:
            return blocks, size
    return None


def _widen(
    i: int, t: str, low: str, shape: tuple[int, ...], view: tuple[int, int] | None
) -> list[str]:
    """Lines widening ``%a<i>`` of type ``low`` to ``%w<i>`` of type ``t``: in the callee's
    block ``view`` when it takes one (a collapse to 1-D and an expand), else as it is.

    Widened as it is, ``arith.extf`` stays a dispatch of its own in front of such a callee
    (IREE fuses it across neither reshape): the f32 copy of the weight is written to a fresh
    buffer and read back, each call (NVFP4's quantize of a 32000 x 1024 bf16 weight 58 ms
    against 10 ms taking f32, ``benchmarks/RESULTS.md``). Widened in the view, the wrapper's
    reshapes back and the callee's cancel, and the widening fuses into the callee's dispatch."""
    if view is None:
        return [f"    %w{i} = arith.extf %a{i} : {low} to {t}"]
    rows, cols = shape
    blocks, size = view
    flat = rows * cols
    dtype = low.removesuffix(">").rsplit("x", 1)[1]
    return [
        f"    %c{i} = tensor.collapse_shape %a{i} [[0, 1]] : {low} into tensor<{flat}x{dtype}>",
        f"    %v{i} = tensor.expand_shape %c{i} [[0, 1]] output_shape [{blocks}, {size}]"
        f" : tensor<{flat}x{dtype}> into tensor<{blocks}x{size}x{dtype}>",
        f"    %e{i} = arith.extf %v{i} : tensor<{blocks}x{size}x{dtype}>"
        f" to tensor<{blocks}x{size}xf32>",
        f"    %f{i} = tensor.collapse_shape %e{i} [[0, 1]] : tensor<{blocks}x{size}xf32>"
        f" into tensor<{flat}xf32>",
        f"    %w{i} = tensor.expand_shape %f{i} [[0, 1]] output_shape [{rows}, {cols}]"
        f" : tensor<{flat}xf32> into {t}",
    ]


def _wrapper(
    name: str, signature: Signature, narrow: tuple[int, ...], dtype: str, function: str
) -> str:
    """``@<name>__narrow<i...>``: ``@name`` (its MLIR text ``function``) with its arguments
    ``narrow`` taken in ``dtype`` and widened to f32 by ``arith.extf`` (:func:`_widen`), which
    IREE fuses into the op's first dispatch: the f32 copy of a weight is never materialized, in
    Python or in IREE."""
    wrapper = f"{name}__narrow{'_'.join(map(str, narrow))}"
    names = _argument_names(function)
    params, values, lines = [], [], []
    for i, t in enumerate(signature.arguments):
        if i in narrow:
            low = t.replace("xf32>", f"x{dtype}>")
            params.append(f"%a{i}: {low}")
            shape = _static_shape(t) or ()
            view = _block_view(function, names[i], shape) if i < len(names) else None
            lines += _widen(i, t, low, shape, view)
            values.append(f"%w{i}")
        else:
            params.append(f"%a{i}: {t}")
            values.append(f"%a{i}")
    results = ", ".join(signature.results)
    count = len(signature.results)
    outs = ", ".join(f"%r#{i}" for i in range(count)) if count > 1 else "%r"
    rtype = f"({results})" if count != 1 else results
    args_types = ", ".join(signature.arguments)
    return "\n".join(
        [
            f"  func.func @{wrapper}({', '.join(params)}) -> {rtype} {{",
            *lines,
            f"    %r{':' + str(count) if count > 1 else ''} = func.call @{name}"
            f"({', '.join(values)}) : ({args_types}) -> {rtype}",
            f"    return {outs} : {results}",
            "  }",
        ]
    )


class _Run:
    """The plan's calls, run in order, each input held only as long as a later call needs it.

    A call whose argument is a bf16/f16 weight cast to f32 takes the weight as stored, through a
    wrapper that widens it (:func:`_wrapper`): IREE copies each argument it is given, so this
    halves that copy and spares the f32 one (an 8B model's 1 GB lm_head: 2.1 GB less)."""

    def __init__(self, plan: WeightPlan, reader: Reader, stored: Any = None) -> None:
        self._plan = plan
        self._reader = reader
        self._stored_codes = stored
        self._overrides = _stored_quantizes(plan, stored)
        self._needed = _needed_calls(plan, self._overrides)
        if stored is not None:
            _check_stored_reads(plan, stored, self._needed - set(self._overrides))
        self._calls: list[tuple[str, list[Any]]] = []
        wrappers: dict[str, str] = {}
        derived = _amax_from_blocks(plan, self._needed - set(self._overrides))
        self._order = sorted(self._needed)
        for index, planned in enumerate(plan.calls):
            if index not in self._needed or index in self._overrides:
                self._calls.append((planned.function, []))  # not run
                continue
            if index in derived:  # the largest of a block amax: its block amax runs first
                self._calls.append((_MAX_OF_BLOCKS, [CallResult(derived[index], 0)]))
                self._order.remove(derived[index])
                self._order.insert(self._order.index(index), derived[index])
                continue
            narrowed = [_narrow(a) for a in planned.arguments]
            narrow = tuple(i for i, n in enumerate(narrowed) if n is not None)
            if not narrow:
                self._calls.append((planned.function, list(planned.arguments)))
                continue
            dtype = narrowed[narrow[0]].dtype
            if any(narrowed[i].dtype != dtype for i in narrow):  # mixed: the f32 path
                self._calls.append((planned.function, list(planned.arguments)))
                continue
            signature = plan.signatures[planned.function]
            function = plan.functions[planned.function]
            text = _wrapper(planned.function, signature, narrow, dtype, function)
            name = text.split("@", 1)[1].split("(", 1)[0]
            wrappers[name] = text
            args = [
                n if n is not None else a for n, a in zip(narrowed, planned.arguments, strict=True)
            ]
            self._calls.append((name, args))
        self._text = "module {\n" + "\n".join([*plan.functions.values(), *wrappers.values()])
        self._text += "\n}\n"
        self._uses: Counter[Any] = Counter()
        for _, arguments in self._calls:
            for a in arguments:
                if isinstance(a, (ParameterRef, CallResult)):
                    self._uses[a] += 1
        self._held: dict[Any, Any] = {}  # numpy arrays and IREE results
        self._stored: dict[str, np.ndarray] = {}  # checkpoint tensors in use, by name
        order = [
            a.name
            for index in self.indices()
            for a in self._calls[index][1]
            if isinstance(a, ParameterRef)
        ]
        order += [t.source.name for t in plan.tensors if isinstance(t.source, ParameterRef)]
        self.read = ReadAhead(reader, order, self._sizes().get)
        self._context: Any = None
        if any(index not in self._overrides for index in self.indices()):
            try:  # the quantize functions compile for the host while the first tensor is read
                self._context = compile_host_module(self._text)
            except BaseException:
                self.read.close()
                raise

    def close(self) -> None:
        """Stops the read-ahead."""
        self.read.close()

    def _sizes(self) -> dict[str, int]:
        """Each checkpoint tensor's bytes as the stream holds it, in the model's dtype (the
        largest of its uses: a call's argument, or the tensor written as it is)."""
        sizes: dict[str, int] = {}
        for index in self.indices():
            planned = self._plan.calls[index]
            types = self._plan.signatures[planned.function].arguments
            for a, text in zip(self._calls[index][1], types, strict=False):
                if isinstance(a, ParameterRef):
                    shape = _static_shape(text) or ()
                    held = int(np.prod(shape, dtype=np.int64)) * NUMPY_DTYPES[a.dtype].itemsize
                    sizes[a.name] = max(sizes.get(a.name, 0), held)
        for t in self._plan.tensors:
            if isinstance(t.source, ParameterRef):
                sizes[t.source.name] = max(sizes.get(t.source.name, 0), t.nbytes)
        return sizes

    def indices(self) -> list[int]:
        """The calls to run, in order: those whose results the file or a later call needs (a
        block amax moved before the amax of the whole tensor taken from it)."""
        return self._order

    def call(self, index: int) -> list[Any]:
        function, arguments = self._calls[index]
        if index in self._overrides:
            results = self._stored_results(index)
        elif function == _MAX_OF_BLOCKS:
            block_amax = self._value(arguments[0])
            results = [np.array(np.max(block_amax.to_host()), np.float32)]
        else:
            device = self._context.config.device
            values = [self._value(a) for a in arguments]
            args = [imported(device, v) for v in values]  # IREE reads the arrays themselves
            # the results stay IREE's: written from their host mapping, or passed on to the
            # calls that read them, never copied
            results = list(call(self._context.modules.module[function], *args))
            del args, values  # only now: IREE's import does not keep every array alive
        for i, array in enumerate(results):
            if self._uses[CallResult(index, i)]:
                self._held[CallResult(index, i)] = array
        return results

    def _stored_results(self, index: int) -> list[np.ndarray]:
        """The checkpoint's codes and scale for quantize call ``index`` (NVFP4's global scale
        call: its stored (S, S_dec)), as the call's result types."""
        kind, weight = self._overrides[index]
        signature = self._plan.signatures[self._plan.calls[index].function]
        if kind == "global":
            results = [
                np.array(v, np.float32) for v in self._stored_codes.global_scale(weight.name)
            ]
        elif kind == "expert":
            expert = _expert_slice(weight)
            assert expert is not None, weight
            codes, scale = self._stored_codes.expert_codes(weight.name, expert)
            results = [codes, np.ascontiguousarray(scale)]
        else:
            codes, scale = self._stored_codes.codes(weight.name)
            results = [codes, np.ascontiguousarray(scale)]
        for i, (array, text) in enumerate(zip(results, signature.results, strict=True)):
            shape = _static_shape(text)
            if shape is None or array.size != int(np.prod(shape, dtype=np.int64)):
                raise AssertionError(f"stored result {i} {list(array.shape)} for {text}")
            results[i] = array.reshape(shape)
        return results

    def _value(self, argument: Any) -> Any:
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
            self._stored[name] = self.read(name)
        return self._stored[name]


def _stored_quantizes(plan: WeightPlan, stored: Any) -> dict[int, tuple[str, ParameterRef]]:
    """The plan's calls that a stored weight's own codes and scales stand for: the quantize of
    the weight in its format (E4M3 with its block or per tensor, or packed E2M1 with NVFP4's
    E4M3 scales per 1x16 or MXFP4's E8M0 ones per 1x32), read as it is (no view but the cast to
    f32), one expert's slice of MoE experts stored one matrix per expert (its matrices joined:
    ``Checkpoint.expert_codes``), and for NVFP4 the global scale computed from its amax. Call
    index → ("codes" | "expert" | "global", the weight)."""
    if stored is None:
        return {}
    overrides: dict[int, tuple[str, ParameterRef]] = {}
    for index, planned in enumerate(plan.calls):
        record = plan.records.get(planned.function)
        first = planned.arguments[0] if planned.arguments else None
        if isinstance(record, ComputeScale) and isinstance(first, CallResult):
            weight = _global_amax_of(plan, first, stored)
            if (
                record.rule is ScaleRule.NVFP4_GLOBAL
                and weight is not None
                and stored.format_of(weight.name).packed
            ):
                overrides[index] = ("global", weight)
            continue
        if not isinstance(record, Quantize) or not isinstance(first, ParameterRef):
            continue
        if first.name in stored.merged:  # one expert's slice of experts stored one by one
            expert = _expert_slice(first)
            if expert is None or stored.expert_refusal(first.name) is not None:
                continue
            shape = _static_shape(plan.signatures[planned.function].arguments[0])
            if shape is None or len(shape) != 2:
                continue
            if _same_format(record, stored.expert_format(first.name), shape):
                overrides[index] = ("expert", first)
            continue
        if not stored.holds(first.name):
            continue
        if _same_format(record, stored.format_of(first.name), stored.shape(first.name)):
            if _as_stored(first):
                overrides[index] = ("codes", first)
    return overrides


def _same_format(record: Quantize, fmt: Any, shape: tuple[int, ...]) -> bool:
    """Whether quantize ``record`` of a weight of ``shape`` computes the stored format
    ``fmt``'s codes and scales (its element format, block and scale format)."""
    block = None if fmt.block is None else fmt.weight_block(shape)
    if fmt.packed:  # NVFP4's E4M3 block scales, MXFP4's E8M0 ones
        scale_format = ScaleFormat.E8M0 if fmt.scale_kind == "e8m0" else ScaleFormat.E4M3
        return (
            record.format == E2M1
            and record.scaling == Scaling.BLOCK
            and tuple(record.block or ()) == block
            and record.scale_format == scale_format
            and record.packed
        )
    scaling = Scaling.PER_TENSOR if fmt.block is None else Scaling.BLOCK
    scale_formats = (ScaleFormat.E8M0,) if fmt.scale_kind == "e8m0" else (None, ScaleFormat.FP32)
    return (
        record.format == E4M3
        and record.scaling == scaling
        and (record.block is None or tuple(record.block) == block)
        and record.scale_format in scale_formats
        and not record.packed
    )


def _expert_slice(ref: ParameterRef) -> int | None:
    """The expert whose 2-D slice ``ref`` is (a stacked tensor indexed once, cast to f32 and
    nothing else), or None."""
    indices = [s for s in ref.steps if s.kind == "index"]
    if len(indices) != 1 or len(indices[0].args) != 1:
        return None
    if any(s.kind not in ("index", "f32") for s in ref.steps):
        return None
    return indices[0].args[0]


def _as_stored(ref: ParameterRef) -> bool:
    """Whether ``ref`` is the checkpoint's tensor as it is (its only step the cast to f32)."""
    return all(step == Step("f32") for step in ref.steps)


def _global_amax_of(plan: WeightPlan, result: CallResult, stored: Any) -> ParameterRef | None:
    """The stored weight whose per-tensor amax ``result`` is, if it is one."""
    amax = plan.calls[result.call]
    record = plan.records.get(amax.function)
    first = amax.arguments[0] if amax.arguments else None
    if not isinstance(record, Amax) or record.block is not None:
        return None
    if not isinstance(first, ParameterRef) or not stored.holds(first.name):
        return None
    return first if _as_stored(first) else None


_MAX_OF_BLOCKS = "the largest of its block amax"  # a call computed from another's result


def _amax_from_blocks(plan: WeightPlan, run: set[int]) -> dict[int, int]:
    """The calls among ``run`` taking a tensor's amax whose value a block amax of the same
    tensor also in ``run`` gives as its largest block's (NVFP4's global amax beside its 1x16
    block amax): amax call → block amax call.

    Both reduce |x| on bit patterns with NaN ignored (``amax.mlir``, ``amax_block*.mlir``;
    blocks padded with zeros, which never raise it), so the largest block amax is the tensor's
    amax bit for bit, and the weight is read once less (a block amax propagating NaN is not
    used)."""
    blocks: dict[Any, int] = {}
    wholes: dict[int, Any] = {}
    for index in sorted(run):
        planned = plan.calls[index]
        record = plan.records.get(planned.function)
        if not isinstance(record, Amax) or len(planned.arguments) != 1:
            continue
        argument = planned.arguments[0]
        if isinstance(argument, np.ndarray):
            continue
        if record.block is None:
            wholes[index] = argument
        elif not record.propagate_nan:
            blocks.setdefault(argument, index)
    return {index: blocks[a] for index, a in wholes.items() if a in blocks}


def _needed_calls(plan: WeightPlan, overrides: dict[int, Any]) -> set[int]:
    """The calls whose results the parameter file needs, directly or through later calls (a
    call standing for stored codes needs none of its arguments)."""
    needed = {t.source.call for t in plan.tensors if isinstance(t.source, CallResult)}
    for index in range(len(plan.calls) - 1, -1, -1):
        if index in needed and index not in overrides:
            needed.update(a.call for a in plan.calls[index].arguments if isinstance(a, CallResult))
    return needed


def _check_stored_reads(plan: WeightPlan, stored: Any, run: set[int]) -> None:
    """One line for a stored FP8 weight that one of the calls to ``run`` would quantize another
    way (another recipe for its layer, a view of it): qmlir never re-quantizes a checkpoint's
    codes."""
    for index in sorted(run):
        for a in plan.calls[index].arguments:
            if isinstance(a, ParameterRef) and a.name in stored.merged:
                why = stored.expert_refusal(a.name) or (
                    f"its layer is not compiled with recipe '{stored.expert_format(a.name).recipe}'"
                    " over each expert's slice as stored"
                )
                raise QmlirError(
                    f"weight '{a.key()}' stacks MoE experts stored as FP8 one matrix per expert, "
                    f"which qmlir cannot take as stored here ({why}): keep the experts in high "
                    "precision (--exclude '*.experts.*': dequantized as transformers does)"
                )
            if isinstance(a, ParameterRef) and stored.holds(a.name):
                fmt = stored.format_of(a.name)
                raise QmlirError(
                    f"weight '{a.key()}' is stored as {fmt.name}: its layer must "
                    f"compile with recipe '{fmt.recipe}' (its codes as stored) or stay "
                    "in high precision (--exclude), not be quantized again"
                )


def _static_shape(text: str) -> tuple[int, ...] | None:
    """``tensor<2x4xf32>`` → (2, 4); ``tensor<f32>`` → (); None for a dynamic shape."""
    dims = text.removeprefix("tensor<").removesuffix(">").split("x")[:-1]
    if any(not d.isdigit() for d in dims):
        return None
    return tuple(int(d) for d in dims)


def write_parameter_file(
    plan: WeightPlan,
    reader: Reader,
    path: Path,
    progress: Progress | None = None,
    stored: Any = None,
    ready: Callable[[], None] | None = None,
) -> WrittenParameters:
    """:func:`write_parameters` to ``path``, through a temporary file beside it renamed at the
    end: never a half-written parameter file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        with open(tmp, "wb") as f:
            written = write_parameters(plan, reader, f, progress, stored, ready)
        _replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return written


def _replace(tmp: Path, path: Path) -> None:
    """``os.replace(tmp, path)`` without waiting for ``tmp``'s bytes to reach the disk: ext4
    (``auto_da_alloc``) writes out a file renamed over another before the rename returns, 4.4 s
    for an 8B model's 5.3 GB parameter file compiled again to the same path. An existing file is
    renamed aside first and removed in a thread of its own (2.5 s for those 5.3 GB on a disk
    mounted with ``discard``), which the interpreter waits for at exit; the new file's pages go
    to the disk in the background, while IREE compiles the module."""
    aside = None
    if path.exists():
        aside = tmp.with_name(tmp.name + ".old")
        os.replace(path, aside)
    try:
        os.replace(tmp, path)
    except BaseException:
        if aside is not None:
            os.replace(aside, path)  # the old file back where it was
        raise
    if aside is not None:
        threading.Thread(target=_remove, args=(aside,), name="qmlir-remove").start()


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):  # a file left beside the new one at worst
        path.unlink(missing_ok=True)
