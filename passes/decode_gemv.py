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

from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls
from passes.ir.dialect import NamedOp, OpKind
from passes.lowering.cpu.gemv import gemv_shape


@register_pass
@dataclasses.dataclass(frozen=True)
class DecodeGemv(ModulePass):
    name = "decode-gemv"

    def apply(self, module: ir.Module) -> None:
        for decl in NamedCalls(module).decls.values():
            op = NamedOp(decl)
            if op.kind is OpKind.SCALED_MATMUL and gemv_shape(op) is not None:
                op.update(gemv=True)
