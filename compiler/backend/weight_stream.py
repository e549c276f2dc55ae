"""The parameter file's stream in three overlapping parts: checkpoint tensors read one ahead of
their use, the quantize calls on the calling thread, and the file's bytes hashed and written
behind it.

Done one after the other, the weight stream of an 8B model took 83 s against the 17 s its bytes
need at the host's copy and disk rates (``benchmarks/RESULTS.md``): each tensor waited for its
read, then the quantize call waited for it, then the write and the SHA-256 waited for the call.
Reading (``readinto``, ``preadv``), hashing (``hashlib`` on buffers of more than 2 KiB) and
writing all release the GIL, as IREE's calls do, so on two cores they run beside the quantize
core.

Memory stays bounded: one tensor of at most :data:`READ_AHEAD` bytes read ahead (the next one
the stream will ask for) and at most :data:`WRITE_BEHIND` bytes queued for the writer and the
hasher beyond the chunk each is on.
"""

from __future__ import annotations

import hashlib
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, BinaryIO

import numpy as np

WRITE_BEHIND = 256 << 20  # bytes queued for the file and the hash, besides the current chunk
READ_AHEAD = 256 << 20  # the largest tensor read ahead: a larger one is read when asked for
ADVISE_AHEAD = 1 << 30  # bytes of the tensors after it the kernel is asked to fetch from disk


class ReadAhead:
    """``reader`` with the next tensor of ``order`` (names in the order the stream first asks
    for them) read in a background thread while the current one is used.

    A tensor of more than :data:`READ_AHEAD` bytes (``nbytes(name)``) is not read ahead: it
    would sit beside the current one's chain (an 8B model's 1 GB ``lm_head`` and embedding: the
    compile's peak went from 3.3 to 4.4 GB). A name asked for out of that order, or too large,
    is read on the calling thread; a read's error is raised where the tensor is asked for.

    A ``reader`` with an ``advise(name)`` method (a checkpoint's: ``posix_fadvise`` WILLNEED)
    is told of the tensors up to :data:`ADVISE_AHEAD` bytes past the one read ahead, so the
    disk works on them meanwhile: a checkpoint larger than the page cache leaves (an 8B's 16 GB
    on a 24 GB host, beside the parameter file being written) is read from the disk, and one
    read at a time kept it at half its rate. That read-ahead is the kernel's page cache, not
    the process's memory. (A checkpoint's large tensors are read past the page cache where the
    cache lacks them, ``compiler/frontend/tensor_read.py``: it advises only the others.)"""

    def __init__(
        self,
        reader: Callable[[str], np.ndarray],
        order: Iterable[str],
        nbytes: Callable[[str], int] | None = None,
    ) -> None:
        self._reader = reader
        self._nbytes = nbytes
        self._order = deque(dict.fromkeys(order))
        self._ahead: tuple[str, Future[np.ndarray]] | None = None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="qmlir-read")
        self._advise: Callable[[str], None] | None = getattr(reader, "advise", None)
        self._advised: set[str] = set()
        self._start_next()

    def _start_next(self) -> None:
        while self._ahead is None and self._order:
            name = self._order.popleft()
            if self._nbytes is not None and self._nbytes(name) > READ_AHEAD:
                continue  # read when asked for
            self._ahead = (name, self._pool.submit(self._reader, name))
        if self._advise is None or self._nbytes is None:
            return
        ahead = 0
        for name in self._order:
            ahead += self._nbytes(name)
            if ahead > ADVISE_AHEAD:
                break
            if name not in self._advised:
                self._advised.add(name)
                self._advise(name)

    def __call__(self, name: str) -> np.ndarray:
        if self._ahead is not None and self._ahead[0] == name:
            future = self._ahead[1]
            self._ahead = None
            self._start_next()
            return future.result()
        if name in self._order:  # asked for early: read now, never twice
            self._order.remove(name)
        return self._reader(name)

    def close(self) -> None:
        """Stops reading ahead (a read in progress finishes and is dropped)."""
        self._order.clear()
        if self._ahead is not None:
            self._ahead[1].cancel()
            self._ahead = None
        self._pool.shutdown(wait=True)


class _Worker:
    """A thread applying ``consume`` to queued buffers in order; the first error it meets is
    kept and raised to the producer."""

    def __init__(self, name: str, consume: Callable[[memoryview], Any]) -> None:
        self._consume = consume
        self._queue: deque[tuple[memoryview, Any] | None] = deque()
        self._queued = 0
        self._ready = threading.Condition()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, item: tuple[memoryview, Any] | None) -> None:
        """Queues a buffer and its owner (kept alive until the buffer is consumed), or None:
        the end."""
        size = 0 if item is None else item[0].nbytes
        with self._ready:
            while self._queued and self._queued + size > WRITE_BEHIND and self.error is None:
                self._ready.wait()
            self._queue.append(item)
            self._queued += size
            self._ready.notify_all()

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._queue:
                    self._ready.wait()
                item = self._queue.popleft()
            if item is None:
                return
            data = item[0]
            if self.error is None:
                try:
                    self._consume(data)
                except BaseException as e:  # raised to the producer by join() or put()
                    self.error = e
            del item  # the owner goes once both workers are done with it
            with self._ready:
                self._queued -= data.nbytes
                self._ready.notify_all()

    def join(self) -> None:
        self.put(None)
        self._thread.join()


class WriteBehind:
    """Writes buffers to ``out`` and hashes them (SHA-256), each in a thread of its own, in the
    order given; :meth:`finish` waits for both and gives the hex digest. A write's error
    (a full disk) is raised by the next :meth:`emit` or by :meth:`finish`."""

    def __init__(self, out: BinaryIO) -> None:
        self._digest = hashlib.sha256()
        self._workers = (
            _Worker("qmlir-write", out.write),
            _Worker("qmlir-hash", self._digest.update),
        )

    def _raise(self) -> None:
        for worker in self._workers:
            if worker.error is not None:
                raise worker.error

    def emit(self, data: bytes | memoryview, owner: Any = None) -> None:
        """Queues ``data`` for the file and the hash; ``owner`` (what ``data`` is a view of, an
        IREE result mapped to the host) is kept alive until both are done with it."""
        self._raise()
        view = memoryview(data)
        for worker in self._workers:
            worker.put((view, owner))

    def finish(self) -> str:
        for worker in self._workers:
            worker.join()
        self._raise()
        return self._digest.hexdigest()

    def abandon(self) -> None:
        """Stops the threads after an error elsewhere (what they wrote is discarded by the
        caller)."""
        for worker in self._workers:
            worker.error = worker.error or RuntimeError("abandoned")
            worker.join()
