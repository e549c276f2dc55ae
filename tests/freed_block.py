"""What the freed-memory tests run in a child process (the malloc setting is process-wide):
``FAULTS`` defines ``freed_block_faults()``, the page faults of a block of :data:`BLOCK` bytes
allocated, written and freed a second time (the first round leaves it freed)."""

from __future__ import annotations

BLOCK = 256 << 20
PAGES = BLOCK // 4096

FAULTS = r"""
import ctypes, resource
_libc = ctypes.CDLL(None)
_libc.malloc.restype = ctypes.c_void_p
_libc.free.argtypes = (ctypes.c_void_p,)
def _touch():
    p = _libc.malloc(BLOCK)
    ctypes.memset(p, 1, BLOCK)
    _libc.free(p)
def freed_block_faults():
    _touch()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    _touch()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
""".replace("BLOCK", str(BLOCK))
