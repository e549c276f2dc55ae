"""Inputs checked against an artifact's signature before a call: count, shape, dtype, and the
range of every input that indexes an embedding (an id past the table would read out of bounds).

Needs only numpy and ml_dtypes (``qmlir run`` works with just the runtime installed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from passes.base.errors import QmlirError

NUMPY_DTYPES: dict[str, Any] = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f64": np.dtype(np.float64),
    "si64": np.dtype(np.int64),
    "si32": np.dtype(np.int32),
    "i1": np.dtype(np.bool_),
    "ui8": np.dtype(np.uint8),
}


def input_label(i: int, spec: Mapping[str, Any]) -> str:
    """``input 0 (input_ids)``; ``input 0`` when the artifact has no name for it."""
    name = spec.get("name")
    return f"input {i} ({name})" if name else f"input {i}"


def check_inputs(inputs: Sequence[np.ndarray], specs: Sequence[Mapping[str, Any]]) -> list[Any]:
    """``inputs`` as contiguous arrays the module takes, or a one-line :class:`QmlirError`.

    A bfloat16 array read back from a ``.npy`` (numpy knows it only as 2-byte void, ``|V2``) is
    taken as bfloat16 where the module expects bf16."""
    if len(inputs) != len(specs):
        raise QmlirError(f"the module takes {len(specs)} input(s), got {len(inputs)}")
    arrays = []
    sizes: dict[str, tuple[int, str]] = {}  # a dynamic dim's size, and where it was seen first
    for i, (x, spec) in enumerate(zip(inputs, specs, strict=True)):
        label = input_label(i, spec)
        want = NUMPY_DTYPES.get(spec["dtype"])
        if want == NUMPY_DTYPES["bf16"] and x.dtype.kind == "V" and x.dtype.itemsize == 2:
            x = x.view(want)
        _check_shape(tuple(x.shape), spec, label, sizes)
        if want is not None and x.dtype != want:
            raise QmlirError(
                f"{label} has dtype {x.dtype}, the module expects {spec['dtype']} ({want})"
            )
        if "index_range" in spec:
            _check_range(x, spec["index_range"], label)
        arrays.append(np.ascontiguousarray(x))
    return arrays


def is_torch(x: Any) -> bool:
    """A torch tensor (told by its type's module: checking it imports no torch)."""
    return type(x).__module__.startswith("torch")


def check_array_likes(inputs: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
    """A one-line :class:`QmlirError` for an input that is not an array or a tensor (a list, a
    number, None), before numpy turns it into a float64 or 0-d array that fails later with a
    message about its dtype or shape."""
    for i, x in enumerate(inputs):
        if isinstance(x, np.ndarray) or is_torch(x):
            continue
        spec = specs[i] if i < len(specs) else {}
        label = input_label(i, spec)
        what = "None" if x is None else f"a {type(x).__name__}"
        dtype = NUMPY_DTYPES.get(spec.get("dtype", ""))
        hint = f" (np.asarray(x, dtype=np.{dtype}))" if dtype is not None else ""
        raise QmlirError(f"{label} is {what}, not an array: pass a numpy array{hint} or a tensor")


def check_shapes(inputs: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
    """``check_inputs``'s count and shape rules (no dtypes), for arrays or torch tensors."""
    if len(inputs) != len(specs):
        raise QmlirError(f"the module takes {len(specs)} input(s), got {len(inputs)}")
    sizes: dict[str, tuple[int, str]] = {}
    for i, (x, spec) in enumerate(zip(inputs, specs, strict=True)):
        _check_shape(tuple(x.shape), spec, input_label(i, spec), sizes)


def check_index_ranges(inputs: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
    """``check_inputs``'s range rule: every input that indexes an embedding within its rows."""
    for i, (x, spec) in enumerate(zip(inputs, specs, strict=True)):
        if "index_range" in spec:
            _check_range(np.asarray(x), spec["index_range"], input_label(i, spec))


def shape_text(spec: Mapping[str, Any]) -> str:
    """``[batch(1..64), 1024]``: the sizes, a dynamic dim by name and range."""
    dims = spec.get("dims") or [None] * len(spec["shape"])
    parts = []
    for size, dim in zip(spec["shape"], dims, strict=True):
        if dim is None:
            parts.append(str(size))
        else:
            low, high = dim.get("min"), dim.get("max")
            bounds = f"({low}..{'' if high is None else high})" if "min" in dim else ""
            parts.append(f"{dim['name']}{bounds}")
    return f"[{', '.join(parts)}]"


def _check_shape(
    got: tuple[int, ...], spec: Mapping[str, Any], label: str, sizes: dict[str, tuple[int, str]]
) -> None:
    """Static dims equal, dynamic ones in their range and equal wherever they share a name."""
    shape = spec["shape"]
    if len(got) != len(shape):
        raise QmlirError(f"{label} has shape {list(got)}, the module expects {shape_text(spec)}")
    dims = spec.get("dims") or [None] * len(shape)
    for d, (size, want, dim) in enumerate(zip(got, shape, dims, strict=True)):
        if dim is None:
            if size != want:
                raise QmlirError(
                    f"{label} has shape {list(got)}, the module expects {shape_text(spec)}"
                )
            continue
        low, high, name = dim.get("min") or 0, dim.get("max"), dim["name"]
        if size < low or (high is not None and size > high):
            top = "" if high is None else high
            raise QmlirError(f"{label} dim {d} ({name}) is {size}, the module takes {low}..{top}")
        if name in sizes and sizes[name][0] != size:
            seen, where = sizes[name]
            raise QmlirError(f"{label} dim {d} ({name}) is {size}, but {name} is {seen} in {where}")
        sizes.setdefault(name, (size, label))


def _check_range(x: np.ndarray, bounds: Sequence[int], label: str) -> None:
    low, high = bounds
    if x.size == 0:
        return
    smallest, largest = int(x.min()), int(x.max())
    bad = smallest if smallest < low else largest if largest >= high else None
    if bad is not None:
        raise QmlirError(
            f"{label} holds {bad}; it indexes an embedding of {high} rows, so its values must "
            f"be in {low}..{high - 1}"
        )


def arrays_by_name(
    arrays: Mapping[str, np.ndarray], specs: Sequence[Mapping[str, Any]], where: str
) -> list[np.ndarray]:
    """The arrays of a ``.npz`` in signature order: keys are the inputs' names (the model's
    forward parameters) or ``arg0``, ``arg1``, ...; an unknown, missing or repeated one is an
    error naming it (never matched by position, which would swap inputs without a word)."""
    keys: dict[str, int] = {}
    for i, spec in enumerate(specs):
        keys[f"arg{i}"] = i
        if spec.get("name"):
            keys[spec["name"]] = i
    found: dict[int, str] = {}
    for key in arrays:
        if key not in keys:
            names = ", ".join(_key_names(specs))
            raise QmlirError(
                f"{where} holds '{key}', which is not an input of the module ({names})"
            )
        if keys[key] in found:
            raise QmlirError(
                f"{where} gives {input_label(keys[key], specs[keys[key]])} twice "
                f"('{found[keys[key]]}' and '{key}')"
            )
        found[keys[key]] = key
    missing = [input_label(i, spec) for i, spec in enumerate(specs) if i not in found]
    if missing:
        names = ", ".join(_key_names(specs))
        raise QmlirError(f"{where} has no array for {', '.join(missing)} (keys: {names})")
    return [arrays[found[i]] for i in range(len(specs))]


def _key_names(specs: Sequence[Mapping[str, Any]]) -> list[str]:
    return [spec.get("name") or f"arg{i}" for i, spec in enumerate(specs)]


class NonFiniteInputWarning(RuntimeWarning):
    """An input holds NaN or inf (they propagate as docs/numerics.md says): warned once per
    module, as ``qmlir run`` prints it."""


def non_finite_counts(inputs: Sequence[np.ndarray]) -> list[tuple[int, int, int]]:
    """``(input index, NaN count, inf count)`` of each floating-point input that holds any."""
    found = []
    for i, x in enumerate(inputs):
        if x.dtype.kind not in "fV" or x.dtype.itemsize not in (2, 4, 8):
            continue
        values = x.astype(np.float32) if x.dtype.kind == "V" or x.dtype.itemsize == 2 else x
        if np.isfinite(values).all():
            continue
        found.append((i, int(np.isnan(values).sum()), int(np.isinf(values).sum())))
    return found


def non_finite_message(index: int, nans: int, infs: int) -> str:
    return f"input {index} holds {nans} NaN and {infs} inf; they propagate as docs/numerics.md says"
