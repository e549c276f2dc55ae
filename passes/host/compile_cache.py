"""An opt-in cache of IREE's compiled output, keyed by what went in: ``QMLIR_COMPILE_CACHE``.

Unset (the default) or ``0``: nothing is cached. A directory path: each compile whose input
module bytes, flags and IREE compiler version were seen before gives the bytes it gave then,
without running IREE (model compiles through ``iree-compile`` and the host's named-op
evaluators alike). The key is the SHA-256 of all three (and, for code built for ``host``,
this host's CPU flags), so a changed model, flag, recipe or
IREE release compiles afresh; an entry is written to a temporary file and renamed into place,
so concurrent compiles (test workers, parallel builds) never read a half-written one. A hit
refreshes its entry's time; once the directory holds more than ``QMLIR_COMPILE_CACHE_MAX_GB``
(default 4) GB, the entries least recently used go first. The test suite keeps one in the user's
cache directory (``tests/conftest.py``): an unchanged model compiles once across runs, as ccache
does for C.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

ENV = "QMLIR_COMPILE_CACHE"


def cache_directory() -> Path | None:
    """The cache's directory, or None when caching is off."""
    value = os.environ.get(ENV, "").strip()
    if value in ("", "0"):
        return None
    return Path(value)


def cache_key(parts: Iterable[bytes | str]) -> str:
    """The SHA-256 of ``parts`` and the IREE compiler's version, each length-prefixed."""
    parts = list(parts)
    # "host" means this machine's CPU: part of the key, so a shared cache never hands code built
    # for one host's instructions to another
    host = any(isinstance(p, str) and p.endswith("=host") for p in parts)
    digest = hashlib.sha256()
    for part in (_iree_version(), _host_cpu() if host else "", *parts):
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def cached_compile(parts: Iterable[bytes | str], produce: Callable[[], bytes]) -> bytes:
    """``produce()``'s bytes, from the cache when ``parts`` were compiled before (and stored
    there after a compile that succeeds); ``produce()`` alone when caching is off."""
    directory = cache_directory()
    if directory is None:
        return produce()
    path = directory / f"{cache_key(parts)}.vmfb"
    try:
        data = path.read_bytes()
        os.utime(path)  # recently used: the last to go
        return data
    except OSError:
        pass
    data = produce()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        _evict(directory)
    except OSError:
        pass  # a cache that cannot be written: the compile still stands
    return data


def _evict(directory: Path) -> None:
    """Removes the least recently used entries while the directory holds more than its cap."""
    try:
        cap = float(os.environ.get(ENV + "_MAX_GB", "4")) * 1e9
    except ValueError:
        cap = 4e9
    entries = []
    for entry in directory.glob("*.vmfb"):
        try:
            info = entry.stat()
        except OSError:
            continue
        entries.append((info.st_mtime, info.st_size, entry))
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries, key=lambda e: e[0]):
        if total <= cap:
            break
        entry.unlink(missing_ok=True)
        total -= size


def _iree_version() -> str:
    from iree.compiler import version

    return f"{version.VERSION}-{version.REVISIONS.get('IREE', '')}"


def _host_cpu() -> str:
    from passes.base.cpu_features import host_arch, host_flags

    return f"{host_arch()}:{' '.join(sorted(host_flags() or ()))}"
