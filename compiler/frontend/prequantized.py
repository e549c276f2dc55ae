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
from dataclasses import dataclass

import numpy as np

from compiler.frontend.quantized_formats import StoredFormat
from passes.base.errors import QmlirError

FP8 = "F8_E4M3"


@dataclass(frozen=True)
class StoredWeight:
    """An FP8 weight's scale tensor and the weight's shape (and its layer's static input scale
    tensor, where the format has one)."""

    scale: str
    shape: tuple[int, ...]
    input_scale: str | None = None


def find_stored(
    fmt: StoredFormat, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, str], files: dict
) -> dict[str, StoredWeight]:
    """Every FP8 weight of the checkpoint and its scale, checked (shapes and dtypes from the
    shards' headers: one line naming the tensor and its file for one that does not fit)."""
    suffix = "." + fmt.scale_name
    inputs = "." + fmt.input_scale_name if fmt.input_scale_name else None
    stored: dict[str, StoredWeight] = {}
    for name, dtype in dtypes.items():
        if inputs is not None and name.endswith(inputs):
            if shapes[name] not in ((), (1,)):
                raise QmlirError(
                    f"'{files[name]}': input scale '{name}' has shape {list(shapes[name])}; "
                    f"{fmt.name} has one per layer"
                )
            continue
        if name.endswith(suffix):
            weight = name[: -len(suffix)] + ".weight"
            if dtypes.get(weight) != FP8:
                raise QmlirError(
                    f"'{files[name]}': '{name}' scales '{weight}', which is "
                    f"{dtypes.get(weight, 'missing')}, not {FP8} as the config's {fmt.name} says"
                )
            continue
        if dtype != FP8:
            continue
        if not name.endswith(".weight"):
            raise QmlirError(f"'{files[name]}': tensor '{name}' is {FP8} but not a weight")
        module = name[: -len(".weight")]
        scale = module + suffix
        if scale not in dtypes:
            raise QmlirError(
                f"'{files[name]}': FP8 weight '{name}' has no scale '{scale}' ({fmt.name})"
            )
        if fmt.ignores(module):
            raise QmlirError(
                f"'{files[name]}': '{name}' is {FP8}, but the config keeps '{module}' unquantized"
            )
        if fmt.scale_kind == "e8m0" and dtypes[scale] != "U8":
            raise QmlirError(
                f"'{files[scale]}': scale '{scale}' is {dtypes[scale]}; {fmt.name} stores E8M0 "
                "exponents as U8"
            )
        shape = shapes[name]
        want = fmt.scale_shape(shape) if len(shape) == 2 else None
        got = shapes[scale]
        if want is None or (got != want and not (want == () and got == (1,))):
            raise QmlirError(
                f"'{files[scale]}': scale '{scale}' has shape {list(got)}; {fmt.name} needs "
                f"{list(want) if want is not None else '[out, in] weights'} for '{name}' "
                f"{list(shape)}"
            )
        input_scale = None
        if inputs is not None:
            input_scale = module + inputs
            if input_scale not in dtypes:
                raise QmlirError(
                    f"'{files[name]}': FP8 weight '{name}' has no input scale '{input_scale}' "
                    f"({fmt.name})"
                )
        stored[name] = StoredWeight(scale, shape, input_scale)
    if not stored:
        raise QmlirError(f"the config says {fmt.name}, but no weight is stored as {FP8}")
    return stored


def check_scale(name: str, scale: np.ndarray, file: object, kind: str = "f32") -> np.ndarray:
    """``scale`` as f32, finite and positive (one line naming the tensor otherwise); E8M0
    exponents (``kind="e8m0"``) as they are, none the NaN code 0xFF."""
    if kind == "e8m0":
        codes = np.asarray(scale, dtype=np.uint8)
        if (codes == 0xFF).any():
            raise QmlirError(f"'{file}': scale '{name}' holds the E8M0 NaN code 0xFF")
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


def _e4m3() -> np.dtype:
    import ml_dtypes

    return np.dtype(ml_dtypes.float8_e4m3fn)


_E4M3 = _e4m3()


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
    # weights stacked from FP8 matrices stored one per expert: not taken as stored (yet)
    merged: frozenset[str] = frozenset()

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

    def codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Weight ``name``'s codes (int8 bytes, ``[out, in]``) and scale (f32, the format's
        scale shape: ``[]`` per tensor)."""
        return self.read_codes(self.stored[name])
