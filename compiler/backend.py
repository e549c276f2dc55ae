"""Stage 5, IREE compile: module → ``.vmfb`` for a target, with a repro report on failure."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

from iree import compiler as iree_compiler
from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.host.flags import first_error_line, target_flags
from passes.lowering.cuda import targets as cuda_targets


def compile_module(
    module: ir.Module,
    target: str,
    cuda_arch: str | None = None,
    cpu: str | None = None,
    extra_flags: tuple[str, ...] = (),
) -> bytes:
    """Compiles a torch-input module (torch + linalg) to a ``.vmfb`` for ``target``.

    On cuda, an architecture IREE does not know by name gets its device target from
    ``passes/lowering/cuda/templates/`` as the module's ``hal.device.targets``.
    """
    flags = ["--iree-input-type=torch", *target_flags(target, cuda_arch, cpu), *extra_flags]
    if target == "cuda" and not any(f.startswith("--iree-cuda-target=") for f in flags):
        cuda_targets.set_device_targets(module, cuda_arch or cuda_targets.DEFAULT_CUDA_ARCH)
    with tempfile.TemporaryDirectory(prefix="qmlir-") as tmp:
        source = Path(tmp) / "input.mlirbc"
        with open(source, "wb") as f:
            module.operation.write_bytecode(f)
        try:
            return iree_compiler.compile_file(str(source), extra_args=flags)
        except iree_compiler.CompilerToolError as e:
            raise _repro_error(module, flags, e, target) from e


def _repro_error(module: ir.Module, flags: list[str], error: Exception, target: str) -> QmlirError:
    repro_dir = Path(tempfile.mkdtemp(prefix="qmlir-repro-"))
    failing = repro_dir / "failing.mlir"
    failing.write_text(module.operation.get_asm(enable_debug_info=True))
    command = shlex.join(["iree-compile", *flags, str(failing), "-o", str(repro_dir / "out.vmfb")])
    return QmlirError(
        f"IREE failed to compile for {target}: {first_error_line(str(error))}; "
        f"IR saved to {failing}; reproduce with: {command}"
    )
