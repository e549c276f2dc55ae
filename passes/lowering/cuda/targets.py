"""The CUDA device targets, one ``templates/target_<arch>.mlir`` per architecture.

Each file is a module whose ``hal.device.targets`` attribute is the whole IREE device target:
sm_89 is IREE's own description, sm_90 and sm_100 (missing from IREE 3.13's target table) are
derived from it. The compile puts the attribute on the module; ``lower-named-ops{target=cuda}``
gives the ``#hal.executable.target`` inside it to the hand-written kernels' PTX objects.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from iree.compiler import ir

from passes.base.target import check_cuda_arch

TEMPLATES = Path(__file__).parent / "templates"
# Architectures IREE 3.13 knows by name (``--iree-cuda-target``); the others need the attribute.
IREE_KNOWN_ARCHS = ("sm_89",)


def target_file(arch: str) -> Path:
    return TEMPLATES / f"target_{check_cuda_arch(arch)}.mlir"


@cache
def device_targets_text(arch: str) -> str:
    """The ``hal.device.targets`` attribute (``[#hal.device.target<"cuda", ...>]``), as text."""
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = False
        module = ir.Module.parse(target_file(arch).read_text())
        return str(module.operation.attributes["hal.device.targets"])


@cache
def executable_target_text(arch: str) -> str:
    """The ``#hal.executable.target<"cuda", "cuda-nvptx-fb", {...}>`` of ``arch``, as text."""
    devices = device_targets_text(arch)
    start = devices.index("#hal.executable.target<")
    end = devices.rindex("]>")  # the device's list of executable targets closes here
    return devices[start:end].strip()


def set_device_targets(module: ir.Module, arch: str) -> None:
    """Puts ``arch``'s device target on ``module`` (what ``--iree-cuda-target`` would do)."""
    module.operation.attributes["hal.device.targets"] = ir.Attribute.parse(
        device_targets_text(arch), module.context
    )


def iree_flags(arch: str) -> list[str]:
    """``iree-compile`` flags selecting ``arch``; the others need :func:`set_device_targets`."""
    check_cuda_arch(arch)
    if arch in IREE_KNOWN_ARCHS:
        return ["--iree-hal-target-device=cuda", f"--iree-cuda-target={arch}"]
    return []
