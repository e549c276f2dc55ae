"""Keeping freed memory in the process, so that IREE's per-call CPU buffers do not page-fault.

An llvm-cpu call allocates its transient buffers from the C heap and frees them when it returns.
glibc's ``malloc`` serves large blocks with ``mmap`` and hands freed memory back to the kernel
(``munmap``, or trimming the heap's top), so the next call's buffers are fresh pages: every page
faulted in and zeroed again, on every call. A generator with external FP8 weights decodes and
repacks each weight into such buffers at each step (hundreds of MB a step for a 0.35B model):
a quarter of its CPU time was the kernel's (``benchmarks/profile_decode.py``, RESULTS.md).

:func:`retain_freed_memory` tells glibc to serve every block from the heap and to keep what is
freed (``mallopt``: ``M_MMAP_MAX`` 0, ``M_TRIM_THRESHOLD`` at its maximum), so a call reuses the
pages of the last. The process's peak RSS stays what it was (the buffers' high-water mark); its
RSS no longer drops back between calls. Process-wide and for the life of the process, so it is
the caller's choice: the ``qmlir`` command makes it for its own process; a Python program calls
it, or sets ``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647`` in its environment.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_MAX = -4
TRIM_THRESHOLD = 2**31 - 1  # mallopt takes an int

_retained = False


def retain_freed_memory() -> bool:
    """Makes glibc's ``malloc`` keep freed memory for reuse (see the module's docstring). Returns
    whether it applies: False (and nothing changed) off glibc, or if ``mallopt`` refuses."""
    global _retained
    if _retained:
        return True
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success
    _retained = bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _retained
