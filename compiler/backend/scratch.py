"""Nothing of a compile outlives it, even when qmlir is killed by SIGKILL, which no handler sees.

- ``iree-compile`` is started through ``pdeathsig_exec.py``, which asks Linux to SIGKILL it when
  the qmlir process that started it dies, then becomes it (``execv``: same process, same process
  group): a killed qmlir takes its compiler with it. Elsewhere the child is started directly.
- Each compile's scratch directory (the module's bytecode and IREE's output) is named after its
  process, ``qmlir-<pid>-*`` in the temporary directory; :func:`work_dir` first removes this
  user's scratch directories whose process is gone. (``qmlir-repro-*`` directories, which a
  failing compile leaves on purpose, are ``repro.py``'s.)
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path

_SCRATCH = re.compile(r"^qmlir-(\d+)-")
_PDEATHSIG_EXEC = Path(__file__).with_name("pdeathsig_exec.py")


def work_dir() -> tempfile.TemporaryDirectory[str]:
    """This compile's scratch directory (removed when the context exits), after removing those
    that killed compiles left behind."""
    remove_stale_work_dirs(Path(tempfile.gettempdir()))
    return tempfile.TemporaryDirectory(prefix=f"qmlir-{os.getpid()}-")


def params_dir(directory: Path | None = None) -> Path:
    """A new ``qmlir-<pid>-params-*`` directory in ``directory`` (default: the temporary
    directory) for a compile's parameter file, after removing those killed compiles left
    there."""
    where = directory if directory is not None else Path(tempfile.gettempdir())
    where.mkdir(parents=True, exist_ok=True)
    remove_stale_work_dirs(where)
    return Path(tempfile.mkdtemp(prefix=f"qmlir-{os.getpid()}-params-", dir=where))


def remove_stale_work_dirs(directory: Path) -> list[Path]:
    """Removes this user's ``qmlir-<pid>-*`` directories in ``directory`` whose process no
    longer exists; returns them."""
    removed = []
    for path, _ in own_directories(directory, "qmlir-*"):
        match = _SCRATCH.match(path.name)
        if match is None or _alive(int(match.group(1))):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def own_directories(directory: Path, pattern: str) -> list[tuple[Path, os.stat_result]]:
    """This user's directories (not links to one) in ``directory`` matching ``pattern``, with
    their ``lstat``; one removed meanwhile is skipped."""
    found = []
    for path in directory.glob(pattern):
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            found.append((path, info))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def child_command(tool: str, arguments: list[str]) -> list[str]:
    """The command that runs ``tool`` as a child that dies with this process (Linux), or the
    plain command elsewhere."""
    if not sys.platform.startswith("linux"):
        return [tool, *arguments]
    # -I: isolated (no site, no environment variables): starts in tens of milliseconds
    return [sys.executable, "-I", str(_PDEATHSIG_EXEC), str(os.getpid()), tool, *arguments]
