"""Pass ``decode-gemv`` (llvm-cpu, AVX512-BF16 and AVX512-VBMI): marks every one-row FP8
``scaled_matmul`` (a generator's decode step, ``passes/add_decode_step.py``) with
``qmlir.gemv``, so that ``lower-named-ops`` writes it as a matrix-vector product that reads B's
FP8 codes as stored and decodes them inside its loop (``passes/lowering/cpu/gemv.py``).

Expects the recipe pass's output (after ``gemm-operands``). Which GEMMs (``gemv.gemv_plan``): A
static with one row, B stored ``[N, K]`` with ``K`` a multiple of 64, FP8 operands with
per-tensor scales (fp8-current, fp8-delayed, static activation scales) or power-of-two block
scales (``gemm_operands = "bf16"``: fp8-block's 1x128 and 128x128 blocks, ``K`` a multiple of
128; mxfp8's 1x32), or nvfp4's E2M1 operands (``K`` a multiple of 128); every other GEMM is left
as it is. The values are the data-tiled GEMM's: the
same exact products, f32 sums in another order. The pipeline runs it only for a CPU with the
features the executable's instructions need (``gemv.GEMV_FEATURES``), unless
``decode_gemv="off"``.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.abi import DECODE
from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls
from passes.ir import torch_ops
from passes.ir.dialect import NamedOp, OpKind
from passes.lowering.cpu.gemv import gemv_plan

# torch's matmuls (a high-precision one is left as the model wrote it)
_MATMULS = ("torch.aten.linear", "torch.aten.mm", "torch.aten.matmul", "torch.aten.addmm")
# where a weight comes from: a literal (inline) or a module global (a parameter)
_WEIGHT_SOURCES = ("torch.vtensor.literal", "util.global.load")


@register_pass
@dataclasses.dataclass(frozen=True)
class DecodeGemv(ModulePass):
    name = "decode-gemv"

    def apply(self, module: ir.Module) -> None:
        for decl in NamedCalls(module).decls.values():
            op = NamedOp(decl)
            if op.kind is OpKind.SCALED_MATMUL and gemv_plan(op) is not None:
                op.update(gemv=True)


def decode_step_reads_codes(module: ir.Module) -> bool:
    """Whether the module's ``@decode`` (a generator's decode step) multiplies every weight as
    stored: each scaled GEMM marked ``qmlir.gemv`` and no weight left to a high-precision
    matmul (an excluded layer, a shape the pass does not take). Such a step needs no decoded or
    packed copy of the weights (``pack_weights="auto"`` then keeps none); False without
    ``@decode``."""
    calls = NamedCalls(module)
    decode = next(
        (
            op.operation
            for op in module.body.operations
            if op.operation.name == "func.func"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == DECODE
        ),
        None,
    )
    if decode is None:
        return False
    reads_codes = True

    def check(op: ir.Operation) -> ir.WalkResult:
        nonlocal reads_codes
        gemm = calls.of_kind(op, OpKind.SCALED_MATMUL)
        if gemm is not None and not gemm.attrs.gemv:
            reads_codes = False
        if op.name in _MATMULS and any(_weight(v) for v in op.operands):
            reads_codes = False
        return ir.WalkResult.ADVANCE

    decode.walk(check)
    return reads_codes


def _weight(value: ir.Value) -> bool:
    """Whether ``value`` is a weight: a literal or a global, through torch's conversions."""
    op = torch_ops.defining_op(value)
    while op is not None and op.name == "torch_c.from_builtin_tensor":
        op = torch_ops.defining_op(op.operands[0])
    return op is not None and op.name in _WEIGHT_SOURCES
