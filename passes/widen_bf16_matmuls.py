"""Pass ``widen-bf16-matmuls``: a bf16 matmul the recipe left in high precision multiplies f32.

On a CPU without AVX512-BF16, IREE's bf16 GEMM (``bf16 x bf16 -> f32``, what torch-mlir makes of
a bf16 ``linear``) has no instruction to run on: its data-tiled ``mmt4d`` widens one element at a
time, 1.8 GFLOP/s for a 32x2048x5632 ``linear`` on an AVX2 host against IREE's f32 GEMM's 130
(benchmarks/RESULTS.md): a bf16 model under ``none`` generated 2.5 tokens/s where torch made 19.
This pass gives each such matmul f32 operands and rounds its f32 result to bf16 once:

    y = bf16(linear(f32(x), f32(w), f32(b)))

Each bf16 operand is widened exactly, by its bits (``bf16 -> i16 -> i32 << 16 -> f32``, a
function per tensor type, ``passes/ir/widening.py``), not by an ``extf``: IREE folds an ``extf``
back into the GEMM as a ``bf16 x bf16 -> f32`` one, and nothing folds the bit shift. The products
and sums are f32 (as in IREE's bf16 GEMM and torch's), the bias is added in f32 before the one
rounding (torch-mlir's bf16 ``linear`` rounds the product first, then adds the bias in bf16). A
weight's widening is a constant expression: IREE widens and packs it once, at load, as it packs
a bf16 weight (``--pack-weights``: a generator's weights outside the module are widened at load
under ``decoded``, its default, or in every call under ``call``); the f32 copy takes twice the
bf16 one's memory.

An f32 matmul of operands converted from bf16 (``x.float() @ w.float()`` in a bf16 model, which
IREE folds into the same bf16 GEMM) takes the bit widening of those operands instead.

Runs on llvm-cpu artifacts whose scaled GEMMs multiply f32 (``--gemm-operands f32``, ``auto`` on a
CPU without AVX512-BF16), after the recipe pass, on ``linear``, ``mm``, ``addmm``, ``matmul`` and
``bmm``. f16 matmuls are left as they are (an f16 value's exact widening is not one shift).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.types import tensor_info
from passes.ir.walk import ops_where
from passes.ir.widening import Widener

# the imported forms of ``tensor.to(dtype)``, their source first
CONVERSIONS = ("torch.aten._to_copy", "torch.prims.convert_element_type", "torch.aten.to.dtype")


def _dtype(value: ir.Value) -> str | None:
    info = tensor_info(value.type, dynamic=True)
    return None if info is None else info.dtype


def widened_source(value: ir.Value) -> ir.Value | None:
    """The bf16 tensor an f32 ``value`` was converted from, else None."""
    op = torch_ops.defining_op(value)
    if op is None or op.name not in CONVERSIONS or _dtype(value) != "f32":
        return None
    source = op.operands[0]
    return source if _dtype(source) == "bf16" else None


def _takes(op: ir.Operation) -> bool:
    """A matmul of bf16 results, or of f32 operands converted from bf16."""
    if op.name not in torch_ops.MATMUL_OPS:
        return False
    return _dtype(op.results[0]) == "bf16" or any(widened_source(v) for v in op.operands)


@register_pass
@dataclasses.dataclass(frozen=True)
class WidenBf16Matmuls(ModulePass):
    name = "widen-bf16-matmuls"

    def apply(self, module: ir.Module) -> None:
        found = ops_where(module.operation, _takes)
        widener = Widener(module)
        for op in found:
            if _dtype(op.results[0]) == "bf16":
                self._widen(op, widener)
            else:
                self._widen_converted(op, widener)

    @staticmethod
    def _widen_converted(op: ir.Operation, widener: Widener) -> None:
        """An f32 matmul: each operand converted from bf16 is widened from it by its bits."""
        for i, value in enumerate(op.operands):
            source = widened_source(value)
            if source is not None:
                with ir.InsertionPoint(op), op.location:
                    op.operands[i] = widener.widen(source)

    @staticmethod
    def _widen(op: ir.Operation, widener: Widener) -> None:
        result = op.results[0]
        info = tensor_info(result.type, dynamic=True)
        assert info is not None
        with ir.InsertionPoint(op), op.location:
            operands = [widener.widen(v) if _dtype(v) == "bf16" else v for v in op.operands]
            wide = ir.Operation.create(
                op.name,
                results=[info.with_dtype("f32").vtensor()],
                operands=operands,
                attributes={name: op.attributes[name] for name in op.attributes},
            )
            narrow = torch_ops.convert_dtype(wide.result, "bf16")
        result.replace_all_uses_with(narrow)
        op.erase()
