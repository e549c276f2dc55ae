"""cuda lowering of ``scaled_matmul`` onto the block-scaled GEMM kernels
(``gemm_block_scaled.cu``): "nt" operands (B as ``[N, K]``), E4M3 or packed E2M1 data.

IREE's own f8 matmul on cuda does not compile with a dynamic dim (TOOLCHAIN.md); this kernel
takes A with dynamic rows: M (``tensor.dim`` of A) is its ``m`` push constant and the workload of
the grid's y (128-row tiles for FP8, 64 for NVFP4). At M <= 16 (a decode step) the FP8 GEMMs
run kernels of their own (``*_few_rows``: 16 columns a workgroup over all of K); a dynamic M
runs ``*_any_rows``, which take that path or the tiles by their ``m``, on the grid the count
region picks from M."""

from __future__ import annotations

import math

from passes.base.numbers import ceil_div
from passes.ir import cuda_kernels
from passes.ir.cuda_kernels import CudaKernel
from passes.ir.dialect import NamedOp, ScaleFormat, Scaling
from passes.ir.formats import E2M1, E4M3
from passes.ir.layouts import ScaleLayout
from passes.ir.types import DYNAMIC, TensorInfo, shape_text
from passes.lowering.cuda.common import (
    dyn_type,
    i32,
    i32_constants,
    reshape,
    signature,
    tiles,
    ttype,
)
from passes.lowering.cuda.kernels import (
    CudaLowering,
    Extern,
    GridDim,
    RowSwitch,
    definition,
    extern_text,
)
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, Dims, Size

# gemm_block_scaled.cu's launch per kernel: (output tile rows = columns, threads per workgroup)
FP8_LAUNCH = (128, 256)  # 8 warps, 3-stage cp.async pipeline
NVFP4_LAUNCH = (64, 128)  # 4 warps, dequantized to f16 in shared memory
# FP8 at M <= FEW_ROWS (a decode step): 16 columns a workgroup over all of K, one workgroup row
# (the 128-row tiles would launch N/128 workgroups and leave most SMs idle). A static M picks
# the kernel here (few rows or tiles); a dynamic one runs the any-rows kernel, which branches on
# its m, on a grid the count region picks from M (a RowSwitch).
FEW_ROWS, FEW_ROWS_COLS = 16, 16
FEW_ROWS_KERNELS = {  # tiles -> (few rows, any rows)
    cuda_kernels.GEMM_FP8_PER_TENSOR: (
        cuda_kernels.GEMM_FP8_PER_TENSOR_FEW_ROWS,
        cuda_kernels.GEMM_FP8_PER_TENSOR_ANY_ROWS,
    ),
    cuda_kernels.GEMM_FP8_BLOCK: (
        cuda_kernels.GEMM_FP8_BLOCK_FEW_ROWS,
        cuda_kernels.GEMM_FP8_BLOCK_ANY_ROWS,
    ),
}


def gemm_launch(kernel: CudaKernel) -> tuple[int, int]:
    """The output tile (rows = columns) and the block size of a GEMM kernel."""
    return NVFP4_LAUNCH if kernel is cuda_kernels.GEMM_NVFP4 else FP8_LAUNCH


def select_scaled_matmul(op: NamedOp) -> CudaLowering | None:
    """The kernel's launch, or None (the llvm-cpu body) where no kernel takes the operands."""
    if not op.attrs.b_transposed:
        return None
    ins, _ = signature(op)
    b = ins[len(ins) // 2]
    if b.rank != 2 or {op.attrs.a_format, op.attrs.b_format} - {E4M3, E2M1}:
        return None
    kernel, _ = _gemm_kernel(op)
    return lower_scaled_matmul if kernel is not None else None


def lower_scaled_matmul(op: NamedOp, arch: str) -> str:
    ins, (out,) = signature(op)
    a, b = ins[0], ins[len(ins) // 2]
    kernel, extra = _gemm_kernel(op)
    assert kernel is not None, op.name
    rows = DYNAMIC if not a.is_static else math.prod(a.shape[:-1])
    a_2d = TensorInfo((rows, a.shape[-1]), a.dtype)
    m_rows = Dim.rows("%a_2d", a_2d)
    m = m_rows.value
    n = b.shape[0]
    packed = op.attrs.a_format == E2M1
    k = a.shape[-1] * (2 if packed else 1)
    c_2d = TensorInfo((rows, n), "f32")
    names = ["%a"] + [f"%in{i}" for i in range(1, len(ins))]
    params = ", ".join(f"{nm}: {ttype(t)}" for nm, t in zip(names, ins, strict=True))
    operand_dims = [Dims.read(nm, t) for nm, t in zip(names[1:], ins[1:], strict=True)]
    operands = [("%a_2d", dyn_type(a_2d, Dims({0: m_rows})))] + [
        (nm, dyn_type(t, dims))
        for nm, t, dims in zip(names[1:], ins[1:], operand_dims, strict=True)
    ]
    constants = [("%m", "i32"), ("%n", "i32"), ("%k", "i32")]
    constants += [(f"%{key}", "i32") for key in extra]
    tile, threads = gemm_launch(kernel)
    kernel, grid_x = _rows_kernel(kernel, m, n, tile)
    ext = Extern(
        kernel.family.value,
        kernel.entry,
        (*operands, *constants),
        (dyn_type(c_2d, Dims({0: m_rows})),),
        "%c",
        (grid_x, tiles(m, tile)),
        block=threads,
    )
    return definition(
        "scaled_matmul.mlir",
        head(op),
        scaling=op.attrs.scaling.value,
        kernel=kernel.entry,
        params=params,
        out_shape=shape_text(out.shape),
        flatten_a=reshape("%a", a, a_2d),
        sizes=m_rows.defs() + "".join(dims.defs() for dims in operand_dims),
        M=i32(m),
        N=n,
        K=k,
        extra_constants=i32_constants(extra),
        extern=extern_text(ext, arch),
        unflatten_c=reshape("%c", c_2d, out),
    )


def _rows_kernel(kernel: CudaKernel, m: Size, n: int, tile: int) -> tuple[CudaKernel, GridDim]:
    """The FP8 kernel for M rows and its workgroups along N: the tiles (``ceil(N / tile)``), the
    few-rows kernel at a static M <= FEW_ROWS (``ceil(N / 16)``), or for a dynamic M the
    any-rows kernel on the grid of the path its ``m`` takes. Other kernels: tiles at any M."""
    many = ceil_div(n, tile)
    if kernel not in FEW_ROWS_KERNELS:
        return kernel, many
    few_rows, any_rows = FEW_ROWS_KERNELS[kernel]
    few = ceil_div(n, FEW_ROWS_COLS)
    if isinstance(m, str):
        return any_rows, RowSwitch(m, FEW_ROWS, few, many)
    return (few_rows, few) if m <= FEW_ROWS else (kernel, many)


def _gemm_kernel(op: NamedOp) -> tuple[CudaKernel | None, dict[str, int]]:
    if op.attrs.scaling is Scaling.PER_TENSOR:
        return cuda_kernels.GEMM_FP8_PER_TENSOR, {}
    scale_format = op.attrs.scale_format
    layouts = (op.attrs.a_layout, op.attrs.b_layout)
    block_layouts = {ScaleLayout.BLOCK1D, ScaleLayout.BLOCK2D}
    if scale_format is ScaleFormat.FP32 and set(layouts) <= block_layouts:
        dims = {
            f"{p}_dims": 2 if lay is ScaleLayout.BLOCK2D else 1
            for p, lay in zip("ab", layouts, strict=True)
        }
        return cuda_kernels.GEMM_FP8_BLOCK, dims
    mx = layouts == (ScaleLayout.MX, ScaleLayout.MX)
    if scale_format is ScaleFormat.E8M0 and mx:
        return cuda_kernels.GEMM_MXFP8, {}
    if scale_format is ScaleFormat.NVFP4 and mx:
        return cuda_kernels.GEMM_NVFP4, {}
    return None, {}
