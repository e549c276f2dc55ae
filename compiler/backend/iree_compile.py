"""Stage 5, IREE compile: module → ``.vmfb`` for a target, with a repro report on failure.

``iree-compile`` runs as a child process of its own (its own session: a terminal's Ctrl-C
reaches only qmlir), killed with everything it started when the compile is interrupted (Ctrl-C,
SIGTERM: ``compiler/cli``) and always waited for, so no compile outlives qmlir and the
temporary input is removed. A failing compile keeps its IR in a ``qmlir-repro-*`` directory of
the temporary directory; only the newest :data:`KEEP_REPROS` of this user's are kept.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from iree.compiler import ir
from iree.compiler.tools.binaries import find_tool

from passes.base.errors import QmlirError
from passes.host.flags import first_error_line, retry_flags, target_flags
from passes.lowering.cuda import targets as cuda_targets

REPRO_PREFIX = "qmlir-repro-"
KEEP_REPROS = 3  # the newest failing-compile directories kept (each holds the module's IR)

# what ``iree.compiler.compile_file`` passes before the caller's flags
_BASE_FLAGS = (
    "--iree-vm-bytecode-module-output-format=flatbuffer-binary",
    "--mlir-print-debuginfo",
    "--mlir-print-op-on-diagnostic=false",
)


def compile_module(
    module: ir.Module,
    target: str,
    cuda_arch: str | None = None,
    cpu: str | None = None,
    extra_flags: tuple[str, ...] = (),
    dynamic: bool = False,
) -> bytes:
    """Compiles a torch-input module (torch + linalg) to a ``.vmfb`` for ``target``.

    On cuda, an architecture IREE does not know by name gets its device target from
    ``passes/lowering/cuda/templates/`` as the module's ``hal.device.targets``. ``dynamic``: the
    module has dynamic dims; ``passes/host/flags.py`` picks its flags, and the known IREE
    failures after which it compiles once more with others (only the last failure is reported).
    """
    base = target_flags(target, cuda_arch, cpu, dynamic)
    flags = ["--iree-input-type=torch", *base, *extra_flags]
    if target == "cuda" and not any(f.startswith("--iree-cuda-target=") for f in flags):
        cuda_targets.set_device_targets(module, cuda_arch or cuda_targets.DEFAULT_CUDA_ARCH)
    with tempfile.TemporaryDirectory(prefix="qmlir-") as tmp:
        source, output = Path(tmp) / "input.mlirbc", Path(tmp) / "output.vmfb"
        with open(source, "wb") as f:
            module.operation.write_bytecode(f)
        code, diagnostics = run_iree_compile([str(source), *_BASE_FLAGS, *flags, "-o", str(output)])
        again, retry_on = retry_flags(target, dynamic)
        if code != 0 and any(message in diagnostics for message in retry_on):
            flags = [*flags, *again]
            code, diagnostics = run_iree_compile(
                [str(source), *_BASE_FLAGS, *flags, "-o", str(output)]
            )
        if code != 0:
            raise _repro_error(module, flags, diagnostics, code, target)
        if diagnostics.strip():  # warnings: shown as compile_file shows them
            sys.stderr.write(diagnostics)
        return output.read_bytes()


def run_iree_compile(arguments: list[str]) -> tuple[int, str]:
    """Runs ``iree-compile`` with ``arguments``: its exit status and its stderr. However this
    returns or raises (``KeyboardInterrupt``, SIGTERM's ``Terminated``), the child and what it
    started are killed and waited for."""
    process = subprocess.Popen(
        [find_tool("iree-compile"), *arguments],
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
    repro_dir = Path(tempfile.mkdtemp(prefix=REPRO_PREFIX))
    failing = repro_dir / "failing.mlir"
    failing.write_text(module.operation.get_asm(enable_debug_info=True))
    prune_repros(repro_dir.parent)
    command = shlex.join(["iree-compile", *flags, str(failing), "-o", str(repro_dir / "out.vmfb")])
    what = first_error_line(diagnostics) if diagnostics.strip() else f"iree-compile exit {code}"
    return QmlirError(
        f"IREE failed to compile for {target}: {what}; "
        f"IR ({_size(failing.stat().st_size)}) saved to {failing}; reproduce with: {command}"
    )


def prune_repros(directory: Path, keep: int = KEEP_REPROS) -> list[Path]:
    """Removes all but the newest ``keep`` ``qmlir-repro-*`` directories of this user in
    ``directory`` (newest: last modified); returns the removed ones."""
    found = []
    for path in directory.glob(f"{REPRO_PREFIX}*"):
        try:
            info = path.lstat()
        except OSError:
            continue  # removed meanwhile
        if path.is_dir() and not path.is_symlink() and info.st_uid == os.getuid():
            found.append((info.st_mtime_ns, path.name, path))
    found.sort(reverse=True)
    removed = [path for _, _, path in found[keep:]]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def _size(n: int) -> str:
    if n >= 100_000:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e3:.1f} kB" if n >= 1000 else f"{n} B"
