"""An opt-in cache of IREE's compiled output, keyed by what went in: ``QMLIR_COMPILE_CACHE``.

Unset (the default) or ``0``: nothing is cached. A directory path: each compile whose input
module bytes, flags and IREE compiler version were seen before gives the bytes it gave then,
without running IREE (model compiles through ``iree-compile`` and the host's named-op
evaluators alike). The key is the SHA-256 of all three (and, for code built for ``host``,
this host's CPU flags), so a changed model, flag, recipe or
IREE release compiles afresh; an entry is written to a temporary file and renamed into place,
so concurrent compiles (test workers, parallel builds) never read a half-written one. Nothing
removes entries: the directory is the user's to clear. The test suite points it at a directory
of its own run, where the same sample compiles under the same recipe in many tests.
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
        return path.read_bytes()
    except OSError:
        pass
    data = produce()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written: the compile still stands
    return data


def _iree_version() -> str:
    from iree.compiler import version

    return f"{version.VERSION}-{version.REVISIONS.get('IREE', '')}"


def _host_cpu() -> str:
    from passes.base.cpu_features import host_arch, host_flags

    return f"{host_arch()}:{' '.join(sorted(host_flags() or ()))}"
