"""Zeros that cost no memory: the initial values of a module's zero-initialized buffers (a KV
cache), handed to IREE without a copy.

A generator's module holds its KV cache; the runtime sets it at load through
``@qmlir.set_buffers`` (``passes/hold_buffers.py``). Passed as ``np.zeros`` arrays, the cache's
bytes were in memory three times at the first call: the host arrays (``malloc`` clears memory it
reuses page by page), IREE's copies of them as arguments, and the buffers the module holds (12.6
MB each for a 0.35B Llama's 512 positions; ``benchmarks/RESULTS.md``). Here the zeros lie on one
private anonymous mapping nothing ever writes: reading it maps the kernel's zero page, adding
nothing to the process's RSS, and its page alignment lets IREE import it (``imported`` in
``passes/host/call.py``) rather than copy it. Only the held buffers' own bytes remain.
"""

from __future__ import annotations

import mmap
from collections.abc import Sequence
from typing import Any

import numpy as np

ALIGNMENT = 64  # IREE's host buffers' alignment (``passes/host/call.py``)


def untouched_zeros(specs: Sequence[tuple[Sequence[int], Any]]) -> list[np.ndarray]:
    """One array of zeros per ``(shape, dtype)``, views of one anonymous mapping, each
    64-byte aligned. Writable (IREE imports only writable memory); nothing may write them."""
    layout = []
    offset = 0
    for shape, dtype in specs:
        dtype = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        layout.append((tuple(shape), dtype, count, offset))
        offset += -(-count * dtype.itemsize // ALIGNMENT) * ALIGNMENT
    if offset == 0:
        return [np.zeros(shape, dtype) for shape, dtype, _, _ in layout]
    pages = mmap.mmap(-1, offset, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return [
        np.frombuffer(pages, dtype, count, start).reshape(shape)
        for shape, dtype, count, start in layout
    ]
