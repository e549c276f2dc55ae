"""The target an artifact is compiled for: a device, and its CPU or CUDA architecture.

Resolved and checked once where the user names it (``compiler/pipeline/target.py``: the CLI and
the API), then read by every stage below: the passes, the backend's flags
(``passes/host/flags.py``), the artifact's metadata (``compiler/runtime/metadata.py``). Pure
data: the runtime reads it back from an artifact without loading the compiler.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from passes.base.errors import QmlirError

DEVICES = ("llvm-cpu", "cuda")
CUDA_ARCHS = ("sm_89", "sm_90", "sm_100")
DEFAULT_CUDA_ARCH = "sm_90"
DEFAULT_CPU = "host"  # the compiling host's CPU and features


def check_device(device: str) -> str:
    if device not in DEVICES:
        raise QmlirError(f"unknown target '{device}' (known targets: {', '.join(DEVICES)})")
    return device


def check_cuda_arch(arch: str) -> str:
    if arch not in CUDA_ARCHS:
        raise QmlirError(f"unknown CUDA architecture '{arch}' (known: {', '.join(CUDA_ARCHS)})")
    return arch


@dataclasses.dataclass(frozen=True)
class Cpu:
    """An LLVM CPU as IREE resolved ``--cpu``: what was asked (``host``, ``generic``, a name),
    the CPU and architecture it named, and its enabled features (LLVM's names)."""

    requested: str
    name: str
    arch: str
    features: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "name": self.name,
            "arch": self.arch,
            "features": list(self.features),
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Cpu:
        return cls(value["requested"], value["name"], value["arch"], tuple(value["features"]))


@dataclasses.dataclass(frozen=True)
class Target:
    """``llvm-cpu`` with the :class:`Cpu` it is compiled for (None: not resolved, ``host``; a
    pass run alone needs no CPU), or ``cuda`` with its architecture. An impossible pairing is
    refused on construction."""

    device: str = "llvm-cpu"
    cpu: Cpu | None = None
    cuda_arch: str | None = None

    def __post_init__(self) -> None:
        check_device(self.device)
        if self.device == "cuda":
            if self.cpu is not None:
                raise QmlirError("--cpu needs --target llvm-cpu")
            check_cuda_arch(self.cuda_arch or "")
        elif self.cuda_arch is not None:
            raise QmlirError("--cuda-arch needs --target cuda")

    @classmethod
    def for_cuda(cls, arch: str) -> Target:
        return cls("cuda", cuda_arch=arch)

    @property
    def is_cuda(self) -> bool:
        return self.device == "cuda"

    @property
    def cpu_name(self) -> str:
        """The ``--iree-llvmcpu-target-cpu`` an llvm-cpu compile names: what the user asked."""
        return self.cpu.requested if self.cpu is not None else DEFAULT_CPU

    @property
    def features(self) -> tuple[str, ...]:
        """The CPU's enabled features; none on cuda or for an unresolved CPU."""
        return self.cpu.features if self.cpu is not None else ()

    @property
    def has_avx512(self) -> bool:
        """An llvm-cpu target whose CPU has AVX-512: where the pipeline's CPU choices split
        (``compiler/pipeline/core.py``, ``passes/host/flags.py``), each measured per kind."""
        return not self.is_cuda and "avx512f" in self.features
