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

FP4 GEMMs (E2M1 codes: nvfp4, mxfp4) take AVX2's integer loop on an AVX-512 target too
(``fp4_isa``; every CPU with AVX512-BF16 has AVX2, FMA and F16C): on the AVX512-BF16 host a
2048 x 5632 nvfp4 GEMM ran 0.74-0.79x the AVX-512 loop's time there, and mxfp4, which has no
AVX-512 loop, 0.34x the data-tiled GEMM's, the same outputs (``benchmarks/RESULTS.md``).
``fp4_isa=avx512bf16`` keeps nvfp4 on the AVX-512 loop (measured on that one CPU only).
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
from passes.ir.formats import E2M1
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
    # the variant an FP4 GEMM takes where ``isa`` is AVX-512's (see the module docstring)
    fp4_isa: str = GemvIsa.AVX2.value

    def apply(self, module: ir.Module) -> None:
        known = [i.value for i in GemvIsa]
        for option, value in (("isa", self.isa), ("fp4_isa", self.fp4_isa)):
            if value not in known:
                raise QmlirError(
                    f"decode-gemv {option} must be one of {', '.join(known)}, not '{value}'"
                )
        isa, fp4_isa = GemvIsa(self.isa), GemvIsa(self.fp4_isa)
        calls = NamedCalls(module)
        sites = scaled_matmul_sites(module, calls)
        for name, decl in calls.decls.items():
            op = NamedOp(decl)
            if op.kind is not OpKind.SCALED_MATMUL:
                continue
            fp4 = E2M1 in (op.attrs.a_format, op.attrs.b_format)
            variant = gemv_variant(isa, fp4, fp4_isa)
            plan = gemv_plan(op, variant)
            if plan is None:
                continue
            # block scales must be powers of two: the loop multiplies sums by them (fp8-rowwise's
            # multiply each row's sum after the loop, as per-tensor scales do)
            if plan.row_scales or exact_in_bf16(op, calls, sites.get(name, [])):
                op.update(gemv=variant)


def gemv_variant(isa: GemvIsa, fp4: bool, fp4_isa: GemvIsa = GemvIsa.AVX2) -> GemvIsa:
    """The variant a GEMM takes on a CPU whose own is ``isa``: ``fp4_isa`` for an FP4 GEMM
    (``fp4``) where ``isa`` is AVX-512's, else ``isa``."""
    return fp4_isa if fp4 and isa is GemvIsa.AVX512_BF16 else isa


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
