"""Stage 5, IREE compile: module → ``.vmfb`` for a target, with a repro report on failure.

``iree-compile`` runs as a child process of its own (its own session: a terminal's Ctrl-C
reaches only qmlir), killed with everything it started when the compile is interrupted (Ctrl-C,
SIGTERM: ``compiler/cli``) and always waited for, so no compile outlives qmlir and the
temporary input is removed; a SIGKILLed qmlir takes the child with it and leaves a scratch
directory that the next compile removes (``scratch.py``). A failing compile keeps its IR in a
``qmlir-repro-*`` directory of the temporary directory (``repro.py``).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from iree.compiler import ir
from iree.compiler.tools.binaries import find_tool

from compiler.backend.repro import new_repro_dir, size_text
from compiler.backend.scratch import child_command, work_dir
from passes.base.errors import QmlirError
from passes.base.target import Target
from passes.host.compile_cache import cached_compile
from passes.host.flags import dropped_flags, first_error_line, retry_flags, target_flags
from passes.lowering.cuda import targets as cuda_targets

# what ``iree.compiler.compile_file`` passes before the caller's flags
_BASE_FLAGS = (
    "--iree-vm-bytecode-module-output-format=flatbuffer-binary",
    "--mlir-print-debuginfo",
    "--mlir-print-op-on-diagnostic=false",
)
RETRIES = 3  # a known failure can uncover another (large vectors, then their stack, then peeling)


def compile_module(
    module: ir.Module,
    target: Target,
    extra_flags: tuple[str, ...] = (),
    dynamic: bool = False,
    external: bool = False,
) -> bytes:
    """Compiles a torch-input module (torch + linalg) to a ``.vmfb`` for ``target``.

    On cuda, an architecture IREE does not know by name gets its device target from
    ``passes/lowering/cuda/templates/`` as the module's ``hal.device.targets``. ``dynamic``: the
    module has dynamic dims, ``external``: its weights are parameters; ``passes/host/flags.py``
    picks its flags, and the known IREE
    failures after which it compiles once more with others (only the last failure is reported).
    """
    flags = ["--iree-input-type=torch", *target_flags(target, dynamic, external), *extra_flags]
    if target.cuda_arch is not None and not any(f.startswith("--iree-cuda-target=") for f in flags):
        cuda_targets.set_device_targets(module, target.cuda_arch)
    with work_dir() as tmp:
        source = Path(tmp) / "input.mlirbc"
        with open(source, "wb") as f:
            module.operation.write_bytecode(f)
        return cached_compile(
            [source.read_bytes(), *flags],
            lambda: _compile_file(module, source, flags, target, dynamic),
        )


def _compile_file(
    module: ir.Module, source: Path, flags: list[str], target: Target, dynamic: bool
) -> bytes:
    """``iree-compile`` of ``source`` with ``flags`` (again with those a known failure needs)."""
    output = source.with_name("output.vmfb")
    code, diagnostics = run_iree_compile([str(source), *_BASE_FLAGS, *flags, "-o", str(output)])
    for _ in range(RETRIES):  # a known failure: again with the flags it needs, without others
        again = [f for f in retry_flags(target, dynamic, diagnostics) if f not in flags]
        drop = dropped_flags(diagnostics, flags)
        if code == 0 or not (again or drop):
            break
        flags = [*(f for f in flags if f not in drop), *again]
        code, diagnostics = run_iree_compile([str(source), *_BASE_FLAGS, *flags, "-o", str(output)])
    if code != 0:
        raise _repro_error(module, flags, diagnostics, code, target.device)
    if diagnostics.strip():  # warnings: shown as compile_file shows them
        sys.stderr.write(diagnostics)
    return output.read_bytes()


def run_iree_compile(arguments: list[str]) -> tuple[int, str]:
    """Runs ``iree-compile`` with ``arguments``: its exit status and its stderr. However this
    returns or raises (``KeyboardInterrupt``, SIGTERM's ``Terminated``), the child and what it
    started are killed and waited for."""
    process = subprocess.Popen(
        child_command(find_tool("iree-compile"), arguments),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: killed as one, not hit by Ctrl-C
    )
    try:
        _, stderr = process.communicate()
    finally:
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
    return process.returncode, stderr.decode("utf-8", errors="replace")


def _repro_error(
    module: ir.Module, flags: list[str], diagnostics: str, code: int, target: str
) -> QmlirError:
    repro_dir = new_repro_dir()
    failing = repro_dir / "failing.mlir"
    failing.write_text(module.operation.get_asm(enable_debug_info=True))
    command = shlex.join(["iree-compile", *flags, str(failing), "-o", str(repro_dir / "out.vmfb")])
    what = first_error_line(diagnostics) if diagnostics.strip() else f"iree-compile exit {code}"
    return QmlirError(
        f"IREE failed to compile for {target}: {what}; "
        f"IR ({size_text(failing.stat().st_size)}) saved to {failing}; reproduce with: {command}"
    )
