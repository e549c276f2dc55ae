"""cuda lowering of ``fused_quantize`` (fuse-quantize-core): one kernel launch writes an
activation's data and GEMM-ready scales, rowwise, columnwise or both.

An activation with dynamic rows (``tensor.dim`` of x) takes the rowwise kernels: the rows are
their ``rows`` push constant and the workload of the grid's y (tiles of rows); the outputs' sizes
follow from them (the data's rows, the scales' padded rows)."""

from __future__ import annotations

from passes.base.errors import QmlirError
from passes.base.numbers import ceil_div, f32_bits
from passes.ir.cuda_kernels import FP8_ROWWISE, KernelFamily, fused_kernel
from passes.ir.dialect import FusedOutputs, NamedOp, ScaleRule, Scaling
from passes.ir.layouts import MX_TILE_ROWS, ScaleLayout, pad4, swizzled_shape
from passes.ir.types import TensorInfo
from passes.lowering.cuda.common import dyn_type, i32, i32_constants, signature, tiles, ttype
from passes.lowering.cuda.kernels import Extern, GridDim, definition, extern_text
from passes.lowering.cuda.per_tensor import lower_per_tensor_cast
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, Dims, Size

ROWWISE_ROWS = 8  # qmlir_quantize_fp8_rowwise: a warp a row, 8 warps a workgroup

# qmlir_quantize_mxfp8*'s `rule` constant
_E8M0_RULE_CODES = {
    ScaleRule.E8M0_CEIL: 0,
    ScaleRule.E8M0_FLOOR: 1,
    ScaleRule.E8M0_RNE: 2,
    ScaleRule.E8M0_EVEN: 3,
}


def lower_fused_quantize(op: NamedOp, arch: str) -> str:
    """x [rows, cols] → data and GEMM-ready scales, rowwise (default), columnwise, or both
    (``outputs``: the combined kernels write both; for the columnwise alone, the rowwise
    outputs are written and dropped). fp8-delayed's per-tensor one: cast + amax."""
    if op.attrs.scaling is Scaling.PER_TENSOR:
        return lower_per_tensor_cast(op, arch, delayed=True)
    ins, outs = signature(op)
    x = ins[0]
    rows = Dim.rows("%x", x)
    cols = x.shape[1]
    outputs = op.attrs.writes
    kernel, family, extra = _fused_kernel(op, outputs is not FusedOutputs.ROWWISE)
    m_defs, out_sizes = _dynamic_sizes(op, rows, cols) if rows.dynamic else ("", None)
    m = rows.value
    kernel_outs = list(outs)
    if outputs is FusedOutputs.COLUMNWISE:
        kernel_outs = _rowwise_outputs(family, rows.count, cols) + kernel_outs
    returned = range(len(kernel_outs) - len(outs), len(kernel_outs))
    out_types = [ttype(t) for t in kernel_outs]
    if out_sizes is not None:
        out_types = [dyn_type(t, d) for t, d in zip(kernel_outs, out_sizes, strict=True)]
    names = ["%x", "%global_amax"][: len(ins)]
    params = ", ".join(f"{nm}: {ttype(t)}" for nm, t in zip(names, ins, strict=True))
    constants = [("%rows", "i32"), ("%cols", "i32")] + [(f"%{key}", "i32") for key in extra]
    in_sizes = [Dims({0: rows}), Dims()][: len(ins)]  # x's rows; the global amax is a scalar
    ext = Extern(
        family,
        kernel,
        (
            *((nm, dyn_type(t, d)) for nm, t, d in zip(names, ins, in_sizes, strict=True)),
            *constants,
        ),
        tuple(out_types),
        "%q",
        _fused_grid(kernel, family, m, cols),
    )
    return definition(
        "fused_quantize.mlir",
        head(op),
        rule=op.attrs.rule.value,
        format=op.attrs.format.name,
        layout=op.attrs.layout.value,
        outputs=outputs.value,
        kernel=kernel,
        params=params,
        result_types=", ".join(ttype(t) for t in outs),
        m_defs=m_defs,
        rows=i32(m),
        cols=cols,
        extra_constants=i32_constants(extra),
        extern=extern_text(ext, arch),
        results=", ".join(f"%q#{i}" for i in returned),
    )


def _rowwise_outputs(family: str, rows: int, cols: int) -> list[TensorInfo]:
    """The combined kernels' rowwise data and scales (README.md), written first."""
    data = TensorInfo((rows, cols), "i8")
    if family == KernelFamily.BLOCK_FP8.value:  # sinv_row [ceil(cols/128), pad4(rows)]
        return [data, TensorInfo((ceil_div(cols, 128), pad4(rows)), "f32")]
    scales = swizzled_shape(ScaleLayout.MX, rows, ceil_div(cols, 32))
    return [data, TensorInfo(scales, "i8")]


def _dynamic_sizes(op: NamedOp, rows: Dim, cols: int) -> tuple[str, list[Dims]]:
    """Dynamic rows (the rowwise kernels only): the lines reading them from x and sizing the
    scales, and the data's and the scales' dynamic dims by position."""
    if op.attrs.writes is not FusedOutputs.ROWWISE:
        raise QmlirError(
            f"named op @{op.name}: dynamic rows take the rowwise kernels only, "
            f"not {op.attrs.writes.value}"
        )
    layout = op.attrs.layout
    k_blocks = ceil_div(cols, op.attrs.block[1])
    if layout is ScaleLayout.MX:  # pad128(rows) x pad4(k_blocks) bytes, in 128x4 tiles
        scaled, at = ("scales", 1, MX_TILE_ROWS, pad4(k_blocks)), 0
    elif layout is ScaleLayout.BLOCK1D:  # [k_blocks, pad4(rows)]
        scaled, at = ("scales", 1, 4), 1
    else:
        raise QmlirError(f"named op @{op.name}: dynamic rows take 1-row blocks, not {layout.value}")
    return rows.defs(scaled), [Dims({0: rows}), Dims({at: rows.scaled_dim(*scaled)})]


def _fused_kernel(op: NamedOp, columnwise: bool) -> tuple[str, str, dict[str, int]]:
    """The kernel's entry point, its family and its extra ``i32`` constants."""
    rule = op.attrs.rule
    cols = signature(op)[0][0].shape[1]
    attrs = op.attrs
    found = fused_kernel(
        attrs.block, attrs.format, attrs.layout, columnwise, rule, cols, exact_block=False
    )
    if found is None:
        raise QmlirError(f"no cuda kernel for fused_quantize @{op.name}")
    extra: dict[str, int] = {}
    if rule is ScaleRule.FP8_BLOCK:
        extra = {"pow2": int(op.attrs.pow2), "eps_bits": f32_bits(op.attrs.epsilon)}
    elif rule.is_e8m0:
        extra = {"rule": _E8M0_RULE_CODES[rule]}
    return found.kernel.entry, found.kernel.family.value, extra


def _fused_grid(kernel: str, family: str, rows: Size, cols: int) -> tuple[int, GridDim]:
    """Workgroups per tile: 128x128 (block_fp8) or 32 rows x 128 columns (mxfp8, nvfp4); for
    fp8-rowwise's whole rows, 8 rows (a warp each) a workgroup."""
    if kernel == FP8_ROWWISE.entry:
        return (1, tiles(rows, ROWWISE_ROWS))
    tile_rows = 128 if family == KernelFamily.BLOCK_FP8.value else 32
    return (ceil_div(cols, 128), tiles(rows, tile_rows))
