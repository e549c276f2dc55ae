"""The FP8 weights of a quantized checkpoint (``quantized_formats.py``): found and checked when
the folder is opened, read as stored for the parameter file, or dequantized where a layer runs in
high precision.

Each weight stored as ``F8_E4M3`` needs its scale (``<module>.<scale_name>``) of the shape the
format gives (``[ceil(out/128), ceil(in/128)]`` for 128x128 blocks, one value per tensor
otherwise), every scale finite and positive, and no scale without an FP8 weight. A weight that
is not FP8 is one the checkpoint keeps in high precision: qmlir keeps it so too.

Dequantized (``code x scale`` in f32, each 128x128 block by its scale) is what
``transformers`` computes when it loads such a checkpoint on a CPU; qmlir uses it for layers
excluded from quantization and for ``report`` / ``--compare``, which run the model in torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from compiler.frontend.quantized_formats import StoredFormat
from passes.base.errors import QmlirError

FP8 = "F8_E4M3"


@dataclass(frozen=True)
class StoredWeight:
    """A quantized weight's scale tensor and the weight's ``[out, in]`` shape (and its layer's
    static input scale tensor, its codes tensor where not ``<module>.weight``, its global scale
    tensor: where the format has them)."""

    scale: str
    shape: tuple[int, ...]
    input_scale: str | None = None
    codes: str | None = None
    global_scale: str | None = None
    format: StoredFormat | None = None  # its own (a mixed checkpoint's group's)


def find_stored(
    fmt: StoredFormat, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str], files: dict
) -> dict[str, StoredWeight]:
    """Every quantized weight of the checkpoint (by ``<module>.weight``) and its scales,
    checked (shapes and dtypes from the shards' headers: one line naming the tensor and its
    file for one that does not fit). A mixed-precision checkpoint: each group's modules by
    their group's format."""
    if fmt.groups:
        return _find_mixed(fmt, shapes, dtypes, files)
    suffix = "." + fmt.scale_name
    inputs = "." + fmt.input_scale_name if fmt.input_scale_name else None
    codes_suffix, kind = "." + fmt.codes_name, fmt.codes_dtype
    globals_ = "." + fmt.global_name if fmt.global_name else None
    stored: dict[str, StoredWeight] = {}
    for name, dtype in dtypes.items():
        for per_layer in (inputs, globals_):
            if per_layer is not None and name.endswith(per_layer):
                if shapes[name] not in ((), (1,)):
                    raise QmlirError(
                        f"'{files[name]}': '{name}' has shape {list(shapes[name])}; "
                        f"{fmt.name} has one per layer"
                    )
                break
        else:
            per_layer = None
        if per_layer is not None:
            continue
        if name.endswith(suffix):
            codes = name[: -len(suffix)] + codes_suffix
            if dtypes.get(codes) != kind:
                raise QmlirError(
                    f"'{files[name]}': '{name}' scales '{codes}', which is "
                    f"{dtypes.get(codes, 'missing')}, not {kind} as the config's {fmt.name} says"
                )
            continue
        if fmt.packed:
            if dtype != kind or not name.endswith(codes_suffix):
                continue
        elif dtype != FP8:
            continue
        elif not name.endswith(".weight"):
            raise QmlirError(f"'{files[name]}': tensor '{name}' is {FP8} but not a weight")
        module = name[: -len(codes_suffix)]
        scale = module + suffix
        if scale not in dtypes:
            raise QmlirError(f"'{files[name]}': {fmt.name} weight '{name}' has no scale '{scale}'")
        if fmt.ignores(module):
            raise QmlirError(
                f"'{files[name]}': '{name}' is {kind}, but the config keeps '{module}' unquantized"
            )
        want_dtype = {"e8m0": "U8", "e4m3": FP8}.get(fmt.scale_kind)
        if want_dtype is not None and dtypes[scale] != want_dtype:
            raise QmlirError(
                f"'{files[scale]}': scale '{scale}' is {dtypes[scale]}; {fmt.name} stores its "
                f"scales as {want_dtype}"
            )
        shape = fmt.logical_shape(shapes[name])
        want = fmt.scale_shape(shape) if len(shape) == 2 else None
        got = shapes[scale]
        if want is None or not _same_shape(got, want):
            raise QmlirError(
                f"'{files[scale]}': scale '{scale}' has shape {list(got)}; {fmt.name} needs "
                f"{list(want) if want is not None else '[out, in] weights'} for '{name}' "
                f"{list(shapes[name])}"
            )
        extra = {}
        for key, part in (("input_scale", inputs), ("global_scale", globals_)):
            if part is None:
                continue
            extra[key] = module + part
            if extra[key] not in dtypes:
                raise QmlirError(
                    f"'{files[name]}': {fmt.name} weight '{name}' has no '{extra[key]}'"
                )
        codes = None if codes_suffix == ".weight" else name
        stored[module + ".weight"] = StoredWeight(scale, shape, codes=codes, format=fmt, **extra)
    if not stored:
        raise QmlirError(f"the config says {fmt.name}, but no weight is stored as {kind}")
    return stored


def _find_mixed(
    fmt: StoredFormat, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str], files: dict
) -> dict[str, StoredWeight]:
    """:func:`find_stored` of each group over its own modules' tensors; a quantized tensor in a
    module no group takes is one line naming it."""
    parts: list[dict[str, str]] = [{} for _ in fmt.groups]
    formats = [group for _, group in fmt.groups]
    for name, dtype in dtypes.items():
        module = name.rpartition(".")[0]
        group = fmt.format_of(module)
        if group is None:
            if dtype == FP8:
                raise QmlirError(
                    f"'{files[name]}': '{name}' is {FP8}, but no config group quantizes "
                    f"'{module}' ({fmt.name})"
                )
            continue
        parts[next(i for i, f in enumerate(formats) if f is group)][name] = dtype
    stored: dict[str, StoredWeight] = {}
    for group, part in zip(formats, parts, strict=True):
        stored.update(find_stored(group, shapes, part, files))
    return stored


def _same_shape(got: tuple[int, ...], want: tuple[int, ...]) -> bool:
    """Whether a stored scale of shape ``got`` holds ``want``'s values in order (dims of 1
    aside: ``[out]`` for ``[out, 1]``, ModelOpt's ``[out/128, 1, in/128, 1]`` for 128x128
    blocks, ``[1]`` for one per tensor)."""
    return [d for d in got if d != 1] == [d for d in want if d != 1] and int(
        np.prod(got, dtype=np.int64)
    ) == int(np.prod(want, dtype=np.int64))


def check_scale(name: str, scale: np.ndarray, file: object, kind: str = "f32") -> np.ndarray:
    """``scale`` as f32, finite and positive (one line naming the tensor otherwise); E8M0
    exponents (``kind="e8m0"``) as they are, none the NaN code 0xFF."""
    if kind == "e8m0":
        codes = np.asarray(scale, dtype=np.uint8)
        if (codes == 0xFF).any():
            raise QmlirError(f"'{file}': scale '{name}' holds the E8M0 NaN code 0xFF")
        return codes
    if kind == "e4m3":  # NVFP4 block scales: 0 (an all-zero block) up to 448, never NaN
        codes = np.ascontiguousarray(scale).view(np.uint8)
        bad = ((codes & 0x7F) == 0x7F) | ((codes & 0x80) != 0)
        if bad.any():
            value = codes.reshape(-1)[int(np.argmax(bad.reshape(-1)))].view(_E4M3)
            raise QmlirError(
                f"'{file}': scale '{name}' holds {float(value)} (E4M3 block scales must be "
                "non-negative numbers)"
            )
        return codes
    values = np.asarray(scale, dtype=np.float32)
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        value = values.reshape(-1)[int(np.argmax(bad.reshape(-1)))]
        raise QmlirError(
            f"'{file}': scale '{name}' holds {value} (every scale must be finite and positive)"
        )
    return values


def codes_as_int8(codes: np.ndarray) -> np.ndarray:
    """E4M3 codes as the int8 bytes qmlir's quantized weights are."""
    return np.ascontiguousarray(codes).view(np.int8)


def dequantize(codes: np.ndarray, scale: np.ndarray, block: tuple[int, int] | None) -> np.ndarray:
    """``code x scale`` in f32, each ``block`` of the weight by its own scale (E8M0 exponents,
    uint8 or int8 bytes: ``2^(e - 127)``)."""
    values = np.ascontiguousarray(codes).view(np.uint8).view(_E4M3).astype(np.float32)
    if scale.dtype.itemsize == 1:
        exponent = scale.view(np.uint8).astype(np.int32) - 127
        scale = np.ldexp(np.float32(1), exponent).astype(np.float32)
    if block is None:
        return values * scale.reshape(())
    rows, cols = values.shape
    expanded = np.repeat(np.repeat(scale, block[0], axis=0), block[1], axis=1)
    return values * expanded[:rows, :cols]


_E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def dequantize_mxfp4(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """MXFP4 ``[out, in]`` in f32 from packed E2M1 codes ``[out, in/2]`` (low nibble first) and
    E8M0 block scales ``[out, in/32]`` (bytes): ``e2m1 x 2^(e - 127)``, exact."""
    packed = np.ascontiguousarray(codes).view(np.uint8)
    values = np.empty((packed.shape[0], packed.shape[1] * 2), np.float32)
    values[:, 0::2], values[:, 1::2] = _E2M1[packed & 0xF], _E2M1[packed >> 4]
    exponent = np.ascontiguousarray(scale).view(np.uint8).astype(np.int32) - 127
    power = np.ldexp(np.float32(1), exponent).astype(np.float32)
    return values * np.repeat(power, 32, axis=1)[:, : values.shape[1]]


def dequantize_nvfp4(codes: np.ndarray, scale: np.ndarray, decode: np.float32) -> np.ndarray:
    """NVFP4 ``[out, in]`` in f32 from packed E2M1 codes ``[out, in/2]`` (low nibble first),
    E4M3 block scales ``[out, in/16]`` (bytes) and the global decode scale:
    ``(e2m1 x d) x S_dec``, as qmlir's dequantize computes it (compressed-tensors computes
    ``e2m1 x (d / S)``: the same to within one f32 rounding)."""
    packed = np.ascontiguousarray(codes).view(np.uint8)
    values = np.empty((packed.shape[0], packed.shape[1] * 2), np.float32)
    values[:, 0::2], values[:, 1::2] = _E2M1[packed & 0xF], _E2M1[packed >> 4]
    d = np.ascontiguousarray(scale).view(np.uint8).view(_E4M3).astype(np.float32)
    return (values * np.repeat(d, 16, axis=1)[:, : values.shape[1]]) * np.float32(decode)


def _e4m3() -> np.dtype:
    import ml_dtypes

    return np.dtype(ml_dtypes.float8_e4m3fn)


_E4M3 = _e4m3()


@dataclass(frozen=True)
class ExpertReader:
    """A checkpoint's MoE experts stored one FP8 matrix per expert, by the key of their stack
    (``Checkpoint.expert_codes``, ``expert_refusal``, ``expert_format``)."""

    codes: Callable[[str, int], tuple[np.ndarray, np.ndarray]]
    refusal: Callable[[str], str | None]
    format: Callable[[str], StoredFormat]


@dataclass(frozen=True)
class Prequantized:
    """A compiled model's view of a quantized checkpoint: which of its weights (state-dict
    names of the compiled module) are stored as FP8 codes (``stored``: the checkpoint's name of
    each), how to read them (``read_codes``), and the layers (module paths) whose weights the
    checkpoint keeps in high precision (``unquantized``), which stay so."""

    format: StoredFormat
    stored: dict[str, str]
    read_codes: Callable[[str], tuple[np.ndarray, np.ndarray]]
    unquantized: tuple[str, ...]
    shapes: dict[str, tuple[int, ...]]  # the checkpoint's tensors' shapes
    # each layer's fixed activation scale (a multiplier), by module path, where stored
    activation_scales: tuple[tuple[str, float], ...] = ()
    # weights stacked from FP8 matrices stored one per expert, by the compiled name: the
    # checkpoint's key of the stack (each expert's slice taken as stored: ``experts``)
    merged: dict[str, str] = field(default_factory=dict)
    # NVFP4: a weight's global (S, S_dec), by the checkpoint's name
    read_global: Callable[[str], tuple[np.float32, np.float32]] | None = None
    # each stored weight's own format (a mixed checkpoint's group's), by the compiled name
    formats: dict[str, StoredFormat] = field(default_factory=dict)
    experts: ExpertReader | None = None

    def expert_codes(self, name: str, expert: int) -> tuple[np.ndarray, np.ndarray]:
        """Expert ``expert``'s slice of stacked weight ``name`` as stored (codes and scales,
        its matrices joined along the rows), as :meth:`codes` gives a 2-D weight's."""
        assert self.experts is not None, name
        return self.experts.codes(self.merged[name], expert)

    def expert_refusal(self, name: str) -> str | None:
        """Why stacked weight ``name``'s expert slices cannot be taken as stored (None: they
        can)."""
        assert self.experts is not None, name
        return self.experts.refusal(self.merged[name])

    def expert_format(self, name: str) -> StoredFormat:
        assert self.experts is not None, name
        return self.experts.format(self.merged[name])

    def format_of(self, name: str) -> StoredFormat:
        """Stored weight ``name``'s format."""
        return self.formats.get(name, self.format)

    @property
    def layer_recipes(self) -> tuple[tuple[str, str, dict], ...]:
        """(layer, recipe, options) of every stored layer whose format computes with another
        recipe than the checkpoint's default (a mixed-precision checkpoint's other groups)."""
        out = []
        for name, fmt in sorted(self.formats.items()):
            if (fmt.recipe, fmt.options) != (self.format.recipe, self.format.options):
                out.append((name.removesuffix(".weight"), fmt.recipe, dict(fmt.options)))
        return tuple(out)

    def inline_refusal(self) -> str:
        """Why such a model cannot compile with its weights inside the module."""
        return (
            f"a quantized checkpoint ({self.format.name}) compiles with its weights outside the "
            "module (--weights external): its codes go to the parameter file as stored"
        )

    def holds(self, name: str) -> bool:
        return name in self.stored

    def shape(self, name: str) -> tuple[int, ...]:
        """Weight ``name``'s shape as stored."""
        return self.shapes[self.stored[name]]

    def global_scale(self, name: str) -> tuple[np.float32, np.float32]:
        """NVFP4 weight ``name``'s global encode and decode scales ``(S, S_dec)``."""
        assert self.read_global is not None, name
        return self.read_global(self.stored[name])

    def codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Weight ``name``'s codes (int8 bytes, ``[out, in]``) and scale (f32, the format's
        scale shape: ``[]`` per tensor)."""
        return self.read_codes(self.stored[name])
