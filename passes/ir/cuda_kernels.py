"""The hand-written CUDA kernels of ``runtime_kernels/``, declared once: each entry point, the
family (``runtime_kernels/src/<family>.cu``) that defines it, and the named op it serves.

``runtime_kernels.nvrtc`` compiles the families and lists their entry points from here, the cuda
lowering launches these kernels, and ``fuse-quantize-core`` fuses exactly the chains
:data:`FUSED_KERNELS` has a kernel for. ``runtime_kernels/README.md`` documents each one's ABI.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from passes.ir.dialect import Block, OpKind, ScaleRule
from passes.ir.formats import E2M1, E4M3, E5M2, FloatFormat
from passes.ir.layouts import ScaleLayout


class KernelFamily(enum.Enum):
    """One ``.cu`` source, compiled to one PTX module."""

    PER_TENSOR = "per_tensor"
    BLOCK_FP8 = "block_fp8"
    MXFP8 = "mxfp8"
    NVFP4 = "nvfp4"
    GEMM_BLOCK_SCALED = "gemm_block_scaled"
    GEMM_FEW_ROWS = "gemm_few_rows"

    @property
    def source(self) -> str:
        return f"{self.value}.cu"


@dataclass(frozen=True)
class CudaKernel:
    """An ``extern "C" __global__`` entry point and the named op a launch of it lowers."""

    entry: str
    family: KernelFamily
    op: OpKind
    serves: str  # what it computes (docs/dialect.md)


_PT, _FP8, _MX, _FP4, _GEMM, _FEW = KernelFamily
AMAX = CudaKernel("qmlir_amax_f32", _PT, OpKind.AMAX, "per-tensor amax")
FP8_SCALE = CudaKernel(
    "qmlir_fp8_scale_from_amax", _PT, OpKind.COMPUTE_SCALE, "rule fp8_per_tensor"
)
QUANTIZE_FP8: dict[FloatFormat, CudaKernel] = {
    fmt: CudaKernel(f"qmlir_quantize_fp8_{fmt.name}", _PT, OpKind.QUANTIZE, "per-tensor cast")
    for fmt in (E4M3, E5M2)
}
QUANTIZE_FP8_DELAYED: dict[FloatFormat, CudaKernel] = {
    fmt: CudaKernel(
        f"qmlir_quantize_fp8_delayed_{fmt.name}",
        _PT,
        OpKind.FUSED_QUANTIZE,
        "per-tensor cast + amax (fp8-delayed)",
    )
    for fmt in (E4M3, E5M2)
}
FP8_BLOCK1D = CudaKernel(
    "qmlir_quantize_fp8_block1d", _FP8, OpKind.FUSED_QUANTIZE, "fp8-block 1D, both usages"
)
FP8_BLOCK1D_ROWWISE = CudaKernel(
    "qmlir_quantize_fp8_block1d_rowwise", _FP8, OpKind.FUSED_QUANTIZE, "fp8-block 1x128"
)
FP8_BLOCK2D = CudaKernel(
    "qmlir_quantize_fp8_block2d", _FP8, OpKind.FUSED_QUANTIZE, "fp8-block 128x128"
)
FP8_ROWWISE = CudaKernel(
    "qmlir_quantize_fp8_rowwise", _FP8, OpKind.FUSED_QUANTIZE, "fp8-rowwise 1 x cols"
)
MXFP8 = CudaKernel("qmlir_quantize_mxfp8", _MX, OpKind.FUSED_QUANTIZE, "mxfp8, both usages")
MXFP8_ROWWISE = CudaKernel("qmlir_quantize_mxfp8_rowwise", _MX, OpKind.FUSED_QUANTIZE, "mxfp8 1x32")
NVFP4_DECODE_SCALE = CudaKernel(
    "qmlir_nvfp4_decode_scale", _FP4, OpKind.COMPUTE_SCALE, "rule nvfp4_global_decode"
)
NVFP4_QUANTIZE = CudaKernel(
    "qmlir_nvfp4_quantize", _FP4, OpKind.FUSED_QUANTIZE, "nvfp4 1x16 (TE order)"
)
GEMM_FP8_PER_TENSOR = CudaKernel(
    "qmlir_gemm_fp8_per_tensor", _GEMM, OpKind.SCALED_MATMUL, "per-tensor FP8"
)
GEMM_FP8_BLOCK = CudaKernel(
    "qmlir_gemm_fp8_block", _GEMM, OpKind.SCALED_MATMUL, "fp32 scales, block1d/block2d"
)
GEMM_FP8_ROWWISE = CudaKernel(
    "qmlir_gemm_fp8_rowwise", _GEMM, OpKind.SCALED_MATMUL, "fp32 scales a row over all of K"
)
# a decode step's few rows (M <= 16): 16 x 16 output tiles over all of K (nothing at m > 16)
GEMM_FP8_PER_TENSOR_FEW_ROWS = CudaKernel(
    "qmlir_gemm_fp8_per_tensor_few_rows", _FEW, OpKind.SCALED_MATMUL, "per-tensor FP8, M <= 16"
)
GEMM_FP8_BLOCK_FEW_ROWS = CudaKernel(
    "qmlir_gemm_fp8_block_few_rows", _FEW, OpKind.SCALED_MATMUL, "fp32 block scales, M <= 16"
)
GEMM_FP8_ROWWISE_FEW_ROWS = CudaKernel(
    "qmlir_gemm_fp8_rowwise_few_rows", _FEW, OpKind.SCALED_MATMUL, "fp32 row scales, M <= 16"
)
# a dynamic M, after the few-rows kernel on the same C: the tiles where m > 16, nothing otherwise
GEMM_FP8_PER_TENSOR_MANY_ROWS = CudaKernel(
    "qmlir_gemm_fp8_per_tensor_many_rows", _FEW, OpKind.SCALED_MATMUL, "per-tensor FP8, M > 16"
)
GEMM_FP8_BLOCK_MANY_ROWS = CudaKernel(
    "qmlir_gemm_fp8_block_many_rows", _FEW, OpKind.SCALED_MATMUL, "fp32 block scales, M > 16"
)
GEMM_FP8_ROWWISE_MANY_ROWS = CudaKernel(
    "qmlir_gemm_fp8_rowwise_many_rows", _FEW, OpKind.SCALED_MATMUL, "fp32 row scales, M > 16"
)
GEMM_MXFP8 = CudaKernel("qmlir_gemm_mxfp8", _GEMM, OpKind.SCALED_MATMUL, "e8m0 scales, mx")
GEMM_NVFP4 = CudaKernel("qmlir_gemm_nvfp4", _GEMM, OpKind.SCALED_MATMUL, "nvfp4 scales, mx")
GEMM_MXFP8_FEW_ROWS = CudaKernel(
    "qmlir_gemm_mxfp8_few_rows", _FEW, OpKind.SCALED_MATMUL, "e8m0 scales, M <= 16"
)
GEMM_MXFP8_MANY_ROWS = CudaKernel(
    "qmlir_gemm_mxfp8_many_rows", _FEW, OpKind.SCALED_MATMUL, "e8m0 scales, M > 16"
)
GEMM_NVFP4_FEW_ROWS = CudaKernel(
    "qmlir_gemm_nvfp4_few_rows", _FEW, OpKind.SCALED_MATMUL, "nvfp4 scales, M <= 16"
)
GEMM_NVFP4_MANY_ROWS = CudaKernel(
    "qmlir_gemm_nvfp4_many_rows", _FEW, OpKind.SCALED_MATMUL, "nvfp4 scales, M > 16"
)

KERNELS: tuple[CudaKernel, ...] = (
    AMAX,
    FP8_SCALE,
    *QUANTIZE_FP8.values(),
    *QUANTIZE_FP8_DELAYED.values(),
    FP8_BLOCK1D,
    FP8_BLOCK1D_ROWWISE,
    FP8_BLOCK2D,
    FP8_ROWWISE,
    MXFP8,
    MXFP8_ROWWISE,
    NVFP4_DECODE_SCALE,
    NVFP4_QUANTIZE,
    GEMM_FP8_PER_TENSOR,
    GEMM_FP8_BLOCK,
    GEMM_FP8_ROWWISE,
    GEMM_FP8_PER_TENSOR_FEW_ROWS,
    GEMM_FP8_BLOCK_FEW_ROWS,
    GEMM_FP8_ROWWISE_FEW_ROWS,
    GEMM_FP8_PER_TENSOR_MANY_ROWS,
    GEMM_FP8_BLOCK_MANY_ROWS,
    GEMM_FP8_ROWWISE_MANY_ROWS,
    GEMM_MXFP8,
    GEMM_NVFP4,
    GEMM_MXFP8_FEW_ROWS,
    GEMM_MXFP8_MANY_ROWS,
    GEMM_NVFP4_FEW_ROWS,
    GEMM_NVFP4_MANY_ROWS,
)

# Family -> its entry points, in the order declared.
ENTRY_POINTS: dict[str, tuple[str, ...]] = {
    family.value: tuple(k.entry for k in KERNELS if k.family is family) for family in KernelFamily
}


# A kernel's block spanning a whole row, whatever its length (fp8-rowwise: 1 x cols)
WHOLE_ROW: Block = (1, 0)


@dataclass(frozen=True)
class FusedKernel:
    """A block quantize chain (``amax → compute_scale → quantize → swizzle``) one kernel does:
    its block (or :data:`WHOLE_ROW`), element format, swizzle layout, whether the swizzle
    transposes (a columnwise chain: blocks down dim 0; its kernel writes the rowwise outputs
    too), and the scale rules."""

    kernel: CudaKernel
    block: Block
    format: FloatFormat
    layout: ScaleLayout
    columnwise: bool
    rules: frozenset[ScaleRule]


_E8M0 = frozenset(r for r in ScaleRule if r.is_e8m0)
_FP8_RULE = frozenset({ScaleRule.FP8_BLOCK})
FUSED_KERNELS: tuple[FusedKernel, ...] = (
    FusedKernel(FP8_BLOCK1D_ROWWISE, (1, 128), E4M3, ScaleLayout.BLOCK1D, False, _FP8_RULE),
    FusedKernel(FP8_BLOCK2D, (128, 128), E4M3, ScaleLayout.BLOCK2D, False, _FP8_RULE),
    FusedKernel(FP8_ROWWISE, WHOLE_ROW, E4M3, ScaleLayout.BLOCK1D, False, _FP8_RULE),
    FusedKernel(MXFP8_ROWWISE, (1, 32), E4M3, ScaleLayout.MX, False, _E8M0),
    FusedKernel(
        NVFP4_QUANTIZE, (1, 16), E2M1, ScaleLayout.MX, False, frozenset({ScaleRule.NVFP4_BLOCK})
    ),
    FusedKernel(FP8_BLOCK1D, (128, 1), E4M3, ScaleLayout.BLOCK1D, True, _FP8_RULE),
    FusedKernel(MXFP8, (32, 1), E4M3, ScaleLayout.MX, True, _E8M0),
)


def kernel_block(block: Block | None, cols: int) -> Block | None:
    """The block a kernel is looked up by: a ``1 x cols`` block over a whole row of ``cols``
    columns is :data:`WHOLE_ROW` unless a kernel takes that block itself (``1 x 128``)."""
    if block is None or any(k.block == block for k in FUSED_KERNELS):
        return block
    return WHOLE_ROW if block == (1, cols) else block


def fused_kernel(
    block: Block | None,
    fmt: FloatFormat,
    layout: ScaleLayout,
    columnwise: bool,
    rule: ScaleRule,
    cols: int,
    *,
    exact_block: bool,
) -> FusedKernel | None:
    """The kernel of a chain with these attributes on an x of ``cols`` columns (``exact_block``:
    fusion matches on the block), or of a ``fused_quantize`` (its attributes are its lead chain's:
    with both outputs the rowwise one's, whose kernel is the combined, columnwise one; only a
    whole row's block tells its kernel by the block); None where no kernel takes it."""
    block = kernel_block(block, cols)
    for k in FUSED_KERNELS:
        if exact_block:
            same_block = k.block == block
        else:
            same_block = (k.block == WHOLE_ROW) == (block == WHOLE_ROW)
        key = (k.format, k.layout, k.columnwise)
        if same_block and key == (fmt, layout, columnwise) and rule in k.rules:
            return k
    return None
