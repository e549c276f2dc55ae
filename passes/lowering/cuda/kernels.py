"""``hal.dispatch.extern`` calls into the hand-written CUDA kernels of ``runtime_kernels/``.

A kernel's PTX comes from ``runtime_kernels.nvrtc.compile_ptx(family, arch)`` and is embedded in
the IR (``#hal.executable.object<{data = dense<...>}>``), so the ``.vmfb`` needs no file at run
time. IREE's CUDA ABI: the kernel takes one pointer per binding (tensor operands in order, then
the results not tied to an operand), then one ``i32`` per scalar operand (push constants).

A dynamic size (an activation's rows) reaches a kernel twice: as an ``i32`` push constant (the
``arith.index_cast`` of its ``tensor.dim``), and as the dispatch's workload, from which the
``count`` region computes the launch grid at run time by the static grid's formula
(:class:`Extent`). A tensor of dynamic type carries its dims in the op's syntax
(``tensor<?x64xf32>{%rows}``), so IREE sizes its binding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from passes.base.errors import QmlirError
from passes.ir.dialect import NamedOp
from passes.lowering.cuda.targets import executable_target_text
from passes.lowering.definitions import Templates
from runtime_kernels.nvrtc import KernelError, compile_ptx

TEMPLATES = Templates(Path(__file__).parent / "templates")
template = TEMPLATES.template  # templates/<name>
definition = TEMPLATES.definition  # a definition template filled in, its last line naming it
fragment = TEMPLATES.fragment  # a template filled in as a field of another
# A cuda lowering: the op's definition for an architecture (``sm_90``).
CudaLowering = Callable[[NamedOp, str], str]


@cache
def family_ptx(family: str, arch: str) -> bytes:
    """The PTX of one kernel family for ``arch`` (NVRTC, cached on disk by runtime_kernels); a
    kernel that cannot be built is a :class:`QmlirError` with runtime_kernels' message."""
    try:
        return compile_ptx(family, arch)
    except KernelError as e:
        raise QmlirError(str(e)) from e
    except FileNotFoundError as e:
        raise QmlirError(f"runtime kernel family '{family}' has no source ({e.filename})") from e


@cache
def ptx_attr(family: str, arch: str) -> str:
    """The PTX bytes as an MLIR ``dense<"0x...">`` attribute."""
    ptx = family_ptx(family, arch)
    return f'dense<"0x{ptx.hex().upper()}"> : vector<{len(ptx)}xi8>'


@dataclass(frozen=True)
class Extent:
    """A grid dimension known at run time: ``ceil(size / per)`` workgroups, clamped to
    ``[1, cap]`` where ``cap`` is given (:func:`passes.lowering.cuda.common.grid_1d`'s rule).
    ``size``: the SSA name of an ``index`` in the function; the dispatch passes it as workload."""

    size: str
    per: int
    cap: int | None = None

    def __str__(self) -> str:
        tiles = f"ceil({self.size} / {self.per})"
        return tiles if self.cap is None else f"{tiles} in [1, {self.cap}]"

    def count_text(self, axis: str, workload: str) -> str:
        """The ``count`` region's lines defining ``%grid_<axis>`` from the workload argument."""
        name = "grid_extent_capped.mlir" if self.cap is not None else "grid_extent.mlir"
        return template(name).substitute(axis=axis, workload=workload, per=self.per, cap=self.cap)


@dataclass(frozen=True)
class RowSwitch:
    """A grid dimension that depends on whether a dynamic row count ``size`` is at most
    ``rows``: ``few`` workgroups then, ``many`` otherwise (the FP8 GEMMs' x for a dynamic M:
    16-column tiles for a few rows, 128-column tiles for more; the kernel takes the same branch
    on its ``m``)."""

    size: str
    rows: int
    few: int
    many: int

    def __str__(self) -> str:
        return f"{self.few} if {self.size} <= {self.rows} else {self.many}"

    def count_text(self, axis: str, workload: str) -> str:
        return template("grid_row_switch.mlir").substitute(
            axis=axis, workload=workload, rows=self.rows, few=self.few, many=self.many
        )


GridDim = int | Extent | RowSwitch


@dataclass(frozen=True)
class Extern:
    """One kernel launch.

    ``operands``: ``(ssa, type)`` pairs, tensors and ``i32`` scalars. ``results``: a type, or
    ``"%ssa"`` of a tensor operand the kernel updates in place (its binding is the operand's;
    ``"%ssa{%d0, ...}"`` where the operand's shape is dynamic).
    ``name``: the results' SSA name in the surrounding function (``%q#0``, ``%q#1`` for several).
    A type of dynamic shape is followed by its dims (``tensor<?xf32>{%n}``, see ``dyn_type`` in
    ``common.py``); ``grid``: numbers, or an :class:`Extent` or :class:`RowSwitch` per dynamic
    size.
    """

    family: str
    kernel: str
    operands: tuple[tuple[str, str], ...]
    results: tuple[str, ...]
    name: str
    grid: tuple[GridDim, GridDim] = (1, 1)
    block: int = 256

    def bindings(self) -> list[str]:
        tied = {r.split("{")[0] for r in self.results if r.startswith("%")}
        out = []
        for ssa, ty in self.operands:
            if ty.startswith("tensor<"):
                access = "" if ssa in tied else ", ReadOnly"
                out.append(fragment("binding.mlir", access=access))
        out += [fragment("binding.mlir", access="") for r in self.results if r[0] != "%"]
        return out

    def constants(self) -> int:
        return sum(1 for _, ty in self.operands if not ty.startswith("tensor<"))

    def workload(self) -> list[str]:
        """The dynamic sizes the grid reads, each once, in order."""
        sizes = [g.size for g in self.grid if isinstance(g, Extent | RowSwitch)]
        return list(dict.fromkeys(sizes))

    def count_text(self) -> str:
        """The ``count`` region's lines defining ``%grid_x`` and ``%grid_y``."""
        workload = self.workload()
        lines = []
        for axis, g in zip("xy", self.grid, strict=True):
            if isinstance(g, Extent | RowSwitch):
                lines.append(g.count_text(axis, f"%workload{workload.index(g.size)}"))
            else:
                lines.append(template("grid_constant.mlir").substitute(axis=axis, count=g))
        return "".join(lines)


def extern_text(ext: Extern, arch: str) -> str:
    """The ``hal.dispatch.extern`` op of ``ext`` for ``arch`` (indented for a function body)."""
    results = ", ".join(ext.results)
    names = ext.name if len(ext.results) == 1 else f"{ext.name}:{len(ext.results)}"
    workload = ext.workload()
    return template("dispatch_extern.mlir").substitute(
        family=ext.family,
        kernel=ext.kernel,
        results=names,
        workload=f"[{', '.join(workload)}]" if workload else "",
        workload_args="".join(f", %workload{i}: index" for i in range(len(workload))),
        operands=", ".join(ssa for ssa, _ in ext.operands),
        operand_types=", ".join(ty for _, ty in ext.operands),
        result_types=results if len(ext.results) == 1 else f"({results})",
        grid_x=ext.grid[0],
        grid_y=ext.grid[1],
        count=ext.count_text(),
        block=ext.block,
        constants=ext.constants(),
        bindings=", ".join(ext.bindings()),
        target=executable_target_text(arch),
        arch=arch,
        ptx=ptx_attr(ext.family, arch),
    )
