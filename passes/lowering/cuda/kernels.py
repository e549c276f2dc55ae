"""``hal.dispatch.extern`` calls into the hand-written CUDA kernels of ``runtime_kernels/``.

A kernel's PTX comes from ``runtime_kernels.nvrtc.compile_ptx(family, arch)`` and is embedded in
the IR (``#hal.executable.object<{data = dense<...>}>``), so the ``.vmfb`` needs no file at run
time. IREE's CUDA ABI: the kernel takes one pointer per binding (tensor operands in order, then
the results not tied to an operand), then one ``i32`` per scalar operand (push constants).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from passes.base.errors import QmlirError
from passes.lowering.cpu.common import name_template
from passes.lowering.cuda.targets import executable_target_text
from runtime_kernels.nvrtc import compile_ptx

TEMPLATES = Path(__file__).parent / "templates"


@cache
def template(name: str) -> string.Template:
    return string.Template((TEMPLATES / name).read_text())


def definition(name: str, fields: Mapping[str, object] | None = None, **more: object) -> str:
    """The definition template ``name`` filled in, its last line naming it (a comment)."""
    return name_template(template(name).substitute(fields or {}, **more), name)


@cache
def family_ptx(family: str, arch: str) -> bytes:
    """The PTX of one kernel family for ``arch`` (NVRTC, cached on disk by runtime_kernels)."""
    try:
        return compile_ptx(family, arch)
    except FileNotFoundError as e:
        raise QmlirError(f"runtime kernel family '{family}' has no source ({e.filename})") from e


def has_kernel(family: str, kernel: str, arch: str) -> bool:
    """Whether ``family``'s PTX defines ``kernel`` (a family still being written may lack it)."""
    try:
        ptx = family_ptx(family, arch)
    except QmlirError:
        return False
    return f".entry {kernel}(".encode() in ptx


@cache
def ptx_attr(family: str, arch: str) -> str:
    """The PTX bytes as an MLIR ``dense<"0x...">`` attribute."""
    ptx = family_ptx(family, arch)
    return f'dense<"0x{ptx.hex().upper()}"> : vector<{len(ptx)}xi8>'


@dataclass(frozen=True)
class Extern:
    """One kernel launch.

    ``operands``: ``(ssa, type)`` pairs, tensors and ``i32`` scalars. ``results``: a type, or
    ``"%ssa"`` of a tensor operand the kernel updates in place (its binding is the operand's).
    ``name``: the results' SSA name in the surrounding function (``%q#0``, ``%q#1`` for several).
    """

    family: str
    kernel: str
    operands: tuple[tuple[str, str], ...]
    results: tuple[str, ...]
    name: str
    grid: tuple[int, int] = (1, 1)
    block: int = 256

    def bindings(self) -> list[str]:
        tied = {r for r in self.results if r.startswith("%")}
        out = []
        for ssa, ty in self.operands:
            if ty.startswith("tensor<"):
                access = "" if ssa in tied else ", ReadOnly"
                out.append(f"#hal.pipeline.binding<storage_buffer{access}>")
        out += ["#hal.pipeline.binding<storage_buffer>" for r in self.results if r[0] != "%"]
        return out

    def constants(self) -> int:
        return sum(1 for _, ty in self.operands if not ty.startswith("tensor<"))


def extern_text(ext: Extern, arch: str) -> str:
    """The ``hal.dispatch.extern`` op of ``ext`` for ``arch`` (indented for a function body)."""
    results = ", ".join(ext.results)
    names = ext.name if len(ext.results) == 1 else f"{ext.name}:{len(ext.results)}"
    return template("dispatch_extern.mlir").substitute(
        family=ext.family,
        kernel=ext.kernel,
        results=names,
        operands=", ".join(ssa for ssa, _ in ext.operands),
        operand_types=", ".join(ty for _, ty in ext.operands),
        result_types=results if len(ext.results) == 1 else f"({results})",
        grid_x=ext.grid[0],
        grid_y=ext.grid[1],
        block=ext.block,
        constants=ext.constants(),
        bindings=", ".join(ext.bindings()),
        target=executable_target_text(arch),
        arch=arch,
        ptx=ptx_attr(ext.family, arch),
    )
