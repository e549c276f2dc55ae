"""A checkpoint tensor's bytes read into memory: from the page cache where the kernel holds
them, else straight from the disk (``O_DIRECT``).

Read through the page cache, a tensor the kernel does not hold is copied twice: by the disk into
fresh page-cache pages, then by ``readinto`` into the stream's buffer. Streaming an 8B
checkpoint (16 GB of bf16) from a cold cache on a two-core VM, those reads took 8-10 s of kernel
time (perf: ``_copy_to_iter``), beside the quantize calls, the hash and the parameter file's
writes on the same two cores; read with ``O_DIRECT``, 1.3 s, plus 0.8 s to move each tensor
onto a 64-byte boundary (``benchmarks/RESULTS.md``). A tensor the page cache holds (a
checkpoint just written or read) is copied from there: the disk would be slower than the copy.

``O_DIRECT`` reads whole 512-byte sectors into sector-aligned memory: the tensor's span is read
from the sector it starts in, and the tensor, which a safetensors header places at any 8-byte
offset, is moved down to the 64-byte boundary before it (:data:`ALIGNMENT`, what IREE imports
without a copy). A file system without ``O_DIRECT`` (tmpfs), a platform without it or without
``mincore``, and a tensor under :data:`DIRECT_MIN` bytes read through the page cache.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
from pathlib import Path

import numpy as np

from compiler.frontend.read_buffers import ReadBuffers

SECTOR = 4096  # O_DIRECT's alignment of file offsets, lengths and memory (512 on most disks)
ALIGNMENT = 64  # of the returned bytes
DIRECT_MIN = 4 << 20  # smaller tensors: through the page cache
RESIDENT = 0.5  # a tensor with at least this share of its pages in the page cache: copied


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        libc.mincore  # noqa: B018 (present?)
    except (OSError, AttributeError, TypeError):
        return None
    libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
    libc.mincore.restype = ctypes.c_int
    return libc


_LIBC = _libc() if hasattr(os, "O_DIRECT") else None
_NO_DIRECT: set[Path] = set()  # files whose file system refused O_DIRECT


def resident_share(fd: int, start: int, nbytes: int) -> float:
    """The share of the pages of bytes ``[start, start + nbytes)`` of open file ``fd`` that the
    page cache holds (``mincore`` over a mapping of them; the mapping touches no page)."""
    assert _LIBC is not None
    page = mmap.PAGESIZE
    first = start - start % page
    length = min(start + nbytes, os.fstat(fd).st_size) - first
    if length <= 0:
        return 1.0  # past the end: nothing to read from the disk
    pages = -(-length // page)
    with mmap.mmap(fd, length, offset=first, access=mmap.ACCESS_READ) as m:
        vec = np.zeros(pages, np.uint8)
        view = np.frombuffer(m, np.uint8)
        address = view.__array_interface__["data"][0]
        failed = _LIBC.mincore(address, length, vec.ctypes.data) != 0
        del view  # before the mapping closes
    if failed:
        return 1.0  # unknown: read through the cache, as before
    return float(np.count_nonzero(vec & 1)) / pages


def may_read_direct(path: Path, nbytes: int) -> bool:
    """Whether a tensor of ``nbytes`` in ``path`` is read past the page cache when the cache
    does not hold it (then asking the kernel to fetch it ahead would only fill the cache)."""
    return _LIBC is not None and nbytes >= DIRECT_MIN and path not in _NO_DIRECT


def read_tensor(path: Path, start: int, nbytes: int, buffers: ReadBuffers) -> np.ndarray:
    """Bytes ``[start, start + nbytes)`` of ``path`` as a 64-byte aligned ``uint8`` array;
    fewer bytes than asked for if the file ends first. Read through the page cache, into memory
    from ``buffers``; read past it, into memory of its own: with ``buffers`` there too, the 8B
    stream's anonymous memory grew by ~40 MB a layer (cause not found; ``malloc_trim`` did not
    return it), to peaks of 3.5-5.4 GB against 2.6 GB with fresh memory, at the same speed
    (``benchmarks/RESULTS.md``)."""
    with open(path, "rb", buffering=0) as f:
        if may_read_direct(path, nbytes) and resident_share(f.fileno(), start, nbytes) < RESIDENT:
            data = _read_direct(path, start, nbytes)
            if data is not None:
                return data
        data = buffers.take(nbytes)
        f.seek(start)
        got = f.readinto(memoryview(data))
    return data[:got]


def _read_direct(path: Path, start: int, nbytes: int) -> np.ndarray | None:
    first = start - start % SECTOR
    end = -(-(start + nbytes) // SECTOR) * SECTOR
    raw = np.empty(end - first + SECTOR, np.uint8)
    skip = -raw.ctypes.data % SECTOR
    span = raw[skip : skip + end - first]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        _NO_DIRECT.add(path)
        return None
    try:
        got = _read_span(fd, memoryview(span), first)
    except OSError:
        _NO_DIRECT.add(path)
        return None
    finally:
        os.close(fd)
    head = start - first
    got = max(0, min(got - head, nbytes))
    to = skip + head - head % ALIGNMENT  # the 64-byte boundary at or before the tensor
    base = raw.ctypes.data
    ctypes.memmove(base + to, base + skip + head, got)
    return raw[to : to + got]


def _read_span(fd: int, span: memoryview, offset: int) -> int:
    """Reads ``span`` from ``offset`` of ``fd`` (opened ``O_DIRECT``) in as many reads as it
    takes: the bytes read, fewer than asked for only at the file's end."""
    got = 0
    while got < len(span):
        n = os.preadv(fd, [span[got:]], offset + got)
        got += n
        if n == 0 or n % SECTOR:  # the end of the file (a partial sector is its last)
            break
    return got
