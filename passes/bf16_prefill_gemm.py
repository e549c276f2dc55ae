"""Pass ``bf16-prefill-gemm`` (llvm-cpu with AVX512-BF16 and -VBMI): a bf16 weight's ``linear``
of many rows (a generator's prefill, a batch) multiplies the weight as stored, in the
hand-written GEMM ``prefill-gemm`` runs over FP8 and FP4 codes (``passes/lowering/cpu/gemm.py``).

On a CPU with AVX512-BF16 a bf16 model's GEMMs take bf16 operands (``--gemm-operands auto``), and
IREE's data-tiled GEMM reads each weight packed into its tiles: a bf16 generator whose weights
sit in a parameter file held that packed copy beside the mapped file, hoisted into the module's
initializer (its prefill's weights twice in memory: 1.87x the parameter file and cache at 0.35B,
benchmarks/RESULTS.md), although its decode step reads every weight as stored
(``bf16-decode-gemv``). Here each ``torch.aten.linear`` whose activation is bf16 ``[..., K]``
with more than one row or a dynamic number (``K`` a multiple of 32) and whose weight is a bf16
weight ``[N, K]`` (a literal or a global; ``N`` a multiple of 16) becomes a call of two
executables: the activation tiled as the data-tiled GEMM's left operand, then the GEMM, which
transposes 16 rows of the weight at a time into a panel on the stack and multiplies it by
``vdpbf16ps`` (``templates/linear_bf16_gemm.mlir``). The bias (if any) is added to its f32
sums and the sum rounded to bf16 once, as torch's bf16 ``linear`` and IREE's data-tiled GEMM
(its bias fused into the sums) do. The outputs are the data-tiled GEMM's bit for bit (the same
exact products, each output's sums K in order by pairs; tests/e2e/test_bf16_prefill_gemm.py);
where IREE fused that GEMM's output into a product without its bf16 rounding (a gated MLP's up
x gate), the call's output rounds as torch's does.

The pipeline runs it after ``bf16-decode-gemv`` where no packed copy of the weights is wanted
(``compiler.pipeline.core.multiplies_bf16_weights_as_stored``: ``pack_weights="call"``, or a
generator's ``"auto"`` with its weights in a parameter file and a decode step that reads every
weight as stored), on a CPU with the instructions the GEMM needs, unless ``decode_gemv="off"``.
"""

from __future__ import annotations

import dataclasses
import math

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.functions import function_names
from passes.ir.types import DYNAMIC, TensorInfo, tensor_info
from passes.ir.walk import ops_where
from passes.ir.widening import is_weight
from passes.lowering.cpu.gemm import LANES, STEP, bf16_gemm_definitions

PREFIX = "qmlir.gemm_bf16."


@dataclasses.dataclass(frozen=True)
class _Site:
    linear: ir.Operation
    x: TensorInfo  # the activation: bf16 [..., K], more than one row or a dynamic number
    n: int
    k: int


def _site(op: ir.Operation) -> _Site | None:
    """A many-row bf16 linear of a bf16 weight this pass takes (shapes as the GEMM needs)."""
    x = tensor_info(op.operands[0].type, dynamic=True)
    out = tensor_info(op.results[0].type, dynamic=True)
    w = tensor_info(op.operands[1].type, dynamic=True)
    if x is None or out is None or w is None or w.rank != 2 or not w.is_static or x.rank < 2:
        return None
    if not x.dtype == out.dtype == w.dtype == "bf16":
        return None
    n, k = w.shape
    lead = x.shape[:-1]
    if DYNAMIC not in lead and math.prod(lead) <= 1:
        return None  # one row: bf16-decode-gemv's
    if x.shape[-1] != k or k % STEP or n % LANES or not is_weight(op.operands[1]):
        return None
    return _Site(op, x, n, k)


@register_pass
@dataclasses.dataclass(frozen=True)
class Bf16PrefillGemm(ModulePass):
    name = "bf16-prefill-gemm"

    def apply(self, module: ir.Module) -> None:
        linears = ops_where(module.operation, lambda op: op.name == "torch.aten.linear")
        names = function_names(module)
        for op in linears:
            site = _site(op)
            if site is not None:
                _rewrite(module, names, site)


def _rewrite(module: ir.Module, names: set[str], site: _Site) -> None:
    """The linear as the GEMM's call: without a bias, its outputs rounded to bf16 as the GEMM
    stores them; with one, the bias added to its f32 result, then rounded to bf16."""
    op = site.linear
    rounded = torch_ops.is_none(op.operands[2])
    name = f"{PREFIX}{'x'.join('D' if d == DYNAMIC else str(d) for d in site.x.shape)}.{site.n}"
    name += ".rounded" if rounded else ""
    if name not in names:
        for text in bf16_gemm_definitions(name, site.x, site.n, site.k, rounded):
            module.body.append(ir.Operation.parse(text))
        names.add(name)
    out = TensorInfo((*site.x.shape[:-1], site.n), "bf16" if rounded else "f32")
    with ir.InsertionPoint(op), op.location:
        call = ir.Operation.create(
            "func.call",
            results=[out.builtin()],
            operands=[torch_ops.to_builtin(v) for v in op.operands[:2]],
            attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
        )
    torch_ops.replace_linear(op, call, "bf16")
