"""Checkpoint reads take the memory of dropped tensors again, never while a view of it lives."""

from __future__ import annotations

import gc
import threading

import numpy as np

from compiler.frontend.read_buffers import ReadBuffers


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_a_dropped_buffer_serves_the_next_read_that_fits() -> None:
    pool = ReadBuffers(largest=1 << 20, keep=1 << 20)
    a = pool.take(4096)
    assert a.nbytes == 4096 and _address(a) % 64 == 0 and a.flags.writeable
    first = _address(a)
    tensor = a.view(np.float32).reshape(32, 32)[:, :16]  # a view of a view keeps it in use
    del a
    gc.collect()
    assert pool.kept() == 0
    b = pool.take(4096)
    assert _address(b) != first  # still in use: fresh memory
    del tensor, b
    gc.collect()
    assert pool.kept() == 2 * 4096
    again = pool.take(3000)
    assert _address(again) == first and again.nbytes == 3000 and pool.kept() == 4096
    c = pool.take(1000)  # 4096 is more than twice 1000: not handed out for it
    assert pool.kept() == 4096 and c.nbytes == 1000


def test_the_kept_bytes_are_bounded_and_a_large_read_empties_the_pool() -> None:
    pool = ReadBuffers(largest=1 << 16, keep=3 << 12)
    views = [pool.take(4096) for _ in range(5)]
    del views
    gc.collect()
    assert pool.kept() == 3 * 4096  # the oldest let go
    large = pool.take(1 << 17)
    assert large.nbytes == 1 << 17 and pool.kept() == 0
    del large
    gc.collect()
    assert pool.kept() == 0  # memory of its own, not kept


def test_views_dropped_in_other_threads() -> None:
    pool = ReadBuffers(largest=1 << 20, keep=1 << 20)
    held = [pool.take(8192) for _ in range(8)]

    def drop() -> None:
        while held:
            held.pop()
            gc.collect()

    threads = [threading.Thread(target=drop) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert pool.kept() == 8 * 8192
