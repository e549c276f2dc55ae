"""``retain_freed_memory``: after it, a large block freed and allocated again reuses its pages
(no fresh page faults), where glibc's default hands the block back to the kernel and faults it
in again. Each case runs in a process of its own, since the setting is process-wide."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from tests.freed_block import FAULTS, PAGES

CHILD = (
    r"""
import sys
sys.path.insert(0, sys.argv[1])
from compiler.runtime.host_memory import retain_freed_memory
applied = retain_freed_memory() if sys.argv[2] == "retain" else None
"""
    + FAULTS
    + "print(applied, freed_block_faults())\n"
)

glibc = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)


def _faults(mode: str) -> tuple[str, int]:
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    out = subprocess.run(
        [sys.executable, "-c", CHILD, root, mode], capture_output=True, text=True, check=True
    ).stdout.split()
    return out[0], int(out[1])


@glibc
def test_freed_memory_is_reused_without_page_faults() -> None:
    pages = PAGES
    _, default = _faults("default")
    assert default >= pages // 2  # the block came back from the kernel: faulted in again
    applied, retained = _faults("retain")
    assert applied == "True"
    assert retained < pages // 100


def test_the_commands_that_call_artifacts_retain_freed_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """``qmlir run``, ``generate`` and ``train`` make the choice for their own process before
    they load anything (here: an artifact that does not exist, one error line); the others do
    not."""
    from compiler import cli
    from compiler.runtime import host_memory

    calls: list[str] = []
    monkeypatch.setattr(host_memory, "retain_freed_memory", lambda: calls.append("retain"))
    missing = str(tmp_path / "missing.vmfb")
    assert cli.main(["run", missing, "--random-inputs"]) != 0
    assert cli.main(["generate", missing, "--prompt-ids", "1,2"]) != 0
    assert cli.main(["train", missing, "--data", str(tmp_path / "d.npz")]) != 0
    assert calls == ["retain"] * 3
    assert cli.main(["inspect", missing]) != 0
    assert calls == ["retain"] * 3
