"""Per-op tiling for IREE's llvm-cpu backend, attached where IREE's defaults are measured slow.

IREE sizes a dispatch's workgroups from its root op; for the quantize core's streaming passes
its defaults give each workgroup 2-16 KB of input, so a 64 MB tensor becomes tens of thousands of
workgroups and the task system's per-workgroup cost rivals the memory traffic. A
``compilation_info`` attribute on the root ``linalg.generic`` overrides that for this op alone
(``--iree-llvmcpu-distribution-size`` would change every dispatch of the model). IREE keeps the
attribute only on ops it does not rewrite, silently: the templates that carry one are written on
the already-collapsed 2-D iteration space, and an operand's reshape that IREE would fold into the
op goes through ``iree_tensor_ext.compute_barrier.start`` first. (``util.optimization_barrier``
also keeps it, but survives into the host program as a wait: the call would submit its work in two
halves with a host round trip between them, a scheduler wake-up of up to 4 ms on a small VM.)
``tests/lit/cpu_tiling_kept.mlir`` checks the configured dispatches and that one submission runs
them. Figures: ``benchmarks/RESULTS.md``.

The cuda lowering drops these attributes from the llvm-cpu templates it reuses
(:func:`strip_cpu_tiling`).
"""

from __future__ import annotations

from iree.compiler import ir

ATTR = "compilation_info"
WORKGROUP_BYTES = 64 * 1024  # input bytes per workgroup of a streaming pass (measured best)


def _list(values: list[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def compilation_info(
    distribution: list[int], vector_parallel: list[int], vector_reduction: list[int] | None = None
) -> str:
    """``, compilation_info = ...`` for a linalg op's attribute dictionary (DoubleTilingExpert)."""
    tiles = f"distribution = {_list(distribution)}"
    tiles += f", vector_common_parallel = {_list(vector_parallel)}"
    if vector_reduction is not None:
        tiles += f", vector_reduction = {_list(vector_reduction)}"
    return (
        f", {ATTR} = #iree_codegen.compilation_info<"
        f"lowering_config = #iree_cpu.lowering_config<{tiles}>, "
        "translation_info = #iree_codegen.translation_info<"
        "pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>"
    )


def _rows_per_workgroup(rows: int | None, block: int, elem_bytes: int) -> int:
    """Rows of ``block`` elements per workgroup (``rows`` None: dynamic, not known here)."""
    most = WORKGROUP_BYTES // (block * elem_bytes)
    return max(1, most if rows is None else min(rows, most))


def block_reduction(rows: int | None, block: int, elem_bytes: int = 4) -> str:
    """Tiling of a reduction over the last dim of ``[rows, block]`` (one row per block)."""
    per_workgroup = _rows_per_workgroup(rows, block, elem_bytes)
    return compilation_info([per_workgroup, 0], [8, 0], [0, min(16, block)])


def elementwise_blocks(rows: int | None, block: int, elem_bytes: int = 4) -> str:
    """Tiling of an elementwise op over ``[rows, block]`` (one row per block)."""
    per_workgroup = _rows_per_workgroup(rows, block, elem_bytes)
    return compilation_info([per_workgroup, block], [1, min(16, block)])


def strip_cpu_tiling(op: ir.Operation) -> None:
    """Removes every ``compilation_info`` under ``op`` (for a target other than llvm-cpu)."""

    def visit(inner: ir.Operation) -> ir.WalkResult:
        if ATTR in inner.attributes:
            del inner.attributes[ATTR]
        return ir.WalkResult.ADVANCE

    op.walk(visit)
