"""Pass ``prefill-gemm`` (llvm-cpu with AVX512-BF16 and -VBMI): marks every many-row FP8
``scaled_matmul`` (a generator's prefill, a batch: A's rows more than one or dynamic) with
per-tensor scales, or fp8-block's, mxfp8's or nvfp4's block scales, with ``qmlir.codes_gemm``,
so that ``lower-named-ops`` writes it as a GEMM that reads B's codes as stored and decodes them
inside its loop (``passes/lowering/cpu/gemm.py``), instead of IREE's data-tiled GEMM over B
decoded and packed.

Which GEMMs (``gemm.gemm_plan``): B stored ``[N, K]``, ``N`` a multiple of 16, ``K`` of 32, E4M3
or E5M2 operands with per-tensor scales (fp8-current, fp8-delayed, static activation scales), or
with fp8-block's (``K`` a multiple of 128) or mxfp8's block scales, or nvfp4's E2M1 operands,
where ``gemm-operands`` chose bf16 operands (the dequantized values exact in bf16); every other
GEMM is left as it is. Runs after ``compact-block-scales`` (mx-layout scales read compact). The
values are the data-tiled GEMM's bit for bit: the same exact products (block scales multiplied
into the decoded values as the dequantize does), each output's sums in the same order (K in
order, by pairs). The pipeline runs it where a call would otherwise decode and pack each weight
(a parameter file without decoded copies: ``weights="external"`` under ``pack_weights="load"``,
a generator's ``"auto"``; ``pack_weights="call"``), for a CPU with the features the
executable's instructions need (``gemv.GEMV_FEATURES``), unless ``decode_gemv="off"``
(``compiler.pipeline.core.reads_codes_per_call``).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls
from passes.ir.dialect import GemvIsa, NamedOp, OpKind
from passes.lowering.cpu.gemm import gemm_plan


@register_pass
@dataclasses.dataclass(frozen=True)
class PrefillGemm(ModulePass):
    name = "prefill-gemm"

    def apply(self, module: ir.Module) -> None:
        for decl in NamedCalls(module).decls.values():
            op = NamedOp(decl)
            if op.kind is OpKind.SCALED_MATMUL and not op.attrs.gemv and gemm_plan(op):
                op.update(codes_gemm=GemvIsa.AVX512_BF16)
