"""The shape of an artifact's metadata, checked before the record (``metadata.py``) is built.

The seal's digest is no signature (``seal.py``): metadata can be forged with a valid digest.
Every field the runtime and the CLI read is checked here, so a forged or malformed one is one
error line naming the field, never a ``KeyError`` deep in ``qmlir inspect``.
"""

from __future__ import annotations

from typing import Any

from compiler.runtime.outputs import valid_tree
from passes.base.errors import QmlirError
from passes.base.target import DEVICES

Spec = Any  # a type, a tuple of allowed literals, a dict of fields, or a one-item list


def _size(d: Any) -> bool:
    return isinstance(d, int) and not isinstance(d, bool) and d >= 0


def _shape(value: Any) -> bool:
    """Sizes; ``None`` for a dynamic dim."""
    return isinstance(value, list) and all(d is None or _size(d) for d in value)


def _range(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_size(d) for d in value)


def _digest(value: Any) -> bool:
    return (
        isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    )


def _bound(value: Any) -> bool:
    return value is None or _size(value)


def _tokenizer_files(value: Any) -> bool:
    """``{file name: base64 text}`` (``tokenizer_store.py`` checks the names and the data)."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


_OUTPUT_DIM = (type(None), {"name": str})
_INPUT_DIM = (type(None), {"name": str, "min": _bound, "max": _bound, "example": _bound})
_TENSOR = {"shape": _shape, "dtype": str}
_INPUT = {**_TENSOR, "?name": str, "?index_range": _range, "?dims": [_INPUT_DIM]}
_OUTPUT = {**_TENSOR, "?dims": [_OUTPUT_DIM], "?name": str}
_STATE = {"name": str, "shape": _shape}
_PROBE = {"layer": str, "gemm": str, "roles": [str], "usages": [str]}
_TRAINING = {
    "optimizer": {"name": str},
    "parameters": [_STATE],
    "optimizer_state": [_STATE],
    "?probes": [_PROBE],
}
SCHEMA: dict[str, Spec] = {
    "format": str,  # the version, checked first (``metadata.py``)
    "qmlir_version": str,
    "iree_version": str,
    "model": str,
    "recipe": {"name": str, "options": dict},
    "target": DEVICES,
    "cuda_arch": (str, type(None)),
    "quantize_all_matmuls": bool,
    "signature": {"inputs": [_INPUT], "outputs": [_OUTPUT], "?tree": valid_tree},
    "layers": [{"layer": str, "matmul": str, "recipe": str, "note": str, "?gemm": str}],
    "scaling_state": [{"key": str, "layer": str, "kind": str, "shape": _shape}],
    "functions": [str],
    "?attention": str,
    "?gemm_operands": ("f32", "bf16"),
    "?cpu": (
        type(None),
        {"requested": str, "name": str, "arch": str, "features": [str]},
    ),
    "?weights": dict,
    "?exclude": [str],
    "?layer_recipes": list,
    "?training": _TRAINING,  # a training step (compile_training): its state, in module order
    # weights outside the module: the parameter file (compiler/runtime/parameters.py)
    "?parameters": {
        "file": str,
        "bytes": _size,
        "sha256": _digest,
        "tensors": _size,
    },
    # the buffers the model mutates, held in the module
    "?buffers": [{"name": str, "shape": _shape, "dtype": str, "zeros": bool}],
    # the model's convolutions (their layers), kept in high precision
    "?convolutions": [str],
    # a generator artifact (compile_generator): its KV cache and limits
    "?generation": {
        "max_batch": _size,
        "max_seq": _size,
        "vocab": _size,
        "layers": _size,
        "kv_cache": ("model", "fp8"),
        "cache_dtype": str,
        "eos_token_ids": [_size],
        "?pad_token_id": _size,
        "?tokenizer": _tokenizer_files,
    },
}


def check_metadata(metadata: Any) -> None:
    """Raises a one-line :class:`QmlirError` naming the first field that is missing or wrong."""
    problem = _check(metadata, SCHEMA, "metadata")
    if problem:
        raise QmlirError(f"a qmlir artifact with malformed metadata: {problem}")


def _check(value: Any, spec: Spec, where: str) -> str | None:
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return f"{where} is not an object"
        for key, sub in spec.items():
            name = key.lstrip("?")
            if name not in value:
                if key.startswith("?"):
                    continue
                return f"{where} has no '{name}'"
            problem = _check(value[name], sub, f"{where}.{name}")
            if problem:
                return problem
        return None
    if isinstance(spec, list):
        if not isinstance(value, list):
            return f"{where} is not a list"
        for i, item in enumerate(value):
            problem = _check(item, spec[0], f"{where}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(spec, tuple):
        for choice in spec:
            if _check(value, choice, where) is None:
                return None
        return f"{where} is {_short(value)}, not one of the allowed values"
    if isinstance(spec, type):
        if isinstance(value, spec) and not (spec is not bool and isinstance(value, bool)):
            return None
        return f"{where} is {_short(value)}, not {spec.__name__}"
    if callable(spec):
        kind = spec.__name__.lstrip("_")  # _shape, _range, _bound
        return None if spec(value) else f"{where} is {_short(value)}, not a {kind}"
    if value == spec:
        return None
    return f"{where} is {_short(value)}, not {spec!r}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
