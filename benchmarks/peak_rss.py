"""A process's own peak RSS, for the benchmarks' child processes."""

from __future__ import annotations

import resource
from pathlib import Path


def peak_mb() -> float:
    """This process's peak RSS in MB: ``VmHWM``, else ``ru_maxrss``. Not ``ru_maxrss`` first: on
    Linux it keeps the parent's peak across a child's exec, so a child started by a large parent
    reports the parent's peak (``benchmarks/cpu.py`` printed 2.7 GB for every MLP compile after
    MiniLM's rows had grown the parent)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
