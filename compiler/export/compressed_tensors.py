"""``export_checkpoint``: a model's weights quantized by a recipe, written as a compressed-tensors
checkpoint folder that transformers, vLLM and SGLang load.

Each linear layer the recipe quantizes gets qmlir's own codes and scales, from the compiled
quantize core (``compiler.quantize(w, recipe, role="weight")``: the bytes a compiled artifact's
parameter file holds); every other tensor is copied as it is stored. Scales are written in f32
(compressed-tensors' own writer stores them in the model's dtype: bf16 would round a scale that
is not a power of two). A quantized checkpoint folder exported with its own recipe keeps its
codes and scales byte for byte: import then export is the identity.

What each recipe maps to (``docs/checkpoints.md`` has the table):

- ``fp8-block``: FP8_BLOCK (``float-quantized``): E4M3 weights with a scale per 128x128 block,
  activations dynamic per 1x128 group;
- ``fp8-current``: ``float-quantized`` with one weight scale per tensor and dynamic per-tensor
  activations;
- ``mxfp8``: MXFP8 (``mxfp8-quantized``): E4M3 weights with an E8M0 scale (uint8) per 1x32,
  activations dynamic per 1x32;
- ``mxfp4``: MXFP4 (``mxfp4-pack-quantized``): E2M1 weights packed two per byte (low nibble
  first, ``weight_packed``) with an E8M0 scale (uint8) per 1x32, activations dynamic per 1x32;
  compressed-tensors quantizes those activations by its own E8M0 rule (qmlir's ``even``);
- ``fp8-rowwise``: FP8_DYNAMIC (``float-quantized``): E4M3 weights with a scale per output
  channel, activations dynamic per token;
- ``nvfp4``, ``fp8-delayed``, ``none``: refused. NVFP4 checkpoints carry a static activation
  ``input_global_scale`` where qmlir computes the activations' global scale at every call;
  fp8-delayed's activation scales live in the artifact's state.

Activation scales are never stored (but nvfp4's global ones; the others are dynamic): the
serving engine quantizes activations by its own rule (TE's and compressed-tensors' may round a
scale differently).
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from compiler.frontend.checkpoint import model_paths, open_checkpoint
from compiler.frontend.moe import moe_routers
from compiler.frontend.quantized_formats import folder_recipe
from compiler.frontend.weights import tensor_numpy
from passes.base.errors import QmlirError

VERSION = "0.20.0"  # the compressed-tensors release whose config layout this writes
FORMATS = {
    "fp8-block": "float-quantized",
    "fp8-current": "float-quantized",
    "fp8-rowwise": "float-quantized",
}
FORMATS["mxfp8"] = "mxfp8-quantized"
FORMATS["mxfp4"] = "mxfp4-pack-quantized"
FORMATS["nvfp4"] = "nvfp4-pack-quantized"
STATIC = ("fp8-current", "nvfp4")  # recipes whose activations take a stored static scale
_NVFP4 = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}
_MXFP4 = {"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32}
_E8M0_SCALES = {"scale_dtype": "torch.uint8", "zp_dtype": "torch.uint8"}
_E4M3_SCALES = {"scale_dtype": "torch.float8_e4m3fn", "zp_dtype": "torch.float8_e4m3fn"}
# files of a model folder that travel with its weights
COPIED = (
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "tokenizer.model",
    "vocab.json",
    "vocab.txt",
    "merges.txt",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
)
_TORCH_DTYPES = {
    torch.float32: "F32",
    torch.bfloat16: "BF16",
    torch.float16: "F16",
    torch.float64: "F64",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
    torch.float8_e4m3fn: "F8_E4M3",
}


def _activation_args(recipe: str, static: bool = False) -> dict[str, Any]:
    if recipe == "nvfp4":  # a static global scale per layer, E4M3 scales per 16 at run time
        return {**_NVFP4, "symmetric": True, "dynamic": "local", **_E4M3_SCALES}
    if recipe == "mxfp4":
        return {**_MXFP4, "symmetric": True, "dynamic": True, **_E8M0_SCALES}
    args: dict[str, Any] = {"num_bits": 8, "type": "float", "symmetric": True, "dynamic": True}
    if static:  # fp8-current with a calibrated input_scale per layer
        return {**args, "dynamic": False, "strategy": "tensor"}
    if recipe == "fp8-block":
        return {**args, "strategy": "group", "group_size": 128}
    if recipe == "mxfp8":
        return {**args, "strategy": "group", "group_size": 32, "scale_dtype": "torch.uint8"}
    if recipe == "fp8-rowwise":
        return {**args, "strategy": "token"}
    return {**args, "strategy": "tensor"}


def _weight_args(recipe: str) -> dict[str, Any]:
    if recipe == "nvfp4":
        return {**_NVFP4, "symmetric": True, "dynamic": False, **_E4M3_SCALES}
    if recipe == "mxfp4":
        return {**_MXFP4, "symmetric": True, "dynamic": False, **_E8M0_SCALES}
    args: dict[str, Any] = {"num_bits": 8, "type": "float", "symmetric": True, "dynamic": False}
    if recipe == "fp8-block":
        return {**args, "strategy": "block", "block_structure": [128, 128]}
    if recipe == "mxfp8":
        return {**args, "strategy": "group", "group_size": 32, "scale_dtype": "torch.uint8"}
    if recipe == "fp8-rowwise":
        return {**args, "strategy": "channel"}
    return {**args, "strategy": "tensor"}


def quantization_config(
    groups: dict[str, list[str]], ignore: list[str], static: bool = False
) -> dict[str, Any]:
    """compressed-tensors' ``quantization_config``: one group per recipe (its layers' module
    paths as targets), the layers kept in high precision in ``ignore``; ``static``: fp8-current's
    activations at a stored ``input_scale``."""
    formats = {FORMATS[r] for r in groups}
    config_groups = {
        f"group_{i}": {
            "targets": sorted(layers),
            "weights": _weight_args(recipe),
            "input_activations": _activation_args(recipe, static and recipe == "fp8-current"),
            "output_activations": None,
            "format": FORMATS[recipe],
        }
        for i, (recipe, layers) in enumerate(sorted(groups.items()))
    }
    return {
        "quant_method": "compressed-tensors",
        "format": formats.pop() if len(formats) == 1 else "mixed-precision",
        "quantization_status": "compressed",
        "config_groups": config_groups,
        "ignore": sorted(ignore),
        "kv_cache_scheme": None,
        "sparsity_config": {},
        "transform_config": {},
        "global_compression_ratio": None,
        "version": VERSION,
    }


@dataclass(frozen=True)
class _Tensor:
    """A tensor of the folder: name, safetensors dtype, shape, and how to make its values."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    make: Callable[[], np.ndarray]

    @property
    def nbytes(self) -> int:
        item = {"F32": 4, "F64": 8, "I64": 8, "I32": 4, "BF16": 2, "F16": 2, "I16": 2}
        return int(np.prod(self.shape, dtype=np.int64)) * item.get(self.dtype, 1)


def export_checkpoint(
    model: nn.Module | str | Path,
    folder: str | Path,
    recipe: str | None = None,
    *,
    exclude: list[str] | tuple[str, ...] = (),
    layer_recipes: dict[str, str] | None = None,
    activation_scales: dict[str, float] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    **options: Any,
) -> Path:
    """Writes ``model`` (a transformers model, or a checkpoint folder, read one tensor at a
    time) to ``folder`` as a compressed-tensors checkpoint whose linear layers hold ``recipe``'s
    codes and scales (default fp8-current; a quantized checkpoint folder: its own, its codes
    kept). ``exclude`` globs (module paths) and MoE routers stay in high precision (the config's
    ``ignore``); ``layer_recipes`` maps globs to other recipes (config groups).
    ``activation_scales`` (``compiler.calibrate``'s, by module path) makes fp8-current's
    activations static: each layer's ``input_scale`` is written (every fp8-current layer needs
    one). ``options`` are the recipe's. The folder is written beside and renamed into place:
    never half-written."""
    source = Path(model) if isinstance(model, (str, Path)) else None
    recipe, options = folder_recipe(source, recipe, options)
    layer_recipes = dict(layer_recipes or {})
    for name in {recipe, *layer_recipes.values()}:
        _check_recipe(name)
    if source is not None:
        opened = open_checkpoint(source)
        module, config = opened.model, opened.config
        if activation_scales:  # keys as the compiled function names layers: the model's
            paths = model_paths(opened)
            activation_scales = {paths.get(k, k): v for k, v in activation_scales.items()}
        names = opened.stored  # model names → the checkpoint's
        checkpoint = opened.checkpoint
        stored_format = checkpoint.format
        if stored_format is not None and layer_recipes:
            raise QmlirError(
                "a quantized checkpoint exports with its own recipe: drop layer_recipes"
            )
        for fmt in (stored_format, *(f for _, f in getattr(stored_format, "groups", ()))):
            if fmt is not None and fmt.global_name and not fmt.global_divides:
                raise QmlirError(
                    f"the checkpoint is {stored_format.name}, whose NVFP4 global scales are "
                    "multipliers where compressed-tensors stores divisors: convert it with "
                    "compressed-tensors' ModelOptNvfp4Converter (it compiles in qmlir as it is)"
                )

        def read(name: str) -> np.ndarray:
            return checkpoint.read(names[name])

        def raw(name: str) -> np.ndarray:
            return checkpoint.read_stored(names[name])
    else:
        assert isinstance(model, nn.Module)
        config = getattr(model, "config", None)
        if config is None or not hasattr(config, "to_dict"):
            raise QmlirError(
                f"export needs a transformers model (one with a config), not {type(model).__name__}"
            )
        module, checkpoint, stored_format = model, None, None
        state = dict(model.state_dict())
        names = {n: n for n in state}

        def read(name: str) -> np.ndarray:
            return tensor_numpy(state[name])

        raw = read
    routers = set(moe_routers(module))
    shared = _shared_weights(module)
    groups: dict[str, list[str]] = {}
    ignore: list[str] = []
    choice: dict[str, str] = {}
    for path, sub in module.named_modules():
        if not isinstance(sub, nn.Linear) or f"{path}.weight" not in names:
            continue
        chosen = _layer_recipe(path, recipe, exclude, layer_recipes, routers)
        if f"{path}.weight" in shared:  # a head tied to the embedding: one tensor, unquantized
            chosen = None
        if stored_format is not None:
            quantized = names[f"{path}.weight"] in checkpoint.quantized  # type: ignore[union-attr]
            own = checkpoint.format_of(names[f"{path}.weight"]).recipe if quantized else None  # type: ignore[union-attr]
            chosen = own if chosen is not None else None
            if quantized and chosen is None:
                raise QmlirError(
                    f"'{path}' is stored as {stored_format.name}: export keeps it as stored "
                    "(drop its --exclude)"
                )
        if chosen is None:
            ignore.append(path)
            continue
        groups.setdefault(chosen, []).append(path)
        choice[f"{path}.weight"] = chosen
    if not groups:
        raise QmlirError(f"no linear layer is left to quantize with '{recipe}'")
    inputs = _input_scales(activation_scales, groups, stored_format)
    tensors = list(
        _tensors(
            module, names, choice, read, raw, checkpoint, stored_format, options, recipe, inputs
        )
    )
    quant = quantization_config(groups, ignore, bool(inputs) or _static(stored_format))
    if stored_format is not None and stored_format.name.startswith("compressed-tensors"):
        quant = json.loads((source / "config.json").read_text())["quantization_config"]
    data = config.to_dict()
    if source is None:  # what save_pretrained records of the model itself
        data["architectures"] = [type(module).__name__]
        dtypes = [p.dtype for p in module.parameters() if p.is_floating_point()]
        if dtypes:
            data["dtype"] = str(dtypes[0]).removeprefix("torch.")
    data["quantization_config"] = quant
    return _write_folder(Path(folder), data, tensors, source, progress)


def _static(stored_format: Any) -> bool:
    return stored_format is not None and stored_format.input_scale_name is not None


def _input_scales(
    scales: dict[str, float] | None, groups: dict[str, list[str]], stored_format: Any
) -> dict[str, float]:
    """The static activation scales to write, by layer: every nvfp4 layer needs one (its
    global scale), and every fp8-current layer once any are given."""
    if stored_format is not None:
        if scales:
            raise QmlirError("a quantized checkpoint exports its own activation scales")
        return {}  # written as stored
    if not scales and "nvfp4" not in groups:
        return {}
    scales = scales or {}
    layers = [layer for recipe in STATIC for layer in groups.get(recipe, [])]
    if not layers:
        raise QmlirError(
            "activation_scales make fp8-current's or nvfp4's activations static: no layer is "
            "either (compiler.calibrate gives every linear's)"
        )
    for recipe in STATIC:
        missing = [layer for layer in groups.get(recipe, []) if layer not in scales]
        if missing:
            raise QmlirError(
                f"{recipe} exports static activation scales and layer '{missing[0]}' has none: "
                f"calibrate them (compiler.calibrate(model, batches, recipe='{recipe}'), or "
                f"qmlir calibrate --recipe {recipe}) and pass them as activation_scales"
            )
    return {layer: scales[layer] for layer in layers}


def _shared_weights(module: nn.Module) -> set[str]:
    """The state-dict names of tensors held under several names (a tied head and embedding)."""
    by_id: dict[int, list[str]] = {}
    for name, t in module.state_dict(keep_vars=True).items():
        by_id.setdefault(id(t), []).append(name)
    return {n for names in by_id.values() if len(names) > 1 for n in names}


def _check_recipe(name: str) -> None:
    if name not in FORMATS:
        why = {
            "fp8-delayed": "fp8-delayed's activation scales live in the artifact's state",
            "none": "it quantizes nothing",
        }.get(name, "compressed-tensors has no such format")
        raise QmlirError(
            f"recipe '{name}' does not export to compressed-tensors ({why}); exportable: "
            f"{', '.join(sorted(FORMATS))}"
        )


def _layer_recipe(
    path: str,
    recipe: str,
    exclude: tuple[str, ...] | list[str],
    layer_recipes: dict[str, str],
    routers: set[str],
) -> str | None:
    """A layer's recipe as compile chooses it: excluded, a layer recipe, a router, the default."""
    if any(fnmatch.fnmatchcase(path, g) for g in exclude):
        return None
    for glob, name in layer_recipes.items():
        if fnmatch.fnmatchcase(path, glob):
            return name
    return None if path in routers else recipe


def _tensors(
    module: nn.Module,
    names: dict[str, str],
    choice: dict[str, str],
    read: Callable[[str], np.ndarray],
    raw: Callable[[str], np.ndarray],
    checkpoint: Any,
    stored_format: Any,
    options: dict[str, Any],
    default: str,
    inputs: dict[str, float],
) -> Iterator[_Tensor]:
    """Every tensor of the folder, in the model's state-dict order (tied weights once)."""
    seen: set[int] = set()
    for name, t in module.state_dict(keep_vars=True).items():
        if id(t) in seen or name not in names:
            continue
        seen.add(id(t))
        shape = tuple(t.shape)
        if name not in choice:
            if names[name].startswith("merged:"):
                raise QmlirError(
                    f"'{name}' is stored one matrix per expert: exporting such a checkpoint is "
                    "not supported"
                )
            dtype = checkpoint.dtypes[names[name]] if checkpoint is not None else None
            yield _Tensor(name, dtype or _TORCH_DTYPES[t.dtype], shape, lambda n=name: raw(n))
            continue
        layer = name.removesuffix(".weight")
        if stored_format is not None:  # the checkpoint's tensors, byte for byte
            yield from _stored_tensors(checkpoint, names[name], layer)
            continue
        recipe = choice[name]
        opts = options if recipe == default else {}
        quantized = _Quantized(name, read, recipe, opts)
        if recipe == "nvfp4":
            yield from _nvfp4_tensors(quantized, layer, shape, inputs[layer])
            continue
        if recipe == "mxfp4":
            rows, blocks = shape[0], -(-shape[1] // 32)
            yield _Tensor(f"{layer}.weight_packed", "U8", (rows, blocks * 16), quantized.codes)
            yield _Tensor(f"{layer}.weight_scale", "U8", (rows, blocks), quantized.scale)
            continue
        scale_shape, scale_dtype = _scale_layout(recipe, shape)
        yield _Tensor(name, "F8_E4M3", shape, quantized.codes)
        yield _Tensor(f"{layer}.weight_scale", scale_dtype, scale_shape, quantized.scale)
        if layer in inputs:
            value = np.array([inputs[layer]], np.float32)
            yield _Tensor(f"{layer}.input_scale", "F32", (1,), lambda v=value: v)


def _stored_tensors(checkpoint: Any, stored_name: str, layer: str) -> Iterator[_Tensor]:
    """A stored layer's tensors as the checkpoint holds them, under compressed-tensors' names:
    codes (``weight``, FP4's ``weight_packed``), ``weight_scale``, NVFP4's
    ``weight_global_scale``, and the static ``input_scale`` / ``input_global_scale`` (a scalar
    one as ``[1]``, as compressed-tensors stores it)."""
    fmt = checkpoint.format_of(stored_name)
    stored = checkpoint.quantized[stored_name]
    parts = [(f"{layer}.{'weight_packed' if fmt.packed else 'weight'}", stored_name)]
    parts.append((f"{layer}.weight_scale", stored.scale))
    if stored.global_scale is not None:
        parts.append((f"{layer}.weight_global_scale", stored.global_scale))
    if stored.input_scale is not None:
        kind = "input_global_scale" if fmt.packed else "input_scale"
        parts.append((f"{layer}.{kind}", stored.input_scale))
    for out, source in parts:
        shape = checkpoint.stored_shape(source) or (1,)
        yield _Tensor(
            out,
            checkpoint.dtypes[source],
            shape,
            lambda s=source, to=shape: checkpoint.read_stored(s).reshape(to),
        )


def _nvfp4_tensors(
    quantized: _Quantized, layer: str, shape: tuple[int, ...], decode: float
) -> Iterator[_Tensor]:
    """An nvfp4 layer: packed E2M1 codes, E4M3 block scales, the weight's global scale ``S``
    (compressed-tensors' divisor, the ``448 * 6 / amax`` the quantize core computed) and the
    activation's static global scale ``S = 1 / decode`` (f32)."""
    rows, cols = shape
    blocks = -(-cols // 16)
    yield _Tensor(f"{layer}.weight_packed", "U8", (rows, blocks * 8), quantized.codes)
    yield _Tensor(f"{layer}.weight_scale", "F8_E4M3", (rows, blocks), quantized.scale)
    yield _Tensor(f"{layer}.weight_global_scale", "F32", (1,), quantized.global_encode)
    encode = np.array([np.float32(1) / np.float32(decode)], np.float32)
    yield _Tensor(f"{layer}.input_global_scale", "F32", (1,), lambda v=encode: v)


def _scale_layout(recipe: str, shape: tuple[int, ...]) -> tuple[tuple[int, ...], str]:
    rows, cols = shape
    if recipe == "fp8-block":
        return (-(-rows // 128), -(-cols // 128)), "F32"
    if recipe == "mxfp8":
        return (rows, -(-cols // 32)), "U8"
    if recipe == "fp8-rowwise":
        return (rows, 1), "F32"
    return (1,), "F32"


class _Quantized:
    """One weight through the recipe's compiled quantize core, quantized when its codes are
    first asked for and dropped after its scale is written."""

    def __init__(
        self, name: str, read: Callable[[str], np.ndarray], recipe: str, options: dict[str, Any]
    ) -> None:
        self._name, self._read, self._recipe, self._options = name, read, recipe, options
        self._result: Any = None

    def codes(self) -> np.ndarray:
        from compiler.pipeline.quantize import quantize

        weight = self._read(self._name).astype(np.float32)
        self._result = quantize(weight, self._recipe, role="weight", **self._options)
        return self._result.data

    def scale(self) -> np.ndarray:
        assert self._result is not None, "codes are written before their scale"
        scale = self._result.scale
        if self._recipe != "nvfp4":  # nvfp4: its global scale comes next
            self._result = None
        return scale.reshape(-1) if scale.ndim == 0 else scale

    def global_encode(self) -> np.ndarray:
        """nvfp4: the weight's global encode scale ``S`` (the quantize core's ``S_dec`` is its
        f32 reciprocal): TE's ``min(448 * 6 / amax, FLT_MAX)``, 1 where that is 0, recomputed
        from the weight and checked against the core's ``S_dec``."""
        assert self._result is not None and self._result.global_scale is not None
        decode = np.float32(self._result.global_scale.reshape(-1)[0])
        self._result = None
        weight = self._read(self._name).astype(np.float32)
        amax = np.float32(np.nanmax(np.abs(weight))) if weight.size else np.float32(0)
        with np.errstate(divide="ignore", over="ignore"):
            encode = np.minimum(np.float32(448 * 6) / amax, np.finfo(np.float32).max)
        encode = np.float32(1) if encode == 0 else np.float32(encode)
        if np.float32(1) / encode != decode:
            raise AssertionError(f"{self._name}: S {encode} is not the core's 1 / {decode}")
        return np.array([encode], np.float32)


def _write_folder(
    folder: Path,
    config: dict[str, Any],
    tensors: list[_Tensor],
    source: Path | None,
    progress: Callable[[int, int, str], None] | None,
) -> Path:
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise QmlirError(f"'{folder}' exists and is not an empty folder")
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    tmp.mkdir(parents=True)
    try:
        (tmp / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        _write_safetensors(tmp / "model.safetensors", tensors, progress)
        if source is not None:
            for name in COPIED:
                if (source / name).is_file():
                    shutil.copy2(source / name, tmp / name)
        if folder.exists():
            folder.rmdir()
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _write_safetensors(
    path: Path, tensors: list[_Tensor], progress: Callable[[int, int, str], None] | None
) -> None:
    """One safetensors file, header first (every tensor's dtype and shape is known before any
    is made), then each tensor's bytes as it is made: one weight in memory at a time."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt", "producer": "qmlir"}}
    offset = 0
    for t in tensors:
        header[t.name] = {
            "dtype": t.dtype,
            "shape": list(t.shape),
            "data_offsets": [offset, offset + t.nbytes],
        }
        offset += t.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    written = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for t in tensors:
            array = np.ascontiguousarray(t.make())
            if array.nbytes != t.nbytes or array.size != int(np.prod(t.shape, dtype=np.int64)):
                raise AssertionError(f"{t.name}: {array.dtype}{list(array.shape)} for {t}")
            f.write(memoryview(array.reshape(-1).view(np.uint8)))
            written += t.nbytes
            if progress is not None:
                progress(written, offset, t.name)
