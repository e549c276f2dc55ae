"""Runs a Python snippet in a fresh interpreter with the project importable, for a test that
measures its own process (peak RSS) or must not share the test's: the JSON the snippet prints
last."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, *args: str) -> Any:
    """``python -c code *args`` from the repository's root; its last stdout line as JSON (the
    child's stderr in the failure message when it exits non-zero)."""
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
