"""``--target``, ``--cuda-arch`` and ``--cpu`` resolved, once, into the :class:`Target` every
stage below takes (``passes/base/target.py``): the CLI and the API call :func:`resolve_target`
before building anything, so a bad target is refused before the model is loaded."""

from __future__ import annotations

from compiler.pipeline.cpu_target import resolve_cpu
from passes.base.errors import QmlirError
from passes.base.target import DEFAULT_CPU, DEFAULT_CUDA_ARCH, Target, check_device


def resolve_target(
    target: str = "llvm-cpu", cuda_arch: str | None = None, cpu: str | None = None
) -> Target:
    """``cuda`` on ``cuda_arch`` (default sm_90), or ``llvm-cpu`` on the CPU IREE resolves
    ``cpu`` to (default: this host's); a one-line error for an unknown target, architecture or
    CPU, or a flag of the other target."""
    if check_device(target) == "cuda":
        if cpu is not None:
            raise QmlirError("--cpu needs --target llvm-cpu")
        return Target.for_cuda(cuda_arch or DEFAULT_CUDA_ARCH)
    if cuda_arch is not None:
        raise QmlirError("--cuda-arch needs --target cuda")
    return Target(cpu=resolve_cpu(cpu or DEFAULT_CPU))
