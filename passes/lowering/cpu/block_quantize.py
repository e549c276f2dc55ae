"""llvm-cpu lowerings of the block FP8 casts: FP32 block scales (fp8-block: ``x * scale``) and
E8M0 scales (MXFP8: ``x * 2^(127 - e)``). NVFP4's cast is in ``nvfp4.py``, cuDNN's divide in
``cudnn.py``.

Where blocks are one row each (an activation's 1 x bk blocks), x's whole blocks are read as
rows ``[M * K blocks, bk]``, each element's block scale a broadcast of its row's entry in the
flattened scales, with the streaming tiling of ``tiling.elementwise_blocks``
(``block_quantize_view.mlir``), and a partial last block with its row's last scale
(``block_quantize_tail.mlir``). Blocks of several rows tiling a static x whole
(fp8-block's 128 x 128 weight blocks) read x as its tiles, each scale a broadcast
(``block_quantize_tiles.mlir``); other blocks read their scale by index
(``block_quantize_index.mlir``)."""

from __future__ import annotations

from passes.ir.dialect import NamedOp
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import block_params, definition, template
from passes.lowering.cpu.tiling import elementwise_blocks
from passes.lowering.dims import Dim, row_signature


def _view(fields: dict[str, object], rows: Dim, p: str, k: int, bk: int, **names: str) -> str:
    """``block_quantize_view.mlir`` over ``k`` columns (whole blocks of ``bk``) of ``x``."""
    kb = k // bk
    blocks = rows.scaled_dim(f"{p}blocks", kb)  # the rows of the [M * K blocks, bk] view
    return template("block_quantize_view.mlir").substitute(
        fields,
        p=p,
        K=k,
        Kb=kb,
        N=rows.scaled_type(k),
        R=rows.scaled_type(kb),
        R_size=blocks.size,
        r_defs=rows.derive((f"{p}blocks", kb, 1)),
        r_empty=blocks.empty,
        r_braces=blocks.braces,
        tiling=elementwise_blocks(None if rows.dynamic else rows.count * kb, bk),
        **names,
    )


def _data(
    op: NamedOp, k: int, params: dict[str, object], rows: Dim, element: str, result: str, elem: str
) -> str:
    """``%data``: x (K columns) cast per element by ``element`` (yielding ``result``), its
    block's scale ``%s`` of type ``elem`` in scope."""
    fields = {**params, "element": element, "result": result, "scale_elem": elem}
    bm, bk = op.attrs.block
    if bm != 1 and not rows.dynamic and rows.count % bm == 0 and k % bk == 0:
        return template("block_quantize_tiles.mlir").substitute(fields)
    if bm != 1 or k < bk:
        return template("block_quantize_index.mlir").substitute(fields)
    fields["M_size"] = rows.size
    whole, rest = divmod(k, bk)
    if rest == 0:
        return _view(fields, rows, "", k, bk, x="%x", scale="%scale")
    head = _view(fields, rows, "h_", whole * bk, bk, x="%x_head", scale="%scale_head")
    tail = template("block_quantize_tail.mlir").substitute(
        fields, p="t_", x="%x_tail", scale="%scale_tail", K=rest
    )
    return template("block_quantize_split.mlir").substitute(
        fields, Kw=whole, K_head=whole * bk, t=rest, head=head, tail=tail
    )


def lower_quantize_fp32_scales(op: NamedOp) -> str:
    (x, scale), _, rows = row_signature(op)
    params = block_params(op, x, scale, rows)
    return definition(
        "quantize_block_fp32.mlir",
        params,
        data=_data(
            op,
            x.shape[1],
            params,
            rows,
            snippets.encode(op.attrs.format, prefix="q_"),
            "%q_byte",
            "f32",
        ),
        reciprocal=snippets.reciprocal(),
    )


def lower_quantize_e8m0_scales(op: NamedOp) -> str:
    (x, scale), _, rows = row_signature(op)
    fmt = op.attrs.format
    params = block_params(op, x, scale, rows)
    element = template("quantize_e8m0_element.mlir").substitute(
        p="q_",
        x="%xv",
        s="%s",
        encode=snippets.encode(fmt, x="%q_x_in", s="%q_mult", prefix="q_"),
        nan_code=fmt.nan_code,
    )
    return definition(
        "quantize_block_e8m0.mlir",
        params,
        data=_data(op, x.shape[1], params, rows, element, "%q_result", "i8"),
    )
