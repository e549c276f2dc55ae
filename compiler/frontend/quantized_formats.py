"""Which quantized checkpoint a folder holds, from its ``config.json`` alone (no torch): the
format, the recipe that computes with its codes and scales as they are stored, and the layers it
keeps in high precision.

qmlir compiles such a folder without re-quantizing a weight: each FP8 weight's codes and scales
go to the parameter file as the checkpoint stores them (``prequantized.py``), activations are
quantized by the recipe at run time. The formats taken (each a weight stored as E4M3 ``[out,
in]`` with a scale that multiplies its codes, activations quantized dynamically):

- transformers ``fp8`` (DeepSeek-V3 style), 128x128 blocks, ``weight_scale_inv``: fp8-block;
- transformers ``fp8`` without blocks, one ``weight_scale_inv`` per tensor: fp8-current (with
  ``activation_scheme: static``, each layer's ``activation_scale`` as its fixed input scale);
- compressed-tensors FP8_BLOCK (float-quantized), 128x128 blocks, ``weight_scale``: fp8-block;
- compressed-tensors FP8 per tensor, ``weight_scale``: fp8-current, activations dynamic or
  static (the FP8 scheme: each layer's ``input_scale`` as its fixed input scale);
- compressed-tensors MXFP8 (mxfp8-quantized), E8M0 ``weight_scale`` (uint8) per 1x32: mxfp8;
- compressed-tensors FP8_DYNAMIC, a ``weight_scale`` per output channel ``[out, 1]``, activations
  per token: fp8-rowwise.

Anything else (static scales other than per tensor, NVFP4/MXFP4 packs, ModelOpt's export, a
quantized KV cache, other ``quant_method``\\ s) is one line naming it and listing these.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passes.base.errors import QmlirError

BLOCK = (128, 128)
SUPPORTED = (
    "transformers fp8 (DeepSeek-V3 style: 128x128 weight blocks with dynamic activations, or per "
    "tensor with dynamic or static activations); compressed-tensors float-quantized FP8_BLOCK, "
    "FP8 per tensor (dynamic or static activations), FP8_DYNAMIC (per-channel weights, "
    "per-token activations) and MXFP8 (mxfp8-quantized)"
)
ROW = (1, 0)  # a block spanning a whole row (the 0: its weight's contraction dim)
MX_BLOCK = (1, 32)


@dataclass(frozen=True)
class StoredFormat:
    """A quantized checkpoint's format: ``name`` (for messages), the ``recipe`` (and recipe
    options) that computes with its codes and scales, each weight's scale tensor (``<module>.``
    + ``scale_name``), the weight block (None: one scale per tensor; :data:`ROW`: one per
    output channel), and the module patterns
    it keeps in high precision (``ignore``: names, or ``re:`` regular expressions)."""

    name: str
    recipe: str
    scale_name: str
    block: tuple[int, int] | None
    options: dict[str, Any] = field(default_factory=dict)
    ignore: tuple[str, ...] = ()
    scale_kind: str = "f32"  # how a scale is stored: f32 (any float dtype) or e8m0 (uint8)
    # a static activation scale per layer (``<module>.<input_scale_name>``, a multiplier)
    input_scale_name: str | None = None

    def scale_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The scale tensor's shape for a weight of ``shape`` (``[out, in]``)."""
        return () if self.block is None else _grid(shape, self.weight_block(shape))

    def weight_block(self, shape: tuple[int, ...]) -> tuple[int, int]:
        """The block of a weight of ``shape``: :data:`ROW` is the whole row."""
        assert self.block is not None
        return (1, shape[1]) if self.block == ROW else self.block

    def ignores(self, module: str) -> bool:
        """Whether the checkpoint keeps ``module`` (a module path) in high precision."""
        for pattern in self.ignore:
            if pattern.startswith("re:"):
                if re.match(pattern[3:], module):
                    return True
            elif module == pattern or module.endswith("." + pattern):
                return True
        return False


def stored_format(folder: Path) -> StoredFormat | None:
    """The quantized format of the checkpoint in ``folder`` (None: a plain one); one line for a
    format qmlir does not take."""
    config_path = folder / "config.json"
    if (folder / "hf_quant_config.json").is_file():
        _unsupported(folder, "ModelOpt's export (hf_quant_config.json)")
    try:
        config = json.loads(config_path.read_text())
    except (OSError, ValueError):
        return None  # the folder's own checks say what is wrong with it
    quant = config.get("quantization_config") if isinstance(config, dict) else None
    if quant is None:
        return None
    if not isinstance(quant, dict):
        raise QmlirError(f"'{config_path}': quantization_config is not an object")
    method = quant.get("quant_method")
    if method == "fp8":
        return _transformers_fp8(folder, quant)
    if method == "compressed-tensors":
        return _compressed_tensors(folder, quant)
    _unsupported(folder, f"quant_method '{method}'")
    return None


def _unsupported(folder: Path, what: str) -> None:
    raise QmlirError(f"'{folder}': {what} is not supported; qmlir compiles {SUPPORTED}")


def _transformers_fp8(folder: Path, quant: dict[str, Any]) -> StoredFormat:
    """transformers' ``FineGrainedFP8Config`` (DeepSeek-V3's ``quantization_config``)."""
    scheme = quant.get("activation_scheme", "dynamic")
    static = scheme == "static" and quant.get("weight_block_size") is None
    if scheme != "dynamic" and not static:
        blocks = " and 128x128 weight blocks" if scheme == "static" else ""
        _unsupported(folder, f"transformers fp8 with {scheme} activations{blocks}")
    if quant.get("scale_fmt") not in (None, "float32", "fp32"):
        _unsupported(folder, f"transformers fp8 with scale_fmt '{quant['scale_fmt']}'")
    block = quant.get("weight_block_size")
    ignore = tuple(quant.get("modules_to_not_convert") or ())
    if block is None:
        return StoredFormat(
            "transformers fp8 (per tensor" + (", static activation scales)" if static else ")"),
            "fp8-current",
            "weight_scale_inv",
            None,
            ignore=ignore,
            input_scale_name="activation_scale" if static else None,
        )
    if list(block) != list(BLOCK):
        _unsupported(folder, f"transformers fp8 with weight_block_size {list(block)}")
    return StoredFormat(
        "transformers fp8 (128x128 blocks)",
        "fp8-block",
        "weight_scale_inv",
        BLOCK,
        {"pow2_scales": False},
        ignore,
    )


def _compressed_tensors(folder: Path, quant: dict[str, Any]) -> StoredFormat:
    """compressed-tensors' ``float-quantized`` and ``mxfp8-quantized`` FP8 schemes."""
    if quant.get("kv_cache_scheme"):
        _unsupported(folder, "compressed-tensors with a quantized KV cache (kv_cache_scheme)")
    groups = quant.get("config_groups") or {}
    if not groups:
        _unsupported(folder, "compressed-tensors without config_groups")
    kinds = set()
    for name, group in groups.items():
        fmt = group.get("format") or quant.get("format")
        if fmt not in ("float-quantized", "mxfp8-quantized"):
            _unsupported(folder, f"compressed-tensors format '{fmt}' (group '{name}')")
        kind = _group_kind(folder, name, group)
        if (kind == "mx") != (fmt == "mxfp8-quantized"):
            _unsupported(folder, f"compressed-tensors group '{name}' as '{fmt}'")
        kinds.add(kind)
    if len(kinds) != 1:
        _unsupported(folder, "compressed-tensors with differently quantized groups")
    kind = kinds.pop()
    ignore = tuple(quant.get("ignore") or ())
    if kind == "channel":
        return StoredFormat(
            "compressed-tensors FP8_DYNAMIC", "fp8-rowwise", "weight_scale", ROW, ignore=ignore
        )
    if kind == "mx":
        return StoredFormat(
            "compressed-tensors MXFP8",
            "mxfp8",
            "weight_scale",
            MX_BLOCK,
            ignore=ignore,
            scale_kind="e8m0",
        )
    if kind == "block":
        return StoredFormat(
            "compressed-tensors FP8_BLOCK",
            "fp8-block",
            "weight_scale",
            BLOCK,
            {"pow2_scales": False},
            ignore,
        )
    static = kind == "tensor-static"
    return StoredFormat(
        "compressed-tensors FP8 (per tensor" + (", static activation scales)" if static else ")"),
        "fp8-current",
        "weight_scale",
        None,
        ignore=ignore,
        input_scale_name="input_scale" if static else None,
    )


def _group_kind(folder: Path, name: str, group: dict[str, Any]) -> str:
    """What an FP8 config group's weights and activations are: ``block``, ``tensor``,
    ``tensor-static``, ``channel`` or ``mx``."""
    weights = group.get("weights") or {}
    inputs = group.get("input_activations") or {}
    where = f"compressed-tensors group '{name}'"
    if group.get("output_activations"):
        _unsupported(folder, f"{where} with quantized output activations")
    for role, args in (("weights", weights), ("input activations", inputs)):
        if args.get("type") != "float" or args.get("num_bits") != 8:
            kind = f"{args.get('type')} {args.get('num_bits')}-bit" if args else "unquantized"
            _unsupported(folder, f"{where} with {kind} {role}")
        if args.get("symmetric") is False:
            _unsupported(folder, f"{where} with asymmetric {role}")
    strategy, act = weights.get("strategy"), inputs.get("strategy")
    if not inputs.get("dynamic"):
        if strategy == act == "tensor":
            return "tensor-static"
        _unsupported(folder, f"{where} with static {act} activation scales and {strategy} weights")
    if strategy == "block" and list(weights.get("block_structure") or ()) == list(BLOCK):
        if act == "group" and inputs.get("group_size") == BLOCK[1]:
            return "block"
    if strategy == "tensor" and act == "tensor":
        return "tensor"
    if strategy == "channel" and act == "token":
        return "channel"
    size = MX_BLOCK[1]
    if strategy == act == "group" and weights.get("group_size") == inputs.get("group_size") == size:
        return "mx"
    _unsupported(folder, f"{where} with {strategy} weights and {act} activations")
    return ""


def _grid(shape: tuple[int, ...], block: tuple[int, int]) -> tuple[int, ...]:
    return tuple(-(-n // b) for n, b in zip(shape, block, strict=True))


def resolve_recipe(
    fmt: StoredFormat, recipe: str | None, options: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The recipe and options a quantized checkpoint compiles with: its own (``fmt.recipe``,
    with ``fmt.options`` unless ``options`` sets them); one line for another recipe, which would
    re-quantize weights that are stored quantized."""
    if recipe is not None and recipe != fmt.recipe:
        raise QmlirError(
            f"the checkpoint is {fmt.name}: it compiles with recipe '{fmt.recipe}' (its codes and "
            f"scales as stored), not '{recipe}'; --exclude keeps layers in high precision"
        )
    return fmt.recipe, {**fmt.options, **options}


DEFAULT_RECIPE = "fp8-current"


def folder_recipe(
    folder: Path | None, recipe: str | None, options: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The recipe (and options) a compile uses: ``recipe`` (default fp8-current), or for a
    folder holding a quantized checkpoint its own (:func:`resolve_recipe`)."""
    fmt = stored_format(folder) if folder is not None and folder.is_dir() else None
    if fmt is None:
        return recipe or DEFAULT_RECIPE, options
    return resolve_recipe(fmt, recipe, options)
