"""Which cuda lowering a named op takes: :data:`LOWERINGS`, one selector per op kind, of the
same shape as the llvm-cpu table (``passes/lowering/cpu/lower.py``).

A selector reads the op's record and returns the function that writes a hand-written kernel's
launch (``passes/ir/cuda_kernels.py`` declares the kernels), or None: **the llvm-cpu body serves
cuda too** (plain linalg and integer arithmetic, which IREE compiles for cuda). The quantize core
(per-tensor amax and cast, fused block quantize) always takes the kernels; a GEMM no kernel
takes, and every other op, falls back.
"""

from __future__ import annotations

from collections.abc import Callable

from iree.compiler import ir

from passes.ir.dialect import NamedOp, OpKind
from passes.lowering.cuda import fused_quantize, gemm, per_tensor
from passes.lowering.cuda.kernels import CudaLowering

Selector = Callable[[NamedOp], CudaLowering | None]

LOWERINGS: dict[OpKind, Selector] = {
    OpKind.AMAX: per_tensor.select_amax,
    OpKind.COMPUTE_SCALE: per_tensor.select_compute_scale,
    OpKind.QUANTIZE: per_tensor.select_quantize,
    OpKind.SCALED_MATMUL: gemm.select_scaled_matmul,
    OpKind.FUSED_QUANTIZE: lambda op: fused_quantize.lower_fused_quantize,
    # swizzle, amax_history_update, block_scale_dequantize: the llvm-cpu body
}


def lower_cuda(decl: ir.Operation, arch: str) -> str | None:
    """The cuda definition of ``decl``, or None where the llvm-cpu template serves cuda too."""
    op = NamedOp(decl)
    select = LOWERINGS.get(op.kind)
    lowering = select(op) if select is not None else None
    return lowering(op, arch) if lowering is not None else None
