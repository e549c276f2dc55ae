"""The parameter file beside an artifact whose weights are outside its module: finding it,
checking it against the seal, and handing it to IREE mapped, not copied.

``model.vmfb`` reads ``model.params.safetensors`` (:func:`parameters_beside`), or the file a
caller names. The artifact's sealed metadata records the file's size and SHA-256
(``metadata.Parameters``); :func:`verify_parameters` refuses a missing, truncated, swapped or
modified file with one line, before the module is loaded.

Hashing reads the whole file (an 8.6 GB one: 22 s from disk on the AVX2 host, benchmarks/
RESULTS.md), so a verified file is remembered:
``verified-parameters.json`` in qmlir's cache directory (``$QMLIR_CACHE_DIR``, else
``$XDG_CACHE_HOME/qmlir``, else ``~/.cache/qmlir``) maps the file's real path to its device,
inode, size, modification and change times (ns) and its digest. A later load whose file has the
same identity and times skips the hash. Any write to the file changes its change time (``ctime``,
which no user call can set back), so a file modified after it was verified is hashed again; a
file swapped in by rename has another inode. A cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from compiler.runtime.metadata import Parameters
from passes.base.errors import QmlirError
from passes.base.files import write_atomically

SUFFIX = ".params.safetensors"
SCOPE = "model"  # passes/ir/parameters.py's (that module needs iree.compiler; this one must not)
_CHUNK = 16 << 20


def parameters_beside(artifact: Path) -> Path:
    """``dir/model.vmfb`` → ``dir/model.params.safetensors`` (any other suffix is kept:
    ``m.bin`` → ``m.bin.params.safetensors``)."""
    stem = artifact.name[: -len(".vmfb")] if artifact.name.endswith(".vmfb") else artifact.name
    return artifact.with_name(stem + SUFFIX)


def safetensors_header(path: Path) -> dict[str, Any]:
    """A safetensors file's tensors (``{name: {"dtype", "shape", "data_offsets"}}``) from its
    header, without the ``__pad<n>`` tensors that align qmlir's; ``ValueError`` when it is not
    one."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise ValueError("shorter than a safetensors header")
        length = int.from_bytes(head, "little")
        if length > 100 << 20:
            raise ValueError("not a safetensors file (header length)")
        try:
            header = json.loads(f.read(length))
        except ValueError:
            raise ValueError("not a safetensors file (header)") from None
    if not isinstance(header, dict):
        raise ValueError("not a safetensors file (header)")
    header.pop("__metadata__", None)
    return {k: v for k, v in header.items() if not k.startswith("__pad")}


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        buffer = bytearray(_CHUNK)
        view = memoryview(buffer)
        while n := f.readinto(buffer):
            digest.update(view[:n])
    return digest.hexdigest()


def verify_parameters(path: Path, record: Parameters) -> None:
    """Raises a one-line :class:`QmlirError` unless ``path`` is the parameter file the artifact
    was sealed with."""
    try:
        info = path.stat()
    except OSError:
        raise QmlirError(
            f"the artifact's weights are in a parameter file and '{path}' does not exist "
            f"(it was written as '{record.file}', {record.nbytes} bytes; pass its path with "
            "--parameters)"
        ) from None
    if info.st_size != record.nbytes:
        raise QmlirError(
            f"parameter file '{path}' has {info.st_size} bytes, the artifact was sealed with "
            f"{record.nbytes}: truncated, or another model's"
        )
    identity = _identity(info)
    cache = _read_cache()
    key = str(path.resolve())
    if cache.get(key) == {**identity, "sha256": record.sha256}:
        return
    if file_sha256(path) != record.sha256:
        raise QmlirError(
            f"parameter file '{path}' does not match the artifact: its SHA-256 differs from "
            "the sealed one (modified, corrupted, or another compile's)"
        )
    cache[key] = {**identity, "sha256": record.sha256}
    _write_cache(cache)


def _identity(info: os.stat_result) -> dict[str, int]:
    return {
        "dev": info.st_dev,
        "ino": info.st_ino,
        "size": info.st_size,
        "mtime_ns": info.st_mtime_ns,
        "ctime_ns": info.st_ctime_ns,
    }


def cache_dir() -> Path:
    explicit = os.environ.get("QMLIR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "qmlir"


def _cache_file() -> Path:
    return cache_dir() / "verified-parameters.json"


def _read_cache() -> dict[str, Any]:
    try:
        value = json.loads(_cache_file().read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _write_cache(cache: dict[str, Any]) -> None:
    live = {k: v for k, v in cache.items() if Path(k).exists()}  # forget removed files
    try:
        write_atomically(_cache_file(), json.dumps(live, sort_keys=True).encode())
    except OSError:
        pass


def parameter_modules(instance: Any, path: Path) -> list[Any]:
    """The IREE module serving ``path``'s tensors as scope ``model``, the file mapped."""
    from iree import runtime as iree_runtime

    index = iree_runtime.ParameterIndex()
    try:
        index.load(str(path), format="safetensors")
    except (ValueError, RuntimeError) as e:
        raise QmlirError(f"cannot read parameter file '{path}': {str(e).splitlines()[0]}") from e
    provider = index.create_provider(scope=SCOPE)
    return [iree_runtime.create_io_parameters_module(instance, provider)]
