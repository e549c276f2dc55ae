"""Pass ``int-fp4-gemm`` (llvm-cpu in AVX2 code): marks every many-row FP4 ``scaled_matmul``
(nvfp4, mxfp4) (a batch, a prefill: A's rows more than one or dynamic) with ``qmlir.codes_gemm =
"avx2"``, so that ``lower-named-ops`` writes it as a GEMM in integers
(``passes/lowering/cpu/int_gemm.py``: E2M1 values times 2 are the integers -12..12, each block's
products summed exactly by ``vpmaddubsw``) instead of IREE's f32 GEMM over decoded operands.

Which GEMMs (``int_gemm.int_gemm_plan``): B stored ``[N, K]`` and static with ``N`` a multiple of
8, block scales compact (after ``compact-block-scales``; mxfp4's blocks of 32 as two 16s), one-row
GEMMs left to ``decode-gemv``. The products are the data-tiled GEMM's, exact; each 16 codes' are
summed exactly in integers, the blocks' sums in f32: the same values to within the order and number
of f32 roundings (docs/numerics.md). The pipeline runs it for a CPU whose decode-gemv variant is
AVX2's (AVX2, FMA and F16C without AVX512-BF16 and -VBMI: there IREE's bf16 GEMM is faster than
this one's instructions gain), unless ``decode_gemv="off"``
(``compiler.pipeline.core.runs_int_fp4_gemms``). B is laid out for it once, at load, where IREE
does so (inline weights, or a parameter file's under ``decoded`` or ``panels``); elsewhere (a
parameter file's under ``load``, a generator's ``auto`` without decoded copies,
``pack_weights="call"``: ``compiler.pipeline.core.lays_out_per_call``) the pass runs with
``stored=true`` and marks the GEMMs ``qmlir.stored_b``: they read B's codes as stored and lay
them out inside the executable (the same outputs bit for bit), as a call that laid out each
weight first ran 1.45x the data-tiled GEMM's time on a 5-token prompt (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls
from passes.ir.dialect import GemvIsa, NamedOp, OpKind
from passes.lowering.cpu.int_gemm import int_gemm_plan


@register_pass
@dataclasses.dataclass(frozen=True)
class IntFp4Gemm(ModulePass):
    name = "int-fp4-gemm"
    # B's codes read as stored and laid out inside the GEMM each call (``qmlir.stored_b``): where
    # IREE would not lay the weights out once, at load
    stored: bool = False

    def apply(self, module: ir.Module) -> None:
        for decl in NamedCalls(module).decls.values():
            op = NamedOp(decl)
            attrs = op.attrs
            if op.kind is not OpKind.SCALED_MATMUL or attrs.gemv or attrs.codes_gemm:
                continue
            if int_gemm_plan(op):
                op.update(codes_gemm=GemvIsa.AVX2, stored_b=self.stored or None)
