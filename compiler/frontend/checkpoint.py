"""A Hugging Face checkpoint folder as a model: ``config.json`` and ``*.safetensors`` shards,
as ``save_pretrained`` writes them.

The class is the config's ``architectures[0]`` from transformers, built with its parameters on
the meta device (buffers it computes itself, such as rotary frequencies, are real), so building
and exporting it holds no weight. The weights stay in the shards: :class:`Checkpoint` checks that
every tensor the model needs is there with its shape, and reads them one at a time (mapped).

What the compiled function computes (``output``):

- a ``*ForCausalLM``: the next-token logits, ``[batch, vocab]`` (the last position's, with
  ``logits_to_keep=1`` so the head runs on that position only);
- any other architecture: the base model's ``last_hidden_state`` ``[batch, seq, hidden]``;
- ``output="NAME"``: field ``NAME`` of the model's output (``logits``, ``pooler_output``, ...).

Its input is ``input_ids`` (int64 ``[batch, seq]``; no padding mask). Batch (1..64) and sequence
(1..``max_position_embeddings``) are dynamic unless ``batch``/``seq`` fix them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import torch
from torch import nn

from compiler.frontend.checkpoint_layout import Layout, Merged
from compiler.frontend.final_norm import final_norm_on_last_position
from compiler.frontend.model_source import ModelSource
from compiler.frontend.prequantized import (
    ExpertReader,
    Prequantized,
    StoredWeight,
    check_scale,
    codes_as_int8,
    dequantize,
    dequantize_mxfp4,
    dequantize_nvfp4,
    find_stored,
)
from compiler.frontend.quantized_formats import StoredFormat, stored_format
from compiler.frontend.read_buffers import ReadBuffers
from compiler.frontend.tensor_read import may_read_direct, read_tensor
from compiler.frontend.weights import numpy_tensor
from passes.base.errors import QmlirError, exception_summary
from passes.ir.parameters import Reader

MAX_BATCH = 64
# tensor reads of at most this many bytes reuse the memory of dropped ones, holding at most
# twice as many bytes for it: an 8B layer's three 117 MB MLP weights (read_buffers.py)
REUSED_BYTES = 256 << 20
EXAMPLE_BATCH, EXAMPLE_SEQ = 2, 8  # export examples (a size 1 would be specialized)


def is_checkpoint(path: str | Path) -> bool:
    return Path(path).is_dir()


_DTYPES = {
    "F32": np.dtype(np.float32),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "F16": np.dtype(np.float16),
    "F64": np.dtype(np.float64),
    "I64": np.dtype(np.int64),
    "I32": np.dtype(np.int32),
    "I16": np.dtype(np.int16),
    "I8": np.dtype(np.int8),
    "U8": np.dtype(np.uint8),
    "BOOL": np.dtype(np.bool_),
    "F8_E4M3": np.dtype(ml_dtypes.float8_e4m3fn),
}


@dataclass(frozen=True)
class _Stored:
    file: Path
    dtype: str
    shape: tuple[int, ...]
    start: int  # in the file
    nbytes: int


class CheckpointReader:
    """Reads a compiled function's weights, by their state-dict names (``names``: each one's
    name in the checkpoint), from ``checkpoint``; :meth:`advise` asks the kernel to fetch one
    from disk ahead of its read (``compiler/backend/weight_stream.py``)."""

    def __init__(self, checkpoint: Checkpoint, names: dict[str, str]) -> None:
        self._checkpoint = checkpoint
        self._names = names

    def __call__(self, name: str) -> np.ndarray:
        if name not in self._names:
            raise QmlirError(
                f"checkpoint '{self._checkpoint.folder}' has no tensor "
                f"'{name.split('.', 1)[1]}', which the compiled function reads"
            )
        return self._checkpoint.read(self._names[name])

    def advise(self, name: str) -> None:
        if name in self._names:
            self._checkpoint.advise(self._names[name])


class Checkpoint:
    """The safetensors shards of a folder: each tensor's file, dtype and shape (headers only),
    and its values on request (:meth:`read`).

    A tensor is read with one read into memory of its own (``tensor_read.py``: past the page
    cache where the cache does not hold it), not through a mapping of the shard: a mapping
    keeps every page it touched in the process's RSS until it is closed (an 8B checkpoint
    streamed through ``safe_open`` peaked at 19.6 GB), a read holds one tensor.

    A quantized checkpoint (``fmt``, ``quantized_formats.py``): its FP8 weights and their scales
    are checked here (every scale read: they are small), :meth:`read` gives such a weight
    dequantized and :meth:`read_codes` its codes and scale as stored."""

    def __init__(self, folder: Path, fmt: StoredFormat | None = None) -> None:
        self.folder = folder
        self._buffers = ReadBuffers(largest=REUSED_BYTES, keep=2 * REUSED_BYTES)
        files = sorted(folder.glob("*.safetensors"))
        index = folder / "model.safetensors.index.json"
        if index.is_file():
            try:
                weight_map = json.loads(index.read_text())["weight_map"]
            except (ValueError, KeyError, TypeError) as e:
                raise QmlirError(f"'{index}' is not a safetensors index: {e}") from None
            wanted = sorted({folder / f for f in weight_map.values()})
            missing = [f for f in wanted if not f.is_file()]
            if missing:
                raise QmlirError(f"'{missing[0]}' is missing: '{index.name}' maps tensors to it")
            files = wanted
        if not files:
            raise QmlirError(f"'{folder}' holds no *.safetensors weights")
        self._stored: dict[str, _Stored] = {}
        for f in files:
            self._stored.update(_shard_tensors(f))
        self.files = {name: t.file for name, t in self._stored.items()}
        self.shapes = {name: t.shape for name, t in self._stored.items()}
        self.dtypes = {name: t.dtype for name, t in self._stored.items()}
        self._merged: dict[str, Merged] = {}  # "merged:<model name>" → its per-expert parts
        self.format = fmt
        self.quantized: dict[str, StoredWeight] = {}
        self._scales: dict[str, np.ndarray] = {}
        self.input_scales: dict[str, float] = {}  # by quantized weight, a static format's
        # NVFP4: each weight's global (S, S_dec) as stored (the other one: its f32 reciprocal)
        self.global_scales: dict[str, tuple[np.float32, np.float32]] = {}
        self._codes: dict[str, str] = {}  # a packed weight's name → its codes' tensor
        if fmt is not None:
            self.quantized = find_stored(fmt, self.shapes, self.dtypes, self.files)
            for name, weight in self.quantized.items():
                own = self.format_of(name)
                scale = self.read_stored(weight.scale)
                self._scales[weight.scale] = check_scale(
                    weight.scale, scale, self.files[weight.scale], own.scale_kind
                ).reshape(own.scale_shape(weight.shape))
                if weight.input_scale is not None:
                    value = self._per_layer(weight.input_scale)
                    # a multiplier, as activation scales are (a divisor: its f32 reciprocal)
                    decode = np.float32(1) / value if own.input_divides else value
                    self.input_scales[name] = float(decode)
                if weight.global_scale is not None:
                    value = self._per_layer(weight.global_scale)
                    inverse = np.float32(1) / value
                    self.global_scales[name] = (
                        (value, inverse) if own.global_divides else (inverse, value)
                    )
                if weight.codes is not None:  # the model's name for it, its [out, in] shape
                    self._codes[name] = weight.codes
                    self.files[name] = self.files[weight.codes]
                    self.dtypes[name] = self.dtypes[weight.codes]
                self.shapes[name] = weight.shape

    def format_of(self, name: str) -> StoredFormat:
        """The format quantized weight ``name`` is stored in (a mixed checkpoint: its group's)."""
        weight = self.quantized[name]
        assert self.format is not None
        return weight.format or self.format

    def _per_layer(self, name: str) -> np.float32:
        """A per-layer scale tensor's value, checked (finite and positive)."""
        value = self.read_stored(name).astype(np.float32)
        return np.float32(check_scale(name, value, self.files[name]).reshape(-1)[0])

    def read(self, name: str) -> np.ndarray:
        merged = self._merged.get(name)
        if merged is not None:  # one tensor of all experts, stacked as transformers loads it
            stacks = [np.stack([self.read(n) for n in names]) for names in merged.parts]
            return np.concatenate(stacks, axis=1) if merged.concat else stacks[0]
        if name in self.quantized:
            own = self.format_of(name)
            codes, scale = self.read_codes(name)
            if own.packed and own.scale_kind == "e8m0":
                return dequantize_mxfp4(codes, scale)
            if own.packed:
                return dequantize_nvfp4(codes, scale, self.global_scales[name][1])
            block = None if own.block is None else own.weight_block(codes.shape)
            return dequantize(codes, scale, block)
        return self.read_stored(name)

    def merges_quantized(self, name: str) -> bool:
        """Whether ``name`` stacks expert matrices stored as FP8."""
        merged = self._merged.get(name)
        return merged is not None and any(
            n in self.quantized for names in merged.parts for n in names
        )

    def expert_refusal(self, key: str) -> str | None:
        """Why the FP8 matrices that merged tensor ``key`` stacks cannot be taken as stored,
        one expert's slice at a time (None: they can, :meth:`expert_codes`). A slice joins its
        source patterns (Mixtral's ``w1`` and ``w3``: gate before up) along its rows: whole
        blocks of rows, or one per-tensor scale for all of them."""
        merged = self._merged[key]
        names = [n for part in merged.parts for n in part]
        if not all(n in self.quantized for n in names):
            return "some of its experts' matrices are stored in high precision"
        fmt = self.format_of(names[0])
        if any(self.format_of(n) is not fmt for n in names):
            return "its experts' matrices are stored in more than one format"
        if fmt.packed:
            return f"its experts are {fmt.name}, which qmlir does not join yet"
        if not merged.concat or len(merged.parts) == 1:
            return None
        for part in merged.parts[:-1]:
            rows = self.quantized[part[0]].shape[0]
            if fmt.block is not None and rows % fmt.weight_block(self.shapes[part[0]])[0]:
                return (
                    f"its joined matrices' {rows} rows are not whole {fmt.name} blocks, "
                    "so the joined blocks would mix them"
                )
        if fmt.block is None:
            for expert in range(len(merged.parts[0])):
                scales = [self._scales[self.quantized[p[expert]].scale] for p in merged.parts]
                if any(not np.array_equal(s, scales[0]) for s in scales[1:]):
                    return (
                        f"expert {expert}'s joined matrices have per-tensor scales of their "
                        "own, where the joined weight takes one"
                    )
        return None

    def expert_codes(self, key: str, expert: int) -> tuple[np.ndarray, np.ndarray]:
        """Expert ``expert``'s slice of merged tensor ``key`` as stored: its matrices' codes and
        scales (:meth:`read_codes`), joined along the rows where the slice joins several
        (:meth:`expert_refusal` says whether it may)."""
        merged = self._merged[key]
        parts = [self.read_codes(names[expert]) for names in merged.parts]
        if len(parts) == 1:
            return parts[0]
        codes = np.concatenate([c for c, _ in parts], axis=0)
        if self.format_of(merged.parts[0][expert]).block is None:
            return codes, parts[0][1]
        return codes, np.concatenate([s for _, s in parts], axis=0)

    def expert_format(self, key: str) -> StoredFormat:
        """The format of merged tensor ``key``'s matrices (its first one's)."""
        return self.format_of(self._merged[key].parts[0][0])

    def read_codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """An FP8 weight as stored: its codes (int8 bytes) and its scale (f32; E8M0: int8
        bytes, as qmlir's mxfp8 scales are)."""
        weight = self.quantized[name]
        scale = self._scales[weight.scale]
        return codes_as_int8(self.read_stored(name)), (
            scale.view(np.int8) if scale.dtype.itemsize == 1 else scale
        )

    def stored_shape(self, name: str) -> tuple[int, ...]:
        """Tensor ``name``'s shape as stored (a packed weight: its codes')."""
        t = self._stored.get(self._codes.get(name, name))
        if t is None:
            raise QmlirError(f"checkpoint '{self.folder}' has no tensor '{name}'")
        return t.shape

    def advise(self, name: str) -> None:
        """Asks the kernel to read tensor ``name`` (as stored) into the page cache now, in the
        background (``posix_fadvise`` WILLNEED; nothing where the platform lacks it, nor for a
        tensor that :meth:`read_stored` reads past the page cache if the cache lacks it)."""
        t = self._stored.get(self._codes.get(name, name))
        if t is None or not hasattr(os, "posix_fadvise") or may_read_direct(t.file, t.nbytes):
            return  # a direct read fetches it itself (compiler/frontend/tensor_read.py)
        try:
            fd = os.open(t.file, os.O_RDONLY)
        except OSError:
            return  # the read itself will say what is wrong
        try:
            os.posix_fadvise(fd, t.start, t.nbytes, os.POSIX_FADV_WILLNEED)
        finally:
            os.close(fd)

    def read_stored(self, name: str) -> np.ndarray:
        """A tensor's values as stored (an FP8 weight's codes as E4M3)."""
        t = self._stored.get(self._codes.get(name, name))
        if t is None:
            raise QmlirError(f"checkpoint '{self.folder}' has no tensor '{name}'")
        if t.dtype not in _DTYPES:
            raise QmlirError(f"'{t.file}': tensor '{name}' is {t.dtype}, which qmlir cannot read")
        # 64-byte aligned: IREE takes it without a copy (imported)
        data = read_tensor(t.file, t.start, t.nbytes, self._buffers)
        if data.nbytes != t.nbytes:
            raise QmlirError(f"'{t.file}' is truncated: tensor '{name}' ends past its end")
        return data.view(_DTYPES[t.dtype]).reshape(t.shape)

    def check(self, model: nn.Module, model_type: str = "") -> dict[str, str]:
        """Every parameter and persistent buffer of ``model`` that the shards hold has its
        shape there; returns the name each is stored under (a tied weight: any of its names),
        following transformers' renamings and expert merges for ``model_type``
        (``checkpoint_layout.py``). One they lack is an error when the compiled function reads
        it (a head it does not compute may be absent: a ``BertModel`` saved without its
        pooler)."""
        aliases: dict[int, list[str]] = {}
        for name, p in model.named_parameters(remove_duplicate=False):
            aliases.setdefault(id(p), []).append(name)
        layout = Layout(model_type, self.files)
        stored: dict[str, str] = {}
        expected = dict(model.state_dict(keep_vars=True))
        for name, tensor in expected.items():
            names = aliases.get(id(tensor), [name])
            found = next((n for n in names if n in self.files), None)
            if found is None:
                found = next((f for n in names if (f := layout.find(n)) is not None), None)
            if found is None and tensor.ndim >= 1:
                found = self._merge(name, layout.merged(name, tensor.shape[0]), tensor)
            if found is None:
                continue  # read only if used; a buffer the model computes itself is real
            if found in self._merged:
                stored[name] = found
                continue
            if self.shapes[found] != tuple(tensor.shape):
                raise QmlirError(
                    f"'{self.files[found]}': tensor '{found}' has shape "
                    f"{list(self.shapes[found])}, the config's model needs {list(tensor.shape)}"
                )
            stored[name] = found
        return stored

    def _merge(self, name: str, merged: Merged | None, tensor: torch.Tensor) -> str | None:
        """Registers ``merged`` as the stored form of model tensor ``name`` (its shape checked
        against ``tensor``'s); the key :meth:`read` takes."""
        if merged is None:
            return None
        first = [self.shapes[names[0]] for names in merged.parts]
        for names, shape in zip(merged.parts, first, strict=True):
            for n in names:
                if self.shapes[n] != shape:
                    raise QmlirError(
                        f"'{self.files[n]}': tensor '{n}' has shape {list(self.shapes[n])}, its "
                        f"other experts' are {list(shape)}"
                    )
        experts = len(merged.parts[0])
        if merged.concat:
            rows = sum(shape[0] for shape in first)
            got = (experts, rows, *first[0][1:])
        else:
            got = (experts, *first[0])
        if got != tuple(tensor.shape):
            raise QmlirError(
                f"checkpoint '{self.folder}': the experts of '{name}' stack to {list(got)}, the "
                f"config's model needs {list(tensor.shape)}"
            )
        key = f"merged:{name}"
        self._merged[key] = merged
        return key


def _shard_tensors(path: Path) -> dict[str, _Stored]:
    """The tensors a safetensors shard holds, from its header; one line if it is not one."""
    try:
        with open(path, "rb") as f:
            length = int.from_bytes(f.read(8), "little")
            if not 0 < length <= 100 << 20:
                raise ValueError("header length")
            header = json.loads(f.read(length))
        size = path.stat().st_size
        out = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            begin, end = entry["data_offsets"]
            start = 8 + length + begin
            if not 0 <= begin <= end or start + (end - begin) > size:
                raise ValueError(f"tensor '{name}' lies past the end of the file")
            out[name] = _Stored(path, entry["dtype"], tuple(entry["shape"]), start, end - begin)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise QmlirError(f"'{path}' is not a safetensors file ({e})") from None
    return out


@contextlib.contextmanager
def parameters_on_meta() -> Iterator[None]:
    """Every parameter registered in the block goes to the meta device (no storage); buffers
    stay where their module put them."""
    register = nn.Module.register_parameter

    def on_meta(module: nn.Module, name: str, param: nn.Parameter | None) -> None:
        register(module, name, param)
        if param is not None and not param.is_meta:  # a tied weight (already meta) stays tied
            kept = module._parameters[name]
            assert kept is not None
            module._parameters[name] = nn.Parameter(
                kept.to("meta"), requires_grad=kept.requires_grad
            )

    nn.Module.register_parameter = on_meta  # type: ignore[method-assign]
    try:
        yield
    finally:
        nn.Module.register_parameter = register  # type: ignore[method-assign]


class NextTokenLogits(nn.Module):
    """A causal LM → the logits of the token after the last position (``last_mlp``: its last
    layer's MLP over that position alone, final_norm.py)."""

    def __init__(self, lm: nn.Module, last_mlp: bool = False) -> None:
        super().__init__()
        self.lm, self.last_mlp = lm, last_mlp

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        # the same values (final_norm.py)
        with final_norm_on_last_position(self.lm, self.last_mlp):
            out = self.lm(input_ids=input_ids, use_cache=False, logits_to_keep=1)
        return out.logits[:, -1, :]


class OutputField(nn.Module):
    """A model → one field of its output."""

    def __init__(self, model: nn.Module, field: str) -> None:
        super().__init__()
        self.model = model
        self.field = field

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        out = self.model(input_ids=input_ids)
        return getattr(out, self.field)


@dataclass
class OpenedCheckpoint:
    """A folder's model built on the meta device (``model``, of class ``architecture``), its
    ``config``, and the checkpoint its weights are read from."""

    folder: Path
    model: nn.Module
    architecture: str
    config: Any
    checkpoint: Checkpoint
    stored: dict[str, str]  # the model's state-dict names → the checkpoint's

    def prequantized(self, wrapper: nn.Module) -> Prequantized | None:
        """A quantized checkpoint's FP8 weights by ``wrapper``'s state-dict names (None for a
        plain checkpoint)."""
        fmt = self.checkpoint.format
        if fmt is None:
            return None
        names = self._wrapper_names(wrapper)
        stored = {n: s for n, s in names.items() if s in self.checkpoint.quantized}
        unquantized = tuple(
            n.removesuffix(".weight")
            for n, s in names.items()
            if n.endswith(".weight") and s not in self.checkpoint.quantized
        )
        scales = tuple(
            (n.removesuffix(".weight"), self.checkpoint.input_scales[s])
            for n, s in stored.items()
            if s in self.checkpoint.input_scales
        )
        merged = {n: s for n, s in names.items() if self.checkpoint.merges_quantized(s)}
        formats = {n: self.checkpoint.format_of(s) for n, s in stored.items()}
        return Prequantized(
            fmt,
            stored,
            self.checkpoint.read_codes,
            unquantized,
            self.checkpoint.shapes,
            scales,
            merged,
            self.checkpoint.global_scales.__getitem__,
            formats,
            ExpertReader(
                self.checkpoint.expert_codes,
                self.checkpoint.expert_refusal,
                self.checkpoint.expert_format,
            ),
        )

    def _wrapper_names(self, wrapper: nn.Module) -> dict[str, str]:
        """``wrapper``'s state-dict names (a module holding :attr:`model`) → the checkpoint's."""
        by_tensor = {
            id(t): self.stored[n]
            for n, t in self.model.state_dict(keep_vars=True).items()
            if n in self.stored
        }
        return {
            n: by_tensor[id(t)]
            for n, t in wrapper.state_dict(keep_vars=True).items()
            if id(t) in by_tensor
        }

    def reader(self, wrapper: nn.Module) -> Reader:
        """Reads ``wrapper``'s weights (a module holding :attr:`model`) by its state-dict
        names from the checkpoint."""
        by_tensor = {
            id(t): self.stored[n]
            for n, t in self.model.state_dict(keep_vars=True).items()
            if n in self.stored
        }
        names = {
            n: by_tensor[id(t)]
            for n, t in wrapper.state_dict(keep_vars=True).items()
            if id(t) in by_tensor
        }

        return CheckpointReader(self.checkpoint, names)

    @property
    def max_positions(self) -> int:
        """The longest sequence the config allows (4096 where it names none)."""
        return int(getattr(self.config, "max_position_embeddings", 0) or 0) or 4096


def open_checkpoint(folder: Path) -> OpenedCheckpoint:
    """The folder's model on the meta device, its shards checked against the config."""
    if not (folder / "config.json").is_file():
        raise QmlirError(
            f"'{folder}' has no config.json: a model folder is what save_pretrained writes"
        )
    for name in ("transformers", "torchao", "torch.utils._pytree"):
        logging.getLogger(name).setLevel(logging.ERROR)
    import transformers

    try:
        config = transformers.AutoConfig.from_pretrained(str(folder))
    except Exception as e:
        raise QmlirError(f"'{folder / 'config.json'}': {exception_summary(e)}") from e
    architectures = getattr(config, "architectures", None) or []
    if not architectures:
        raise QmlirError(f"'{folder / 'config.json'}' names no architectures")
    cls = getattr(transformers, architectures[0], None)
    if cls is None:
        raise QmlirError(
            f"'{folder / 'config.json'}': transformers has no architecture '{architectures[0]}'"
        )
    checkpoint = Checkpoint(folder, stored_format(folder))
    dtype = _checkpoint_dtype(config)
    config.use_cache = False
    try:
        with parameters_on_meta():
            model = cls._from_config(config, dtype=dtype, attn_implementation="sdpa")
    except Exception as e:
        raise QmlirError(f"cannot build {architectures[0]}: {exception_summary(e)}") from e
    model.eval()
    stored = checkpoint.check(model, str(getattr(config, "model_type", "")))
    _stored_buffers_on_meta(model, stored)
    return OpenedCheckpoint(folder, model, architectures[0], config, checkpoint, stored)


def load_checkpoint(
    folder: Path,
    output: str | None = None,
    batch: int | None = None,
    seq: int | None = None,
    last_mlp: bool = False,
) -> ModelSource:
    """The folder's model, on the meta device, with its checkpoint as the weights' reader
    (``last_mlp``: a causal LM's next-token logits with its last MLP over the last position
    alone, :class:`NextTokenLogits`)."""
    opened = open_checkpoint(folder)
    wrapper = _wrapped(opened.model, opened.architecture, output, last_mlp)
    limit = opened.max_positions
    ids = torch.zeros((batch or EXAMPLE_BATCH, seq or min(EXAMPLE_SEQ, limit)), dtype=torch.int64)
    dims: dict[int, Any] = {}
    if batch is None:
        dims[0] = torch.export.Dim("batch", min=1, max=MAX_BATCH)
    if seq is None:
        dims[1] = torch.export.Dim("seq", min=1, max=limit)
    _check_static(batch, MAX_BATCH * 1024, "--batch")
    _check_static(seq, limit, "--seq")
    return ModelSource(
        folder.resolve().name,
        wrapper,
        (ids,),
        dynamic_shapes=({**dims},) if dims else None,
        reader=opened.reader(wrapper),
        prequantized=opened.prequantized(wrapper),
    )


def model_paths(opened: OpenedCheckpoint, output: str | None = None) -> dict[str, str]:
    """The compiled function's module paths (``lm.model.layers.0...``, what ``--explain`` and
    ``qmlir calibrate`` name) → the folder's model's own (``model.layers.0...``)."""
    wrapper = _wrapped(opened.model, opened.architecture, output)
    own = {id(m): n for n, m in opened.model.named_modules()}
    return {n: own[id(m)] for n, m in wrapper.named_modules() if id(m) in own}


def _stored_buffers_on_meta(model: nn.Module, stored: dict[str, str]) -> None:
    """The floating-point buffers the checkpoint holds go to the meta device beside the
    parameters: their values are read from the checkpoint as the parameters' are, and a forward
    that combines one with a parameter's result would otherwise mix devices, which
    ``torch.export`` refuses (DeepSeek-V3's router adds its stored ``e_score_correction_bias``
    to the scores). Buffers the model computes itself (rotary frequencies), and integer ones,
    stay real."""
    for name, buffer in list(model.named_buffers()):
        if name in stored and buffer.is_floating_point() and not buffer.is_meta:
            path, _, attribute = name.rpartition(".")
            owner = model.get_submodule(path) if path else model
            owner._buffers[attribute] = buffer.to("meta")


def _check_static(size: int | None, limit: int, flag: str) -> None:
    if size is not None and not 1 <= size <= limit:
        raise QmlirError(f"{flag} {size} is out of range (1..{limit})")


def _checkpoint_dtype(config: Any) -> torch.dtype:
    """The dtype the config says the weights are in (f32 where it says none)."""
    dtype = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype, None)
    return dtype if dtype in (torch.float32, torch.bfloat16, torch.float16) else torch.float32


def _wrapped(
    model: nn.Module, architecture: str, output: str | None, last_mlp: bool = False
) -> nn.Module:
    if output is None and architecture.endswith("ForCausalLM"):
        return NextTokenLogits(model, last_mlp)
    if output is None:
        base = getattr(model, "base_model", model)
        return OutputField(base, "last_hidden_state")
    return OutputField(model, output)


def materialize(source: ModelSource) -> None:
    """Loads the checkpoint's weights into ``source.module`` (for ``report`` and ``--compare``,
    which run the model in torch: the whole model in memory, as transformers would hold it)."""
    assert source.reader is not None
    values = {}
    for name, t in source.module.state_dict(keep_vars=True).items():
        if t.is_meta:
            try:
                values[name] = numpy_tensor(source.reader(name)).to(t.dtype)
            except QmlirError:  # not in the checkpoint: a part the outputs do not read
                values[name] = torch.zeros(t.shape, dtype=t.dtype)
    source.module.load_state_dict(values, strict=False, assign=True)
