"""cuda lowering of ``scaled_matmul`` onto the block-scaled GEMM kernels
(``gemm_block_scaled.cu``): "nt" operands (B as ``[N, K]``), E4M3 or packed E2M1 data.

IREE's own f8 matmul on cuda does not compile with a dynamic dim (TOOLCHAIN.md); this kernel
takes A with dynamic rows: M (``tensor.dim`` of A) is its ``m`` push constant and the workload of
the grid's y (128-row tiles for FP8, 64 for NVFP4). At M <= 16 (a decode step) the GEMMs run
kernels of their own (``*_few_rows``: 16 columns a workgroup over all of K); a dynamic M
launches two kernels on the same C, ``*_few_rows`` and then ``*_many_rows`` (the tiles), each
of which computes C where ``m`` is its case and returns at once otherwise, on the grid the
count region picks from M: the full grid for the kernel whose case it is, one workgroup for the
other."""

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
# Every GEMM at M <= FEW_ROWS (a decode step): 16 columns a workgroup over all of K, one
# workgroup row (the tiles would launch N/128 or N/64 workgroups and leave most SMs idle; the
# NVFP4 pair launches at its tiles' 128 threads). A static M picks the kernel here (few rows or
# tiles); a dynamic one launches the few-rows kernel and then the many-rows one (the tiles) on
# the same C, each on a grid the count region picks from M (a RowSwitch): its own where M is its
# case, one workgroup (which returns at once) otherwise.
# One kernel branching on m cost the tiles 17% (spills) and a one-row GEMM 1.5-1.8x (its
# registers and shared memory); IREE refuses a dispatch of no workgroups (RESULTS.md).
FEW_ROWS, FEW_ROWS_COLS = 16, 16
FEW_ROWS_KERNELS = {  # tiles -> (few rows, many rows)
    cuda_kernels.GEMM_FP8_PER_TENSOR: (
        cuda_kernels.GEMM_FP8_PER_TENSOR_FEW_ROWS,
        cuda_kernels.GEMM_FP8_PER_TENSOR_MANY_ROWS,
    ),
    cuda_kernels.GEMM_FP8_BLOCK: (
        cuda_kernels.GEMM_FP8_BLOCK_FEW_ROWS,
        cuda_kernels.GEMM_FP8_BLOCK_MANY_ROWS,
    ),
    cuda_kernels.GEMM_FP8_ROWWISE: (
        cuda_kernels.GEMM_FP8_ROWWISE_FEW_ROWS,
        cuda_kernels.GEMM_FP8_ROWWISE_MANY_ROWS,
    ),
    cuda_kernels.GEMM_MXFP8: (
        cuda_kernels.GEMM_MXFP8_FEW_ROWS,
        cuda_kernels.GEMM_MXFP8_MANY_ROWS,
    ),
    cuda_kernels.GEMM_NVFP4: (
        cuda_kernels.GEMM_NVFP4_FEW_ROWS,
        cuda_kernels.GEMM_NVFP4_MANY_ROWS,
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
    c_type = dyn_type(c_2d, Dims({0: m_rows}))
    launches = _launches(kernel, m, n, tile)
    externs = []
    for i, (chosen, grid) in enumerate(launches):
        last = i == len(launches) - 1
        name = "%c" if last else f"%c_{i}"
        # a launch after the first completes the previous one's C in place
        c_in = [(f"%c_{i - 1}", c_type)] if i else []
        ext = Extern(
            chosen.family.value,
            chosen.entry,
            (*operands, *c_in, *constants),
            (f"%c_{i - 1}" + c_type[len(c_type.split("{")[0]) :],) if i else (c_type,),
            name,
            grid,
            block=threads,
        )
        externs.append(extern_text(ext, arch))
    return definition(
        "scaled_matmul.mlir",
        head(op),
        scaling=op.attrs.scaling.value,
        kernel=" then ".join(chosen.entry for chosen, _ in launches),
        params=params,
        out_shape=shape_text(out.shape),
        flatten_a=reshape("%a", a, a_2d),
        sizes=m_rows.defs() + "".join(dims.defs() for dims in operand_dims),
        M=i32(m),
        N=n,
        K=k,
        extra_constants=i32_constants(extra),
        extern="".join(externs),
        unflatten_c=reshape("%c", c_2d, out),
    )


def _launches(
    kernel: CudaKernel, m: Size, n: int, tile: int
) -> list[tuple[CudaKernel, tuple[GridDim, GridDim]]]:
    """The kernels a GEMM of M rows launches, in order, with their grids (x along N, y along M):
    the tiles (``ceil(N / tile)`` x ``ceil(M / tile)``), or for the FP8 kernels at a static M <=
    FEW_ROWS the few-rows kernel (``ceil(N / 16)`` x 1), and at a dynamic M both, each on its
    grid where M is its case and on one workgroup otherwise."""
    many = ceil_div(n, tile)
    if kernel not in FEW_ROWS_KERNELS:
        return [(kernel, (many, tiles(m, tile)))]
    few_rows, many_rows = FEW_ROWS_KERNELS[kernel]
    few = ceil_div(n, FEW_ROWS_COLS)
    if isinstance(m, str):
        return [
            (few_rows, (RowSwitch(m, FEW_ROWS, few, 1), 1)),
            (many_rows, (RowSwitch(m, FEW_ROWS, 1, many), tiles(m, tile))),
        ]
    return [(few_rows, (few, 1))] if m <= FEW_ROWS else [(kernel, (many, tiles(m, tile)))]


def _contraction(op: NamedOp) -> int:
    """K: A's last dim (in elements)."""
    return signature(op)[0][0].shape[-1]


def _gemm_kernel(op: NamedOp) -> tuple[CudaKernel | None, dict[str, int]]:
    if op.attrs.scaling is Scaling.PER_TENSOR:
        return cuda_kernels.GEMM_FP8_PER_TENSOR, {}
    scale_format = op.attrs.scale_format
    layouts = (op.attrs.a_layout, op.attrs.b_layout)
    block_layouts = {ScaleLayout.BLOCK1D, ScaleLayout.BLOCK2D}
    k_blocks = {op.attrs.a_block[1], op.attrs.b_block[1]} if op.attrs.a_block else set()
    if scale_format is ScaleFormat.FP32 and set(layouts) <= block_layouts and k_blocks == {128}:
        dims = {
            f"{p}_dims": 2 if lay is ScaleLayout.BLOCK2D else 1
            for p, lay in zip("ab", layouts, strict=True)
        }
        return cuda_kernels.GEMM_FP8_BLOCK, dims
    rows_1d = layouts == (ScaleLayout.BLOCK1D, ScaleLayout.BLOCK1D)
    if scale_format is ScaleFormat.FP32 and rows_1d and k_blocks == {_contraction(op)}:
        return cuda_kernels.GEMM_FP8_ROWWISE, {}  # fp8-rowwise: a scale a row over all of K
    mx = layouts == (ScaleLayout.MX, ScaleLayout.MX)
    fp8 = op.attrs.a_format == E4M3 and op.attrs.b_format == E4M3
    if scale_format is ScaleFormat.E8M0 and mx and fp8:  # not E2M1 codes (mxfp4's)
        return cuda_kernels.GEMM_MXFP8, {}
    if scale_format is ScaleFormat.NVFP4 and mx:
        return cuda_kernels.GEMM_NVFP4, {}
    return None, {}
