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
from passes.ir.dialect import GemmOperandType, NamedOp, OpKind, ScaleFormat, Scaling
from passes.ir.named_ops import callee_name

GEMM_OPERAND_TYPES = tuple(t.value for t in GemmOperandType)


def _pow2_scales(calls: NamedCalls, value: ir.Value) -> bool:
    """Whether ``value`` (a GEMM's block scales) comes from a ``compute_scale`` that rounds to
    powers of two, through the ``swizzle`` and ``quantize`` (its scale_inv result) between."""
    if isinstance(value.owner, ir.Block):
        return False  # a block argument: not provable
    owner = value.owner.operation
    if owner.name != "func.call":
        return False
    if calls.of_kind(owner, OpKind.SWIZZLE) is not None:
        return _pow2_scales(calls, owner.operands[0])
    if calls.of_kind(owner, OpKind.QUANTIZE) is not None:
        return _pow2_scales(calls, owner.operands[1])
    rule = calls.of_kind(owner, OpKind.COMPUTE_SCALE)
    return rule is not None and bool(rule.attrs.pow2)


def exact_in_bf16(op: NamedOp, calls: NamedCalls, sites: list[ir.Operation]) -> bool:
    """Whether every decoded operand value of the GEMM ``op`` (called at ``sites``) is exact in
    bf16."""
    if op.attrs.scaling is not Scaling.BLOCK:
        return True  # per-tensor FP8 codes
    if op.attrs.scale_format in (ScaleFormat.E8M0, ScaleFormat.NVFP4):
        return True  # FP8 x 2^k; E2M1 x E4M3
    return bool(sites) and all(
        _pow2_scales(calls, call.operands[1]) and _pow2_scales(calls, call.operands[3])
        for call in sites
    )


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
        sites: dict[str, list[ir.Operation]] = {}

        def collect(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.call" and calls.of_kind(op, OpKind.SCALED_MATMUL) is not None:
                sites.setdefault(callee_name(op), []).append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(collect)
        for name, decl in calls.decls.items():
            op = NamedOp(decl)
            if op.kind is OpKind.SCALED_MATMUL and exact_in_bf16(op, calls, sites.get(name, [])):
                op.update(gemm_operands=GemmOperandType(self.dtype))
