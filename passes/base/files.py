"""Writing files whole: a temporary file beside the target, then a rename."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    """Writes to a temporary file beside ``path``, then renames: never a half-written file.

    The file gets the mode ``open()`` would give it (0666 less the umask), as ``cp`` does, not
    ``mkstemp``'s 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process's umask (read from ``/proc`` where it can be, without changing it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (not thread-safe, but brief)
    os.umask(mask)
    return mask


def move_file(source: Path, target: Path) -> None:
    """Renames ``source`` to ``target`` where both are on one file system, else copies it there
    (through a temporary file beside ``target``) and removes ``source``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(source, target)
    except OSError:
        copy_file(source, target)
        source.unlink()


def copy_file(source: Path, target: Path) -> None:
    """Copies ``source`` to ``target`` through a temporary file beside it, then a rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as f:
            shutil.copyfileobj(f, out, 16 << 20)
            os.fchmod(out.fileno(), 0o666 & ~current_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
