"""FileCheck (pip's ``filecheck``, beside the interpreter) over a stage of ``--dump-ir``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def filecheck(checks: str, ir_file: Path) -> None:
    """Asserts that ``ir_file`` passes the FileCheck directives ``checks``; FileCheck's own
    report on failure."""
    check_file = ir_file.with_name(ir_file.stem + ".checks")
    check_file.write_text(checks)
    tool = Path(sys.executable).with_name("filecheck")
    done = subprocess.run(
        [str(tool), str(check_file)], input=ir_file.read_text(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
