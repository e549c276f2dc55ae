"""Scratch directories of killed compiles are removed by the next one; the compiler child is
started so that it dies with its parent (``compiler/backend/scratch.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from compiler.backend.scratch import child_command, remove_stale_work_dirs, work_dir


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_only_dead_processes_scratch_dirs_go(tmp_path: Path) -> None:
    dead = tmp_path / f"qmlir-{_dead_pid()}-abc"
    alive = tmp_path / f"qmlir-{os.getpid()}-def"
    repro = tmp_path / "qmlir-repro-xyz"  # a failing compile's IR: repro.py's, kept
    for path in (dead, alive, repro):
        path.mkdir()
        (path / "input.mlirbc").write_bytes(b"x")
    not_a_dir = tmp_path / "qmlir-1-file"
    not_a_dir.write_text("a file is not a scratch directory")
    assert remove_stale_work_dirs(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [alive.name, repro.name, not_a_dir.name]
    )


def test_work_dir_is_named_after_this_process_and_sweeps_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / f"qmlir-{_dead_pid()}-old"
    stale.mkdir()
    with work_dir() as tmp:
        assert Path(tmp).name.startswith(f"qmlir-{os.getpid()}-")
        assert not stale.exists()
    assert not Path(tmp).exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_child_dies_with_its_parent(tmp_path: Path) -> None:
    """A middle process starts `sleep` the way qmlir starts iree-compile, then is SIGKILLed: the
    sleep goes with it."""
    pid_file = tmp_path / "pid"
    middle = (
        "import subprocess, sys, time\n"
        "from compiler.backend.scratch import child_command\n"
        "child = subprocess.Popen(child_command('/bin/sleep', ['60']), start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    root = Path(__file__).resolve().parents[2]
    process = subprocess.Popen(
        [sys.executable, "-c", middle], cwd=root, env={**os.environ, "PYTHONPATH": str(root)}
    )
    try:
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text():
                break
            subprocess.run(["sleep", "0.05"], check=True)
        child = int(pid_file.read_text())
        for _ in range(100):  # until the child has become sleep (execv)
            if Path(f"/proc/{child}/cmdline").read_bytes().startswith(b"/bin/sleep"):
                break
            subprocess.run(["sleep", "0.05"], check=True)
        process.kill()
        process.wait()
        for _ in range(100):
            try:
                state = Path(f"/proc/{child}/stat").read_text().split()[2]
            except FileNotFoundError:
                break
            if state == "Z":  # killed, waiting for init to reap it
                break
            subprocess.run(["sleep", "0.05"], check=True)
        else:
            pytest.fail(f"sleep {child} outlived its SIGKILLed parent")
    finally:
        if process.poll() is None:
            process.kill()


def test_child_command_runs_the_tool() -> None:
    done = subprocess.run(
        child_command("/bin/echo", ["hello"]), capture_output=True, text=True, check=True
    )
    assert done.stdout == "hello\n"
