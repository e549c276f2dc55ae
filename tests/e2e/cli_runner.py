"""Runs the qmlir command in-process for a test: its exit code, stdout and stderr."""

from __future__ import annotations

from compiler.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
