"""Named tensors on disk: ``.safetensors`` (the format torch, transformers and safetensors read)
or ``.npz``, by suffix. The safetensors format is a little-endian u64 header length, a JSON
header (each tensor's dtype, shape and byte range) and the raw bytes; this module reads and
writes float32 tensors in it with numpy alone (running a step needs no torch)."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

from passes.base.errors import QmlirError
from passes.base.files import write_atomically

SUFFIXES = (".safetensors", ".npz")
_DTYPES = {"F32": np.dtype("<f4")}


def write_tensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """Writes float32 ``tensors`` to ``path`` (atomically: a temp file, then a rename)."""
    arrays = {k: np.ascontiguousarray(np.asarray(v, dtype="<f4")) for k, v in tensors.items()}
    if path.suffix == ".npz":
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        write_atomically(path, buffer.getvalue())
        return
    if path.suffix != ".safetensors":
        raise QmlirError(f"'{path}': write tensors to a .safetensors or .npz file")
    header: dict[str, object] = {}
    offset = 0
    for name, array in arrays.items():
        header[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [offset, offset + array.nbytes],
        }
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    body = b"".join(a.tobytes() for a in arrays.values())
    write_atomically(path, struct.pack("<Q", len(text)) + text + body)


def read_tensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a ``.safetensors`` or ``.npz`` file, by name."""
    if not path.is_file():
        raise QmlirError(f"tensor file '{path}' does not exist")
    if path.suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as loaded:
                return npz_arrays(loaded, path)
        except QmlirError:
            raise
        except Exception as e:
            raise QmlirError(f"cannot read '{path}': {e}") from e
    if path.suffix != ".safetensors":
        raise QmlirError(f"'{path}': read tensors from a .safetensors or .npz file")
    data = path.read_bytes()
    try:
        (length,) = struct.unpack_from("<Q", data)
        header = json.loads(data[8 : 8 + length])
        base = 8 + length
        out = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            dtype = _DTYPES.get(entry["dtype"])
            if dtype is None:
                raise QmlirError(f"'{path}': tensor '{name}' is {entry['dtype']}, not F32")
            start, end = entry["data_offsets"]
            array = np.frombuffer(data[base + start : base + end], dtype=dtype)
            out[name] = array.reshape(entry["shape"]).copy()
        return out
    except QmlirError:
        raise
    except Exception as e:
        raise QmlirError(f"'{path}' is not a readable .safetensors file ({e})") from e


def npz_arrays(loaded: Any, path: Path) -> dict[str, np.ndarray]:
    """The arrays of an open ``.npz``, or one line naming the one that holds Python objects."""
    arrays = {}
    for key in loaded.files:
        try:
            arrays[key] = loaded[key]
        except ValueError as e:
            raise QmlirError(
                f"'{path}': array '{key}' holds Python objects (dtype object): save numeric "
                "arrays (qmlir reads no pickled data)"
            ) from e
    return arrays
