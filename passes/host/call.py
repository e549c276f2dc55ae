"""Calls a function of a loaded IREE module from Python, with the calling thread set up to wait.

IREE's ``local-task`` driver runs a call on its worker threads while the calling thread waits on
the call's fence. When the last worker signals the fence it wakes the caller, then finishes
delivering the signal; the caller, once awake, spin-waits (``pause``, no sleep) for that delivery
to finish. Linux lets a thread woken after a long sleep preempt the thread that woke it on the
same CPU, so the caller often takes the CPU from the very worker it spins on, and both wait for
the next scheduler tick (4 ms at 250 Hz). On a 2-core VM that cost hit 30-50% of the calls of the
4096 x 4096 quantize core (``benchmarks/RESULTS.md``): the calling thread burned 2-5 ms of CPU in
those calls and nothing else.

``SCHED_BATCH`` is Linux's policy for a thread that must not preempt others on wake-up, which is
what a thread waiting for its workers wants. :func:`call` switches the calling thread (only it) to
``SCHED_BATCH`` for the duration of the call and back to ``SCHED_OTHER`` afterwards; a thread
under any other policy (real-time, idle, already batch) is left as it is, and so is a platform
where the switch is not allowed (no ``os.sched_setscheduler``, or a sandbox that refuses it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from iree import runtime as iree_runtime
from iree.runtime.array_interop import map_dtype_to_element_type

from passes.base.abi import INDEX_CHECK
from passes.base.errors import QmlirError

_BATCH: int | None = getattr(os, "SCHED_BATCH", None)  # Linux only


@contextmanager
def waiting_thread() -> Iterator[bool]:
    """The calling thread under ``SCHED_BATCH`` for the block; yields whether it was switched."""
    switched = False
    if _BATCH is not None:
        try:
            if os.sched_getscheduler(0) == os.SCHED_OTHER:
                os.sched_setscheduler(0, _BATCH, os.sched_param(0))
                switched = True
        except OSError:  # refused (a sandbox): run the call as it is
            pass
    try:
        yield switched
    finally:
        if switched:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def call(function: Callable[..., Any], *args: Any, batch: bool = True) -> tuple[Any, ...]:
    """``function(*args)`` (an IREE module function) with its results as a tuple.

    ``batch=False`` leaves the calling thread's scheduling alone (drivers without worker threads
    waking the caller, such as ``cuda``). A call that fails a check the compile put in the module
    (an index the model computed outside its table, ``passes/check_indices.py``) raises a
    one-line :class:`QmlirError` saying which layer.
    """
    try:
        if batch:
            with waiting_thread():
                results = function(*args)
        else:
            results = function(*args)
    except RuntimeError as e:
        message = failed_check(str(e))
        if message is None:
            raise
        raise QmlirError(message) from None
    if results is None:
        return ()
    return tuple(results) if isinstance(results, (tuple, list)) else (results,)


def failed_check(error: str) -> str | None:
    """The message of the module's check that an IREE call ``error`` reports, or None when
    the error is not one of those checks (IREE: ``...FAILED_PRECONDITION; <message>; ...``)."""
    start = error.find(INDEX_CHECK)
    if start < 0:
        return None
    text = error[start + len(INDEX_CHECK) :]
    end = text.find(";")
    return (text if end < 0 else text[:end]).strip()


IMPORT_BYTES = 1 << 16  # smaller arrays are copied: nothing to gain
IMPORT_ALIGNMENT = 64  # as IREE aligns its own host buffers (its kernels may assume it)


def aligned_empty(nbytes: int) -> np.ndarray:
    """``nbytes`` uninitialized bytes starting :data:`IMPORT_ALIGNMENT`-aligned (``np.empty`` of
    a large size starts 16 bytes into its mapping, which :func:`imported` cannot take)."""
    raw = np.empty(nbytes + IMPORT_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % IMPORT_ALIGNMENT
    return raw[start : start + nbytes]


def imported(device: Any, array: Any) -> Any:
    """``array`` (a numpy array) as an IREE array on ``device``, a host device (``local-task``),
    sharing its memory: IREE copies a numpy argument into a buffer of its own at every call,
    which cost more than the quantize itself (an 8B model's weight stream spent 26 s in its
    calls, most of it in those copies of 16 GB twice; benchmarks/RESULTS.md). **The caller keeps
    ``array`` alive until the call returns** (IREE's import did not keep a numpy view alive: a
    call read freed memory and crashed) and does not change it while a call reads it. Anything
    else, or an array not worth or not fit for it (under 64 KiB, not 64-byte aligned, not
    C-contiguous, an unknown dtype), is returned unchanged and copied by the call as before."""
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
        return array
    if array.nbytes < IMPORT_BYTES or array.ctypes.data % IMPORT_ALIGNMENT:
        return array  # small (a copy costs nothing) or misaligned for IREE's kernels
    element_type = map_dtype_to_element_type(array.dtype)
    if element_type is None:
        return array
    try:
        buffer = device.allocator.import_host_allocation(
            array,
            iree_runtime.MemoryType.HOST_LOCAL | iree_runtime.MemoryType.DEVICE_VISIBLE,
            iree_runtime.BufferUsage.DEFAULT | iree_runtime.BufferUsage.MAPPING,
        )
    except (RuntimeError, ValueError, TypeError):  # alignment or usage the device refuses
        return array
    view = iree_runtime.HalBufferView(buffer, array.shape, element_type)
    return iree_runtime.DeviceArray(
        device, view, implicit_host_transfer=True, override_dtype=array.dtype
    )


def host_copies(results: tuple[Any, ...]) -> list[np.ndarray]:
    """Each result copied into a numpy array the caller owns (IREE's host view is a mapping)."""
    return [np.array(r.to_host(), copy=True) for r in results]
