"""Which cuda lowering a named op takes: a hand-written kernel's launch where there is one.

The quantize core (amax, FP8 cast, fused block quantize) always takes the kernels; a GEMM whose
kernel is not in its family's PTX falls back to the llvm-cpu template (None here), and so does
every other op: those are plain linalg and integer arithmetic, which IREE compiles for cuda too.
"""

from __future__ import annotations

from collections.abc import Callable

from iree.compiler import ir

from passes.ir.attributes import NamedOp
from passes.lowering.cuda import fused_quantize, gemm, per_tensor

_LOWERINGS: dict[str, Callable[[NamedOp, str], str | None]] = {
    "amax": per_tensor.lower_amax,
    "compute_scale": per_tensor.lower_compute_scale,
    "quantize": per_tensor.lower_quantize,
    "scaled_matmul": gemm.lower_scaled_matmul,
    "fused_quantize": fused_quantize.lower_fused_quantize,
}


def lower_cuda(decl: ir.Operation, arch: str) -> str | None:
    """The cuda definition of ``decl``, or None where the llvm-cpu template serves cuda too."""
    op = NamedOp(decl)
    lowering = _LOWERINGS.get(op.kind)
    return lowering(op, arch) if lowering is not None else None
