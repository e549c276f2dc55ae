"""llvm-cpu lowering of the FP8 block-scaled GEMMs: each operand decoded and multiplied by its
block's scale (FP32 ``scale_inv`` in the block1d/block2d layouts, or E8M0 in the mx layout), then
an f32 matmul. NVFP4's GEMM is in ``nvfp4.py``."""

from __future__ import annotations

from dataclasses import dataclass, replace

from passes.base.errors import QmlirError
from passes.base.numbers import ceil_div
from passes.ir.dialect import NamedOp, ScaleFormat
from passes.ir.formats import FloatFormat
from passes.ir.layouts import ScaleLayout
from passes.ir.types import TensorInfo, shape_text
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import definition, narrowed, template
from passes.lowering.cpu.decoded_gemm import decoded_gemm
from passes.lowering.cpu.swizzle import scale_grid
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, row_signature

# E8M0 scales the GEMM reads as the [rows, K blocks] grid: swizzled (mx) or compact
_GRID_LAYOUTS = {ScaleLayout.MX, ScaleLayout.COMPACT}


@dataclass(frozen=True)
class _Operand:
    """One operand of the GEMM as its decode reads it: codes ``[rows, K]`` (``k_dim`` 1) or
    ``[K, rows]`` (``k_dim`` 0), blocks of ``block`` = (rows, K) elements, and its scales:
    ``scales`` of type ``scale_type`` (``[K blocks, rows]`` in the block1d layout, ``[rows
    blocks, K blocks]`` otherwise)."""

    prefix: str
    codes: str
    info: TensorInfo
    rows: Dim
    k_dim: int
    block: tuple[int, int]
    fmt: FloatFormat
    scales: str
    scale_type: TensorInfo
    layout: ScaleLayout
    rows_exact: bool = False  # block1d scales sliced to the rows (:meth:`padded_scale_rows`)

    @property
    def row_dim(self) -> int:
        return 1 - self.k_dim

    @property
    def k(self) -> int:
        return self.info.shape[self.k_dim]

    def scale_order(self) -> tuple[str, str]:
        """The scales' dims as (rows or row blocks, K blocks) names: ``r``/``b`` in the view."""
        return ("b", "r") if self.layout is ScaleLayout.BLOCK1D else ("r", "b")

    def viewable(self) -> bool:
        """Whether K holds whole blocks of one row each (and perhaps a partial one), so the
        decode can read the whole blocks as ``[rows, K blocks, bk]`` and each block's scale
        through an affine map (the scales' shape must then be exactly the block grid: the
        block1d layout pads rows to 4)."""
        br, bk = self.block
        if self.k_dim != 1 or br != 1 or self.k < bk:
            return False
        grid = (self.rows.count, ceil_div(self.k, bk))
        if self.layout is ScaleLayout.BLOCK1D:
            grid = (grid[1], grid[0])
            if self.rows.dynamic and not self.rows_exact:
                return False  # padded to a multiple of 4 at run time
        return self.scale_type.shape == grid

    def padded_scale_rows(self) -> bool:
        """Whether the scales are block1d ``[K blocks, rows padded to 4]`` of whole-row blocks
        (a dynamic row count is padded at run time), so that a slice of the rows makes them the
        block grid :meth:`viewable` reads."""
        br, bk = self.block
        if self.layout is not ScaleLayout.BLOCK1D or self.rows_exact or self.k_dim != 1:
            return False
        if br != 1 or self.k < bk or self.scale_type.shape[0] != ceil_div(self.k, bk):
            return False
        return self.rows.dynamic or self.scale_type.shape[1] != self.rows.count

    def scale_grid(self, blocks: int) -> TensorInfo:
        """The scales of ``blocks`` K blocks of every row, in this operand's layout."""
        shape = (self.rows.count, blocks)
        if self.layout is ScaleLayout.BLOCK1D:
            shape = (blocks, self.rows.count)
        return TensorInfo(shape, self.scale_type.dtype)

    def scale_slice(self, first: int, blocks: int) -> tuple[str, str]:
        """``(offsets, sizes)`` of ``tensor.extract_slice`` taking K blocks ``first`` on."""
        if self.layout is ScaleLayout.BLOCK1D:
            return f"{first}, 0", f"{blocks}, {self.rows.size}"
        return f"0, {first}", f"{self.rows.size}, {blocks}"


def _dequant(operand: _Operand, scale_format: ScaleFormat) -> str:
    p = operand.prefix
    decode = snippets.decode(p, operand.fmt)
    if scale_format is ScaleFormat.FP32:
        return template("dequant_block_fp32.mlir").substitute(p=p, decode=decode)
    ldexp = snippets.ldexp(f"{p}l_", f"%{p}val", f"%{p}shift")
    return template("dequant_block_e8m0.mlir").substitute(p=p, decode=decode, ldexp=ldexp)


def _fields(operand: _Operand, scale_format: ScaleFormat, gemm: str) -> dict[str, object]:
    """The fields every decode template of ``operand`` takes."""
    p = operand.prefix
    narrow, value = narrowed(p, f"%{p}deq", gemm)
    return {
        "p": p,
        "codes": operand.codes,
        "shape": shape_text(operand.info.shape),
        "gemm": gemm,
        "sizes": operand.rows.empty if operand.k_dim == 1 else "",
        "rows_size": operand.rows.size,
        "scales": operand.scales,
        "scale_type": str(operand.scale_type.builtin()),
        "scale_elem": operand.scale_type.dtype,
        "scale_doc": f"{scale_format.value} scales, {operand.layout.value} layout",
        "dequant": _dequant(operand, scale_format),
        "narrow": narrow,
        "yield": value,
    }


def _view(operand: _Operand, scale_format: ScaleFormat, gemm: str) -> str:
    """``operand`` of whole blocks decoded as ``[rows, K blocks, bk]``."""
    bk = operand.block[1]
    sizes = operand.rows.braces
    kb = operand.k // bk
    return template("block_decode_view.mlir").substitute(
        _fields(operand, scale_format, gemm),
        Kb=kb,
        bk=bk,
        view=shape_text((operand.rows.count, kb, bk)),
        view_sizes=sizes,
        scale_sizes=sizes if not operand.scale_type.is_static else "",
        scale_index=", ".join(operand.scale_order()),
    )


def _decode(operand: _Operand, scale_format: ScaleFormat, gemm: str) -> str:
    """The ops decoding ``operand`` into ``%<prefix>f32``, the GEMM's ``gemm`` operand."""
    p = operand.prefix
    br, bk = operand.block
    if operand.padded_scale_rows():
        grid = operand.scale_grid(ceil_div(operand.k, bk))
        sliced = template("block_scales_rows.mlir").substitute(
            p=p,
            scales=operand.scales,
            scale_type=str(operand.scale_type.builtin()),
            grid_type=str(grid.builtin()),
            kb=grid.shape[0],
            rows=operand.rows.size,
        )
        exact = replace(operand, scales=f"%{p}row_scales", scale_type=grid, rows_exact=True)
        return sliced + _decode(exact, scale_format, gemm)
    if not operand.viewable():
        rb, kb_name = f"%{p}rb", f"%{p}kb"
        layout = operand.layout
        read = f"{kb_name}, {rb}" if layout is ScaleLayout.BLOCK1D else f"{rb}, {kb_name}"
        scale = template("block_scale_index.mlir").substitute(
            p=p,
            layout=layout.value,
            row_dim=operand.row_dim,
            k_dim=operand.k_dim,
            bk=bk,
            br=br,
            scales=operand.scales,
            read=read,
            scale_type=str(operand.scale_type.builtin()),
            scale_elem=operand.scale_type.dtype,
        )
        return template("block_decode_index.mlir").substitute(
            _fields(operand, scale_format, gemm), scale=scale
        )
    whole, rest = divmod(operand.k, bk)
    if rest == 0:
        return _view(operand, scale_format, gemm)
    rows = operand.rows.count
    head = replace(
        operand,
        prefix=f"{p}h_",
        codes=f"%{p}head_codes",
        info=TensorInfo((rows, whole * bk), "i8"),
        scales=f"%{p}head_scales",
        scale_type=operand.scale_grid(whole),
    )
    tail = replace(
        operand,
        prefix=f"{p}t_",
        codes=f"%{p}tail_codes",
        info=TensorInfo((rows, rest), "i8"),
        scales=f"%{p}tail_scales",
        scale_type=operand.scale_grid(1),
    )
    tail_index = "0, r" if operand.layout is ScaleLayout.BLOCK1D else "r, 0"
    head_sizes = operand.scale_slice(0, whole)[1]
    tail_offsets, tail_sizes = operand.scale_slice(whole, 1)
    return template("block_decode_split.mlir").substitute(
        _fields(operand, scale_format, gemm),
        Kw=whole,
        bk=bk,
        t=rest,
        K_head=whole * bk,
        head_shape=shape_text(head.info.shape),
        tail_shape=shape_text(tail.info.shape),
        head_scale_sizes=head_sizes,
        head_scale_type=str(head.scale_type.builtin()),
        tail_scale_offsets=tail_offsets,
        tail_scale_sizes=tail_sizes,
        tail_scale_type=str(tail.scale_type.builtin()),
        head=_view(head, scale_format, gemm),
        tail=template("block_decode_tail.mlir").substitute(
            _fields(tail, scale_format, gemm), t=rest, scale_index=tail_index
        ),
    )


def lower_block_scaled_matmul(op: NamedOp) -> str:
    (a, sa, b, sb), (out,), rows = row_signature(op, "%a")
    scale_format = op.attrs.scale_format
    a_layout, b_layout = op.attrs.a_layout, op.attrs.b_layout
    transposed = op.attrs.b_transposed
    a_block, b_block = op.attrs.a_block, op.attrs.b_block
    k = a.shape[1]
    n = b.shape[0] if transposed else b.shape[1]
    kb = ceil_div(k, a_block[1])
    # b's blocks in S[n, k_block] terms: (rows per block, K per block)
    b_block_rk = b_block if transposed else (b_block[1], b_block[0])
    a_fmt, b_fmt = op.attrs.a_format, op.attrs.b_format
    if scale_format is ScaleFormat.FP32:
        a_scales, b_scales = ("%sa", sa), ("%sb", sb)
        unswizzled = ("", "")
    elif scale_format is ScaleFormat.E8M0 and {a_layout, b_layout} <= _GRID_LAYOUTS:
        # the scales read back as compact [rows, K blocks] (%a_S, %b_S)
        a_scales = ("%a_S", TensorInfo((rows.count, kb), "i8"))
        b_scales = ("%b_S", TensorInfo((n, kb), "i8"))
        unswizzled = (
            scale_grid("a_", "%sa", str(sa.builtin()), rows, kb, a_layout),
            scale_grid("b_", "%sb", str(sb.builtin()), Dim(n), kb, b_layout),
        )
    else:
        raise QmlirError(f"no CPU lowering for scaled_matmul @{op.name}")
    operands = (
        _Operand("a_", "%a", a, rows, 1, a_block, a_fmt, *a_scales, a_layout),
        _Operand(
            "b_", "%b", b, Dim(n), 1 if transposed else 0, b_block_rk, b_fmt, *b_scales, b_layout
        ),
    )
    decoded = [_decode(operand, scale_format, op.attrs.operand_type) for operand in operands]
    layouts = a_layout.value if a_layout is b_layout else f"{a_layout.value}/{b_layout.value}"
    product, called = decoded_gemm(op, a, b, out, transposed)
    return called + definition(
        "scaled_matmul_block.mlir",
        head(op),
        scale_format=scale_format.value,
        layout=layouts,
        a_shape=shape_text(a.shape),
        b_shape=shape_text(b.shape),
        sa_type=str(sa.builtin()),
        sb_type=str(sb.builtin()),
        out_shape=shape_text(out.shape),
        m_defs=rows.defs(),
        m=rows.empty,
        gemm=op.attrs.operand_type,
        decode_a=decoded[0],
        decode_b=decoded[1],
        unswizzle_a=unswizzled[0],
        unswizzle_b=unswizzled[1],
        contraction=product,
    )
