"""Keeping freed memory in the process, so that IREE's per-call CPU buffers do not page-fault.

An llvm-cpu call allocates its transient buffers from the C heap and frees them when it returns.
glibc's ``malloc`` serves large blocks with ``mmap`` and hands freed memory back to the kernel
(``munmap``, or trimming the heap's top), so the next call's buffers are fresh pages: every page
faulted in and zeroed again, on every call. A generator with external FP8 weights decodes and
repacks each weight into such buffers at each step (hundreds of MB a step for a 0.35B model):
a quarter of its CPU time was the kernel's (``benchmarks/profile_decode.py``, RESULTS.md).

:func:`retain_freed_memory` tells glibc to serve every block from the heap and to keep what is
freed (``mallopt``: ``M_MMAP_MAX`` 0, ``M_TRIM_THRESHOLD`` at its maximum), so a call reuses the
pages of the last. The process's peak RSS stays about what it was (the buffers' high-water
mark; a Mistral-like model's at 8 x 256 tokens 122 -> 139 MB, the heap's reuse less tight than
fresh mappings); its RSS no longer drops back between calls. It is process-wide, for the life
of the process, and it is the default: the ``qmlir`` command makes it before it loads an
artifact, and a Python program gets it at the first call of an llvm-cpu artifact
(:func:`retain_for_cpu_calls`), since without it any call whose transient buffers pass glibc's
``mmap`` threshold (32 MiB at most) faults them in again each time: the decoder sample's mxfp8
dynamic artifact ran 1.4x slower so, a Mistral-like model's at 2048 tokens 1.5x
(benchmarks/RESULTS.md). A program that wants glibc's policy calls
``retain_freed_memory(False)`` before (or sets ``QMLIR_RETAIN_FREED_MEMORY=0``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_MAX = -4
TRIM_THRESHOLD = 2**31 - 1  # mallopt takes an int

# glibc's defaults (malloc.h: DEFAULT_MMAP_MAX, DEFAULT_TRIM_THRESHOLD), set back by
# retain_freed_memory(False)
DEFAULT_MMAP_MAX = 65536
DEFAULT_TRIM_THRESHOLD = 128 * 1024
ENV = "QMLIR_RETAIN_FREED_MEMORY"  # "0": no retention at a CPU artifact's first call

_retained = False
_declined = False


def retain_freed_memory(enable: bool = True) -> bool:
    """Makes glibc's ``malloc`` keep freed memory for reuse (see the module's docstring). Returns
    whether it applies: False (and nothing changed) off glibc, or if ``mallopt`` refuses.

    ``enable=False``: no retention at an llvm-cpu artifact's first call
    (:func:`retain_for_cpu_calls`) and, if it was made already, glibc's default limits set back
    (``mallopt`` keeps its thresholds fixed from then on: glibc's own adjustment of them stays
    off). Returns False."""
    global _retained, _declined
    _declined = not enable
    if enable and _retained:
        return True
    if not enable and not _retained:
        return False
    mallopt = _mallopt()
    if mallopt is None:
        return False
    if not enable:
        mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
        mallopt(M_TRIM_THRESHOLD, DEFAULT_TRIM_THRESHOLD)
        _retained = False
        return False
    # mallopt returns 1 on success
    _retained = bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _retained


def retain_for_cpu_calls() -> bool:
    """What an llvm-cpu artifact's first call makes of the process: :func:`retain_freed_memory`,
    unless the program declined it (``retain_freed_memory(False)``, or ``QMLIR_RETAIN_FREED_MEMORY``
    set to ``0`` in the environment). Returns whether freed memory is retained."""
    if _declined or os.environ.get(ENV, "").strip() == "0":
        return _retained
    return retain_freed_memory()


def _mallopt() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """glibc's ``mallopt``, or None off Linux's glibc."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt
