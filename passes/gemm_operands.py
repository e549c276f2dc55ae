"""Pass ``gemm-operands``: the element type of the scaled GEMMs' decoded operands on llvm-cpu.

CPUs have no FP8/FP4 GEMM: the llvm-cpu lowering decodes each operand (codes x block scales) and
multiplies the decoded values, f32 products and f32 sums. With ``dtype=bf16`` (for a CPU with
AVX512-BF16, whose ``vdpbf16ps`` IREE's data-tiled bf16 x bf16 -> f32 matmul uses), this pass
marks every ``scaled_matmul`` declaration whose decoded values are all exact in bf16 with
``qmlir.gemm_operands = "bf16"``; ``lower-named-ops`` then decodes its operands to bf16: the same
values, half the bytes, products still exact in f32, sums in f32 (in the order of IREE's bf16
tiles). Exact in bf16 (8 significant bits, f32's exponent range):

- FP8 codes of a per-tensor recipe (the scales are applied to the f32 accumulator);
- FP8 x a power-of-two block scale: mxfp8's E8M0 scales, fp8-block's f32 scales when the
  ``compute_scale`` behind them rounds to powers of two (``qmlir.pow2``, fp8-block's default);
- E2M1 x an E4M3 block scale (nvfp4: at most 2 + 4 significant bits; the global decode scales
  are applied to the accumulator).

fp8-block's GEMMs whose scales are not provably powers of two keep f32 operands (FP8 x an f32
scale needs up to 24 bits). Runs after the recipe pass and before ``fold-constant-quantize``: it
follows each GEMM's scale operands back through ``swizzle`` and ``quantize`` to the
``compute_scale`` that made them. ``dtype=f32`` leaves the module as it is.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls
from passes.fusion.scale_chains import exact_in_bf16, scaled_matmul_sites
from passes.ir.dialect import GemmOperandType, NamedOp, OpKind

GEMM_OPERAND_TYPES = tuple(t.value for t in GemmOperandType)


@register_pass
@dataclasses.dataclass(frozen=True)
class GemmOperands(ModulePass):
    name = "gemm-operands"

    dtype: str = "f32"

    def apply(self, module: ir.Module) -> None:
        if self.dtype not in GEMM_OPERAND_TYPES:
            raise QmlirError(
                f"gemm operands must be one of {', '.join(GEMM_OPERAND_TYPES)}, not '{self.dtype}'"
            )
        if self.dtype == "f32":
            return
        calls = NamedCalls(module)
        sites = scaled_matmul_sites(module, calls)
        for name, decl in calls.decls.items():
            op = NamedOp(decl)
            if op.kind is OpKind.SCALED_MATMUL and exact_in_bf16(op, calls, sites.get(name, [])):
                op.update(gemm_operands=GemmOperandType(self.dtype))
