"""The CPU kernels' instruction set on this host, and the marker of the tests that need its
AVX-512 variant (``prefill-gemm``'s and ``bf16-prefill-gemm``'s kernels exist only there)."""

from __future__ import annotations

import pytest

from compiler.pipeline.core import decode_gemv_isa
from compiler.pipeline.target import resolve_target
from passes.ir.dialect import GemvIsa

HOST_ISA = decode_gemv_isa(resolve_target("llvm-cpu", None, "host"))
needs_avx512_bf16 = pytest.mark.skipif(
    HOST_ISA is not GemvIsa.AVX512_BF16,
    reason="this CPU lacks AVX512-BF16 or AVX512-VBMI: no artifact for it takes the GEMM kernels",
)
