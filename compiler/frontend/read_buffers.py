"""Memory for checkpoint reads, used again once a tensor is dropped.

A fresh buffer for each tensor read is fresh pages: the kernel zeroes each one as ``readinto``
first touches it, then unmaps it when the tensor is dropped (glibc maps every block of more than
32 MB anew; smaller ones its heap already reuses). Streaming an 8B checkpoint (16 GB of bf16,
its layers' tensors 33-117 MB) from a cold page cache, that zeroing took 23% of the host's CPU
time in the weight stream (perf), in the read thread that shares the two cores with the
quantize calls; with the buffers reused 6.5%, and the stream 29.0 -> 25.6 s
(``benchmarks/RESULTS.md``). The stream drops each tensor after its last call and soon reads
another of the same shape: its pages can serve that read as they are.
"""

from __future__ import annotations

import ctypes
import threading
import weakref

import numpy as np

from passes.host.call import aligned_empty

SLACK = 2  # a buffer serves a request of at least 1/SLACK its size


class ReadBuffers:
    """Aligned byte buffers (:func:`aligned_empty`) of at most ``largest`` bytes handed out as
    numpy views; once every view of one is gone, its buffer is kept for the next request it
    fits, at most ``keep`` bytes of them. A larger request gets memory of its own and empties
    the pool (the tensors around such a one, an 8B model's ``lm_head``, are few: what is kept
    would only add to the compile's peak). Thread-safe: views are dropped in any thread."""

    def __init__(self, largest: int, keep: int) -> None:
        self._largest = largest
        self._keep = keep
        self._free: list[np.ndarray] = []  # oldest first
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> np.ndarray:
        """``nbytes`` uninitialized bytes, 64-byte aligned."""
        if nbytes > self._largest:
            with self._lock:
                self._free.clear()
            return aligned_empty(nbytes)
        with self._lock:
            fits = [b for b in self._free if nbytes <= b.nbytes <= SLACK * nbytes]
            block = min(fits, key=lambda b: b.nbytes) if fits else None
            if block is not None:
                self._free = [b for b in self._free if b is not block]
        if block is None:
            block = aligned_empty(nbytes)
        # numpy keeps the object it reads a buffer from as its views' base: a ctypes array over
        # the block, whose end (the last view gone) gives the block back (a memoryview would
        # not do: numpy takes a view of its own of one)
        owner = (ctypes.c_char * nbytes).from_buffer(block)
        weakref.finalize(owner, self._give_back, block)
        return np.frombuffer(owner, np.uint8)

    def _give_back(self, block: np.ndarray) -> None:
        with self._lock:
            self._free.append(block)
            while sum(b.nbytes for b in self._free) > self._keep:
                self._free.pop(0)

    def kept(self) -> int:
        """Bytes held for reuse."""
        with self._lock:
            return sum(b.nbytes for b in self._free)
