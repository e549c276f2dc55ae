"""Pass ``decode-gemv`` (llvm-cpu): marks every one-row FP8 or NVFP4 ``scaled_matmul`` (a
generator's decode step, ``passes/add_decode_step.py``) with ``qmlir.gemv`` (the instructions it
is written for: ``isa``, ``avx512bf16`` or ``avx2``), so that ``lower-named-ops`` writes it as a
matrix-vector product that reads B's codes as stored and decodes them inside its loop
(``passes/lowering/cpu/gemv.py``).

Expects the recipe pass's output, before ``fold-constant-quantize`` (a weight's scale chain
proves its block scales powers of two). Which GEMMs (``gemv.gemv_plan``): A static with one row,
B stored ``[N, K]`` with ``K`` a multiple of 64, FP8 operands with per-tensor scales
(fp8-current, fp8-delayed, static activation scales) or block scales that are powers of two
(fp8-block's 1x128 and 128x128 blocks with ``pow2_scales``, ``K`` a multiple of 128; mxfp8's
1x32: ``fusion.scale_chains.exact_in_bf16``, the proof ``gemm-operands`` uses), or nvfp4's
E2M1 operands (``K`` a multiple of 128); every other GEMM is left as
it is. The values are the data-tiled GEMM's: the same exact products, f32 sums in another
order. The pipeline runs it only for a CPU with the features the executable's instructions
need (``gemv.GEMV_FEATURES``; the first variant the CPU has), unless ``decode_gemv="off"``.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.abi import DECODE
from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls
from passes.fusion.scale_chains import exact_in_bf16, scaled_matmul_sites
from passes.ir.dialect import GemvIsa, NamedOp, OpKind
from passes.ir.named_ops import find_function
from passes.ir.widening import is_weight
from passes.lowering.cpu.gemv import gemv_plan

# torch's matmuls (a high-precision one is left as the model wrote it)
_MATMULS = ("torch.aten.linear", "torch.aten.mm", "torch.aten.matmul", "torch.aten.addmm")


@register_pass
@dataclasses.dataclass(frozen=True)
class DecodeGemv(ModulePass):
    name = "decode-gemv"

    isa: str = GemvIsa.AVX512_BF16.value

    def apply(self, module: ir.Module) -> None:
        known = [i.value for i in GemvIsa]
        if self.isa not in known:
            raise QmlirError(f"decode-gemv isa must be one of {', '.join(known)}, not '{self.isa}'")
        isa = GemvIsa(self.isa)
        calls = NamedCalls(module)
        sites = scaled_matmul_sites(module, calls)
        for name, decl in calls.decls.items():
            op = NamedOp(decl)
            plan = None if op.kind is not OpKind.SCALED_MATMUL else gemv_plan(op, isa)
            if plan is None:
                continue
            # block scales must be powers of two: the loop multiplies sums by them (fp8-rowwise's
            # multiply each row's sum after the loop, as per-tensor scales do)
            if plan.row_scales or exact_in_bf16(op, calls, sites.get(name, [])):
                op.update(gemv=isa)


def decode_step_reads_codes(module: ir.Module) -> bool:
    """Whether the module's ``@decode`` (a generator's decode step) multiplies every weight as
    stored: each scaled GEMM marked ``qmlir.gemv`` and no weight left to a high-precision
    matmul (an excluded layer, a shape the pass does not take). Such a step needs no decoded or
    packed copy of the weights (``pack_weights="auto"`` then keeps none); False without
    ``@decode``."""
    calls = NamedCalls(module)
    decode = find_function(module, DECODE)
    if decode is None:
        return False
    reads_codes = True

    def check(op: ir.Operation) -> ir.WalkResult:
        nonlocal reads_codes
        gemm = calls.of_kind(op, OpKind.SCALED_MATMUL)
        if gemm is not None and not gemm.attrs.gemv:
            reads_codes = False
        if op.name in _MATMULS and any(is_weight(v) for v in op.operands):
            reads_codes = False
        return ir.WalkResult.ADVANCE

    decode.walk(check)
    return reads_codes
