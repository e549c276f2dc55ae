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
  per token: fp8-rowwise;
- compressed-tensors NVFP4 (nvfp4-pack-quantized): ``weight_packed`` (E2M1, two per byte, low
  nibble first), ``weight_scale`` (E4M3 per 1x16), ``weight_global_scale`` and
  ``input_global_scale`` (divisors: ``448 * 6 / amax``): nvfp4 with a static activation global
  scale;
- compressed-tensors MXFP4 (mxfp4-pack-quantized): ``weight_packed`` (E2M1, two per byte, low
  nibble first), ``weight_scale`` (E8M0, uint8, per 1x32), activations per 1x32 at run time:
  mxfp4 with compressed-tensors' E8M0 rule (``e8m0_rounding=even``);
- ModelOpt's unified checkpoint (``hf_quant_config.json``): FP8 (per tensor, static
  ``input_scale``), FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO and NVFP4 (the compressed-tensors
  NVFP4 tensors under ModelOpt's names: ``weight`` U8, ``weight_scale_2`` and ``input_scale``
  multipliers, ``amax / (448 * 6)``).

A mixed-precision folder (compressed-tensors config groups of different formats, ModelOpt's
``MIXED_PRECISION`` with ``quantized_layers``) is one :class:`StoredFormat` per group, each layer
compiled with its group's recipe (:meth:`StoredFormat.format_of`).

Anything else (static scales other than per tensor, FP4 weight-only, MXFP4 weights with FP8
activations, a quantized
KV cache, other ``quant_method``\\ s or ``quant_algo``\\ s) is one line naming it and listing
these.
"""

from __future__ import annotations

import dataclasses
import fnmatch
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
    "per-token activations), MXFP8 (mxfp8-quantized), MXFP4 (mxfp4-pack-quantized) and NVFP4 "
    "(nvfp4-pack-quantized); ModelOpt "
    "(hf_quant_config.json) FP8, FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO and NVFP4"
)
ROW = (1, 0)  # a block spanning a whole row (the 0: its weight's contraction dim)
MX_BLOCK = (1, 32)
NVFP4_BLOCK = (1, 16)
# compressed-tensors formats → the kind of group each holds
_CT_FORMATS = {
    "float-quantized": "fp8",
    "mxfp8-quantized": "mx",
    "mxfp4-pack-quantized": "mxfp4",
    "nvfp4-pack-quantized": "nvfp4",
}


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
    # how a scale is stored: f32 (any float dtype), e8m0 (uint8) or e4m3 (F8_E4M3)
    scale_kind: str = "f32"
    # a static activation scale per layer (``<module>.<input_scale_name>``, a multiplier; a
    # divisor where ``input_divides``: compressed-tensors' NVFP4 ``input_global_scale``)
    input_scale_name: str | None = None
    input_divides: bool = False
    # where a weight's codes are (``<module>.<codes_name>``) and as what: E4M3 ``[out, in]``, or
    # E2M1 packed two per byte (U8 ``[out, in / 2]``, low nibble first: ``packed``)
    codes_name: str = "weight"
    packed: bool = False
    # NVFP4's per-tensor global scale of each weight (a multiplier, or a divisor where
    # ``global_divides``: compressed-tensors' ``weight_global_scale``)
    global_name: str | None = None
    global_divides: bool = False
    # a mixed-precision checkpoint: each group's module targets and format (this format's own
    # fields are its first group's: the compile's default recipe)
    groups: tuple[tuple[tuple[str, ...], StoredFormat], ...] = ()

    def format_of(self, module: str) -> StoredFormat | None:
        """The format ``module``'s weight is stored in (None: kept in high precision); a
        mixed checkpoint's most specific group target wins: an exact module name, then a
        ``re:`` expression, then a class name (``Linear``)."""
        if self.ignores(module):
            return None
        if not self.groups:
            return self
        for rank in range(3):
            for targets, fmt in self.groups:
                if any(_target_rank(t, module) == rank for t in targets):
                    return fmt
        return None

    @property
    def codes_dtype(self) -> str:
        """The safetensors dtype of a weight's codes."""
        return "U8" if self.packed else "F8_E4M3"

    def logical_shape(self, stored: tuple[int, ...]) -> tuple[int, ...]:
        """The weight's ``[out, in]`` for its codes' stored shape."""
        return (stored[0], stored[1] * 2) if self.packed and len(stored) == 2 else stored

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
            if pattern.startswith("glob:"):  # ModelOpt's exclude_modules: wildcards
                glob = pattern[5:]
                if fnmatch.fnmatchcase(module, glob) or module == glob.rstrip("*"):
                    return True
            elif pattern.startswith("re:"):
                if re.match(pattern[3:], module):
                    return True
            elif module == pattern or module.endswith("." + pattern):
                return True
        return False


def _target_rank(target: str, module: str) -> int | None:
    """How ``target`` (a config group's) matches ``module``: 0 by name, 1 by a ``re:``
    expression, 2 by class (``Linear``: every quantizable module), None not at all."""
    if target.startswith("re:"):
        return 1 if re.match(target[3:], module) else None
    if target == "Linear":
        return 2
    return 0 if module == target or module.endswith("." + target) else None


def _mixed(name: str, formats: list[tuple[tuple[str, ...], StoredFormat]]) -> StoredFormat:
    """One format, or a mixed-precision one over ``formats`` (targets, format) in order."""
    first = formats[0][1]
    if all(fmt == first for _, fmt in formats):
        return first
    recipes = ", ".join(dict.fromkeys(fmt.name for _, fmt in formats))
    return dataclasses.replace(
        first, name=f"{name} mixed precision ({recipes})", groups=tuple(formats)
    )


def stored_format(folder: Path) -> StoredFormat | None:
    """The quantized format of the checkpoint in ``folder`` (None: a plain one); one line for a
    format qmlir does not take."""
    config_path = folder / "config.json"
    modelopt = folder / "hf_quant_config.json"
    if modelopt.is_file():
        try:
            data = json.loads(modelopt.read_text())
        except (OSError, ValueError) as e:
            raise QmlirError(f"'{modelopt}' is not JSON: {e}") from None
        quantization = data.get("quantization") if isinstance(data, dict) else None
        if not isinstance(quantization, dict):
            raise QmlirError(f"'{modelopt}' has no 'quantization' object (ModelOpt's export)")
        return _modelopt(folder, quantization)
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
    if isinstance(method, str) and method.lower().startswith("modelopt"):
        return _modelopt(folder, quant)  # ModelOpt's config.json form: quant_algo at the top
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
    ignore = tuple(quant.get("ignore") or ())
    formats = []
    for name, group in groups.items():
        fmt = group.get("format") or quant.get("format")
        if fmt not in _CT_FORMATS:
            _unsupported(folder, f"compressed-tensors format '{fmt}' (group '{name}')")
        kind = _group_kind(folder, name, group)
        if _CT_FORMATS[fmt] != (kind if kind in ("mx", "mxfp4", "nvfp4") else "fp8"):
            _unsupported(folder, f"compressed-tensors group '{name}' as '{fmt}'")
        targets = tuple(group.get("targets") or ("Linear",))
        formats.append((targets, _ct_format(kind, ignore)))
    return _mixed("compressed-tensors", formats)


def _ct_format(kind: str, ignore: tuple[str, ...]) -> StoredFormat:
    """The format of a compressed-tensors group of ``kind`` (:func:`_group_kind`)."""
    if kind == "nvfp4":
        return StoredFormat(
            "compressed-tensors NVFP4",
            "nvfp4",
            "weight_scale",
            NVFP4_BLOCK,
            ignore=ignore,
            scale_kind="e4m3",
            input_scale_name="input_global_scale",
            input_divides=True,
            codes_name="weight_packed",
            packed=True,
            global_name="weight_global_scale",
            global_divides=True,
        )
    if kind == "mxfp4":
        return StoredFormat(
            "compressed-tensors MXFP4",
            "mxfp4",
            "weight_scale",
            MX_BLOCK,
            {"e8m0_rounding": "even"},
            ignore=ignore,
            scale_kind="e8m0",
            codes_name="weight_packed",
            packed=True,
        )
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
    """What a config group's weights and activations are: ``block``, ``tensor``,
    ``tensor-static``, ``channel``, ``mx``, ``mxfp4`` or ``nvfp4``."""
    weights = group.get("weights") or {}
    inputs = group.get("input_activations") or {}
    where = f"compressed-tensors group '{name}'"
    if group.get("output_activations"):
        _unsupported(folder, f"{where} with quantized output activations")
    if weights.get("num_bits") == 4 and weights.get("type") == "float":
        if weights.get("strategy") == "group":
            return _mxfp4_group(folder, where, weights, inputs)
        return _nvfp4_group(folder, where, weights, inputs)
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


def _mxfp4_group(folder: Path, where: str, weights: dict, inputs: dict) -> str:
    """compressed-tensors' MXFP4 scheme: FP4 weights and dynamic FP4 activations per 32
    (``group``) with E8M0 scales (``scale_dtype`` uint8)."""
    mxfp4 = {"num_bits": 4, "type": "float", "strategy": "group", "group_size": MX_BLOCK[1]}
    for role, args in (("weights", weights), ("activations", inputs)):
        if not args:
            _unsupported(folder, f"{where}: MXFP4 weights with unquantized activations (MXFP4A16)")
        if any(args.get(k) != v for k, v in mxfp4.items()) or args.get("symmetric") is False:
            _unsupported(folder, f"{where}: MXFP4 {role} other than 4-bit float groups of 32")
        if str(args.get("scale_dtype", "torch.uint8")) not in ("torch.uint8", "uint8"):
            _unsupported(folder, f"{where}: 4-bit group {role} with {args['scale_dtype']} scales")
    if inputs.get("dynamic") is not True:
        _unsupported(folder, f"{where}: MXFP4 with static activation scales")
    return "mxfp4"


def _nvfp4_group(folder: Path, where: str, weights: dict, inputs: dict) -> str:
    """compressed-tensors' NVFP4 scheme: FP4 weights per 16 (``tensor_group``) with a global
    scale, FP4 activations per 16 with a static global scale (``dynamic: "local"``)."""
    nvfp4 = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}
    if any(weights.get(k) != v for k, v in nvfp4.items()) or weights.get("symmetric") is False:
        _unsupported(folder, f"{where} with 4-bit weights other than NVFP4's")
    if not inputs:
        _unsupported(folder, f"{where}: NVFP4 weights with unquantized activations (NVFP4A16)")
    if any(inputs.get(k) != v for k, v in nvfp4.items()) or inputs.get("dynamic") != "local":
        _unsupported(folder, f"{where} with NVFP4 weights and other activations")
    return "nvfp4"


def _modelopt(folder: Path, quant: dict[str, Any]) -> StoredFormat:
    """ModelOpt's unified checkpoint (``hf_quant_config.json``'s ``quantization``, or the
    same keys in config.json): FP8 per tensor with static ``input_scale`` → fp8-current;
    FP8_PER_CHANNEL_PER_TOKEN → fp8-rowwise; FP8_PB_WO (128x128 weight blocks, activations
    per 1x128 at run time, as vLLM runs it) → fp8-block; NVFP4 (``weight`` U8 packed,
    ``weight_scale`` E4M3 per 16, ``weight_scale_2`` and ``input_scale`` multipliers) → nvfp4."""
    algo = str(quant.get("quant_algo") or "").upper()
    kv = quant.get("kv_cache_quant_algo") or quant.get("kv_cache_scheme")
    if kv:
        _unsupported(folder, "ModelOpt with a quantized KV cache (kv_cache_quant_algo)")
    ignore = tuple(quant.get("exclude_modules") or quant.get("ignore") or ())
    ignore = tuple(f"glob:{p}" for p in ignore)
    if algo == "MIXED_PRECISION":  # quantized_layers: {module: {quant_algo, group_size}}
        layers = quant.get("quantized_layers")
        if not isinstance(layers, dict) or not layers:
            _unsupported(folder, "ModelOpt MIXED_PRECISION without quantized_layers")
        by_algo: dict[str, list[str]] = {}
        for module, layer in layers.items():
            if not isinstance(layer, dict):
                _unsupported(
                    folder, f"ModelOpt MIXED_PRECISION layer '{module}' without a quant_algo"
                )
            key = json.dumps({k: v for k, v in layer.items()}, sort_keys=True)
            by_algo.setdefault(key, []).append(module)
        formats = []
        for key, modules in by_algo.items():
            sub = {**json.loads(key), "exclude_modules": quant.get("exclude_modules") or []}
            if str(sub.get("quant_algo", "")).upper() == "MIXED_PRECISION":
                _unsupported(folder, "ModelOpt MIXED_PRECISION nested in a layer")
            formats.append((tuple(modules), _modelopt(folder, sub)))
        return _mixed("ModelOpt", formats)
    if algo == "FP8":
        return StoredFormat(
            "ModelOpt FP8",
            "fp8-current",
            "weight_scale",
            None,
            ignore=ignore,
            input_scale_name="input_scale",
        )
    if algo == "FP8_PER_CHANNEL_PER_TOKEN":
        return StoredFormat(
            "ModelOpt FP8_PER_CHANNEL_PER_TOKEN", "fp8-rowwise", "weight_scale", ROW, ignore=ignore
        )
    if algo == "FP8_PB_WO":
        return StoredFormat(
            "ModelOpt FP8_PB_WO",
            "fp8-block",
            "weight_scale",
            BLOCK,
            {"pow2_scales": False},
            ignore,
        )
    if algo == "NVFP4":
        size = quant.get("group_size", 16)
        if size != 16:
            _unsupported(folder, f"ModelOpt NVFP4 with group_size {size}")
        return StoredFormat(
            "ModelOpt NVFP4",
            "nvfp4",
            "weight_scale",
            NVFP4_BLOCK,
            ignore=ignore,
            scale_kind="e4m3",
            input_scale_name="input_scale",
            packed=True,
            global_name="weight_scale_2",
        )
    what = f"ModelOpt quant_algo '{algo}'" if algo else "ModelOpt's export without a quant_algo"
    _unsupported(folder, what)
    raise AssertionError("unreachable")


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
