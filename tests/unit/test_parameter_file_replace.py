"""A parameter file compiled again to the same path replaces the old one whole, without ext4's
wait for the new file's bytes: the old file goes aside, then away in a thread of its own."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from compiler.backend import parameter_file


def _join_removals() -> None:
    for t in threading.enumerate():
        if t.name == "qmlir-remove":
            t.join()


def test_a_new_file_replaces_the_old_one_and_the_old_one_goes(tmp_path: Path) -> None:
    path, tmp = tmp_path / "m.params.safetensors", tmp_path / ".m.tmp"
    path.write_bytes(b"old" * 1000)
    tmp.write_bytes(b"new")
    parameter_file._replace(tmp, path)
    assert path.read_bytes() == b"new" and not tmp.exists()
    _join_removals()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.params.safetensors"]


def test_no_old_file(tmp_path: Path) -> None:
    path, tmp = tmp_path / "m.params.safetensors", tmp_path / ".m.tmp"
    tmp.write_bytes(b"new")
    parameter_file._replace(tmp, path)
    assert path.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.params.safetensors"]


def test_a_failed_rename_puts_the_old_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, tmp = tmp_path / "m.params.safetensors", tmp_path / ".m.tmp"
    path.write_bytes(b"old")
    tmp.write_bytes(b"new")
    real = os.replace

    def refuse_the_new_file(src: object, dst: object) -> None:
        if Path(str(src)) == tmp:
            raise OSError(18, "Invalid cross-device link")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(parameter_file.os, "replace", refuse_the_new_file)
    with pytest.raises(OSError, match="cross-device"):
        parameter_file._replace(tmp, path)
    assert path.read_bytes() == b"old" and tmp.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".m.tmp", "m.params.safetensors"]
