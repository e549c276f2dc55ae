"""Pass ``separate-gemm-operands`` (llvm-cpu): the activation of each high-precision weight GEMM
becomes a dispatch of its own, apart from the data-tiling pack IREE adds in front of the GEMM.

Expects the recipe pass's output. For every ``torch.aten.linear``/``mm``/``addmm``/``matmul``
that is left in high precision (the ``none`` recipe, excluded layers, ...) and multiplies an
activation by a weight (a ``torch.vtensor.literal``, or a ``util.global`` of a weight held
outside the module, through its conversions: ``passes/ir/widening.py``'s ``is_weight``), the
activation goes through ``iree_tensor_ext.compute_barrier.start`` on its way in::

    %x → torch_c.to_builtin_tensor → compute_barrier.start → torch_c.from_builtin_tensor → matmul

Why: with data tiling, IREE packs a GEMM's operand into the CPU's tile layout in the dispatch of
the operand's producer. When that producer is elementwise (GELU, a layer norm's scale and
shift, ...), IREE flattens it to one dimension and the fused producer-and-pack runs 2-3x slower
than the producer and a pack apart (a GELU into a 1024x1536 -> 384 linear: 1.9 ms fused against
0.5 + 0.4 ms; benchmarks/RESULTS.md). The barrier keeps the producer out of the pack's dispatch
and, unlike ``util.optimization_barrier``, is gone before IREE builds the host program, so the
call still submits its work in one go. The values are unchanged: the pass only moves dispatch
boundaries. The scaled GEMMs of the recipes do the same in their lowering
(``lowering/cpu/templates/contraction_matmul.mlir``).

The pipeline runs it for every GEMM on AVX-512 targets
(``compiler.pipeline.core.separates_gemm_operands``); in AVX2 code, where the fused
producer-and-pack was no slower and the pack on its own cost MiniLM and the decoder 4-9%
(benchmarks/RESULTS.md), only for GEMMs whose activation has a dynamic dim (``dynamic_only``):
there IREE 3.13 failed to compile the fused dispatch of a dynamic number of rows
("'iree_codegen.workgroup_count_hint' op failed to resolve workgroup count hint in terms of
workload ordinals"; cuda's padded MoE experts compiled for the CPU, tests/e2e/test_moe.py).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.types import DYNAMIC, tensor_info
from passes.ir.walk import ops_where
from passes.ir.widening import is_weight


def _operands(op: ir.Operation) -> tuple[ir.Value, ir.Value]:
    """The two multiplied operands of a matmul op (``addmm``'s come after its bias)."""
    if op.name == "torch.aten.addmm":
        return op.operands[1], op.operands[2]
    return op.operands[0], op.operands[1]


def _index_of(op: ir.Operation, value: ir.Value) -> int:
    return next(i for i, operand in enumerate(op.operands) if operand == value)


def _is_unbatched_matmul(op: ir.Operation) -> bool:
    return op.name in torch_ops.MATMUL_OPS and op.name != "torch.aten.bmm"


@register_pass
@dataclasses.dataclass(frozen=True)
class SeparateGemmOperands(ModulePass):
    name = "separate-gemm-operands"

    # only the GEMMs whose activation has a dynamic dim (the pipeline's choice for AVX2 code)
    dynamic_only: bool = False

    def apply(self, module: ir.Module) -> None:
        found = ops_where(module.operation, _is_unbatched_matmul)
        for op in found:
            a, b = _operands(op)
            if is_weight(a) == is_weight(b):
                continue  # no weight, or two (IREE folds that GEMM)
            activation = b if is_weight(a) else a
            info = tensor_info(activation.type, dynamic=True)
            if info is None or (self.dynamic_only and DYNAMIC not in info.shape):
                continue
            with ir.InsertionPoint(op), op.location:
                separated = torch_ops.through_compute_barrier(activation)
            op.operands[_index_of(op, activation)] = separated
