"""Pass ``dynamic-gemm`` (llvm-cpu with AVX512-BF16 and -VBMI, under ``pack_weights="panels"``;
after ``prefill-gemm``): marks
every ``scaled_matmul`` of a dynamic number of rows whose operands its lowering decodes to bf16
with ``qmlir.bf16_gemm``, so that ``lower-named-ops`` multiplies the decoded operands by
``prefill-gemm``'s hand-written bf16 GEMM (``passes/lowering/cpu/decoded_gemm.py``) rather than
by IREE's data-tiled GEMM.

A dynamic artifact is data-tiled from IREE's global optimization, where each GEMM of a dynamic
number of rows writes its outputs in tiles (transposed: the weight is made the GEMM's wide side)
and a dispatch of its own unpacks them, with the epilogue IREE fused into it: 7.4 ms of unpacks
in a 51 ms call of the decoder sample under fp8-current (benchmarks/RESULTS.md); a static
artifact's GEMM writes its outputs in place. The hand-written GEMM stores its outputs row-major.
B, a weight's codes decoded (times their block scales) as ever, is computed once when the module
loads, as the data-tiled GEMM's packed copy was; A is decoded as ever, then tiled by the GEMM's
own executable. The same exact products, each output's sums K in order by pairs: the outputs
are the data-tiled GEMM's bit for bit (tests/e2e/test_dynamic_gemm.py).

Which GEMMs: A's rows dynamic, B stored ``[N, K]`` (static, 2-D) with ``N`` a multiple of 16 and
the decoded ``K`` (nvfp4's and mxfp4's padded K) a multiple of 32, bf16 operands
(``gemm-operands``), not already a one-row (``decode-gemv``) or codes (``prefill-gemm``) GEMM.

Not the default: on the AVX512-BF16 host, with freed memory kept (``host_memory.py``), decoder
models ran 0.85-1.00x the data-tiled GEMMs' time (a Qwen2-like, a Mistral-like model and the
decoder sample, fp8-block 0.90-0.94x), but MiniLM 0.91-0.92x at 1024 rows, 1.04x at 512 and
1.08-1.09x at 2048, for a reason not found (benchmarks/RESULTS.md). The slowdowns once measured
at 1536-1600 rows (1.16-1.60x), and fp8-block's 1.32x that had kept it out, were page faults of
per-call buffers past glibc's ``mmap`` threshold, gone since freed memory is kept.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls
from passes.ir.dialect import GemvIsa, NamedOp, OpKind
from passes.ir.formats import E2M1
from passes.ir.types import DYNAMIC
from passes.lowering.cpu.gemm import LANES, STEP


@register_pass
@dataclasses.dataclass(frozen=True)
class DynamicGemm(ModulePass):
    name = "dynamic-gemm"

    def apply(self, module: ir.Module) -> None:
        for decl in NamedCalls(module).decls.values():
            op = NamedOp(decl)
            if op.kind is OpKind.SCALED_MATMUL and takes(op):
                op.update(bf16_gemm=GemvIsa.AVX512_BF16)


def takes(op: NamedOp) -> bool:
    """Whether ``op``'s decoded operands are multiplied by the bf16 GEMM (the module doc's
    conditions)."""
    attrs = op.attrs
    if attrs.gemv or attrs.codes_gemm or attrs.bf16_gemm or attrs.operand_type != "bf16":
        return False
    if not attrs.b_transposed:
        return False
    ins, _ = op.signature(dynamic=True)
    fp4 = attrs.a_format == E2M1
    a, b = ins[0], ins[3 if len(ins) == 6 else 2]  # nvfp4: a, sa, ga, b, sb, gb
    if a.rank < 2 or b.rank != 2 or not b.is_static or DYNAMIC not in a.shape[:-1]:
        return False
    n, k = b.shape[0], b.shape[1] * (2 if fp4 else 1)  # E2M1: two codes a byte
    return n % LANES == 0 and k % STEP == 0
