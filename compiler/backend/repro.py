"""Where a failing stage leaves its input: a ``qmlir-repro-*`` directory of the temporary
directory, with the IR and the command that reproduces the failure (the IREE stage,
``iree_compile.py``; a Python pass, ``compiler/pipeline/pass_runner.py``). Only the newest
:data:`KEEP_REPROS` of this user's are kept.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from compiler.backend.scratch import own_directories

REPRO_PREFIX = "qmlir-repro-"
KEEP_REPROS = 3  # the newest failing-stage directories kept (each holds the module's IR)


def new_repro_dir() -> Path:
    """A new ``qmlir-repro-*`` directory; the older ones beyond :data:`KEEP_REPROS` removed."""
    path = Path(tempfile.mkdtemp(prefix=REPRO_PREFIX))
    prune_repros(path.parent)
    return path


def prune_repros(directory: Path, keep: int = KEEP_REPROS) -> list[Path]:
    """Removes all but the newest ``keep`` ``qmlir-repro-*`` directories of this user in
    ``directory`` (newest: last modified); returns the removed ones."""
    found = [
        (info.st_mtime_ns, path.name, path)
        for path, info in own_directories(directory, f"{REPRO_PREFIX}*")
    ]
    found.sort(reverse=True)
    removed = [path for _, _, path in found[keep:]]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def size_text(n: int) -> str:
    if n >= 100_000:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e3:.1f} kB" if n >= 1000 else f"{n} B"
