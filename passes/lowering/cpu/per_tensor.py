"""llvm-cpu lowerings of the per-tensor named ops (fp8-current, fp8-delayed): amax, the FP8
scale, the cast, the GEMM, and delayed scaling's history update. An activation's amax, cast and
GEMM take dynamic dims (its rows, for a dynamic batch or sequence): ``tensor.dim`` of the
argument sizes each ``tensor.empty``; a static op's text is as it was."""

from __future__ import annotations

import math
from collections.abc import Callable

from passes.base.numbers import f32_bits, f32_hex, f64_hex
from passes.ir.dialect import AmaxComputeAlgo, NamedOp, ScaleRule
from passes.ir.types import DYNAMIC, TensorInfo, shape_text
from passes.lowering.cpu import snippets
from passes.lowering.cpu.block_amax import block_rows_bits, rowwise_block_amax_sibling
from passes.lowering.cpu.common import (
    definition,
    dims,
    elementwise,
    fragment,
    gemm_operand_fields,
    iterators,
)
from passes.lowering.cpu.decoded_gemm import decoded_gemm
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, Dims, x_rows_dynamic


def lower_amax(op: NamedOp) -> str:
    """max |x| over the whole tensor (NaN ignored)."""
    (x,), _ = op.signature(dynamic=x_rows_dynamic(op))
    if x.rank < 2:
        return definition("amax.mlir", elementwise(op, x.shape))
    bk = rowwise_block_amax_sibling(op, x.shape) if x.dtype == "f32" else None
    if bk is not None:  # x's block amax too (nvfp4): share its block reduction
        rows, k = Dim.rows("%x", x), x.shape[1]
        return definition(
            "amax_via_blocks.mlir",
            head(op),
            M=rows,
            K=k,
            Kb=k // bk,
            bk=bk,
            m_defs=rows.defs(),
            m=rows.empty,
            block_bits=block_rows_bits(rows, k, bk),
        )
    # rank >= 2: per row of the [rows, last dim] view, then over the rows (spreads over cores)
    rows = DYNAMIC if DYNAMIC in x.shape[:-1] else math.prod(x.shape[:-1])
    view = TensorInfo((rows, x.shape[-1]), x.dtype)
    collapse = ""  # rank 2: x is the view
    if x.rank > 2:
        collapse = fragment(
            "amax_rows_collapse.mlir",
            groups=f"[{', '.join(str(i) for i in range(x.rank - 1))}], [{x.rank - 1}]",
            shape=shape_text(x.shape),
            view=shape_text(view.shape),
        )
    rows_name = "%x_rows" if collapse else "%x"
    view_dims = Dims.read(rows_name, view)  # no lines when static
    return definition(
        "amax_rows.mlir",
        elementwise(op, x.shape),
        R=shape_text((rows,)),
        C=view.shape[1],
        collapse=collapse + view_dims.defs(),
        rows=rows_name,
        rows_size=view_dims.empty(TensorInfo((rows,), "i32")),
    )


def lower_compute_scale(op: NamedOp) -> str:
    """TE's ``compute_scale_from_amax`` (``fp8_per_tensor`` and ``fp8_block``)."""
    (amax,), _ = op.signature(dynamic=x_rows_dynamic(op))  # a block grid: dynamic rows
    amax_dims = Dims.read("%amax", amax)  # no lines when static
    names = ", ".join(dims(amax.rank))
    mask = 0xFF800000 if op.attrs.pow2 else 0xFFFFFFFF
    return definition(
        "compute_scale_fp8.mlir",
        head(op),
        type=str(amax.builtin()),
        amax_dims=amax_dims.defs(),
        sizes=amax_dims.empty(amax),
        map=f"affine_map<({names}) -> ({names})>",
        iterators=iterators(["parallel"] * amax.rank),
        epsilon_bits=str(f32_bits(op.attrs.epsilon)),
        fp8_max=f32_hex(op.attrs.fp8_max),
        pow2_mask=str(mask - (1 << 32)),
    )


# The rules this module lowers (cpu/lower.py merges each module's table); FP32 block scales
# (fp8-block) share the per-tensor rule's template.
COMPUTE_SCALE: dict[ScaleRule, Callable[[NamedOp], str]] = {
    ScaleRule.FP8_PER_TENSOR: lower_compute_scale,
    ScaleRule.FP8_BLOCK: lower_compute_scale,
}


def lower_quantize(op: NamedOp) -> str:
    """``data = cast(x * scale)``, ``scale_inv = 1 / scale``."""
    (x, _), _ = op.signature(dynamic=x_rows_dynamic(op))
    x_dims = Dims.read("%x", x)  # no lines when static
    return definition(
        "quantize_fp8_per_tensor.mlir",
        elementwise(op, x.shape),
        encode=snippets.encode(op.attrs.format),
        reciprocal=snippets.reciprocal(),
        x_dims=x_dims.defs(),
        sizes=x_dims.empty(x),
    )


def lower_scaled_matmul(op: NamedOp) -> str:
    """Decoded operands, f32 accumulation, ``alpha = scale_inv_a * scale_inv_b``."""
    (a, _, b, _), (out,) = op.signature(dynamic=x_rows_dynamic(op))
    a_dims = Dims.read("%a", a)  # no lines when static; out's dynamic dims are a's leading ones
    product, called = decoded_gemm(op, a, b, out, op.attrs.b_transposed)
    return called + definition(
        "scaled_matmul_per_tensor.mlir",
        head(op),
        a_dims_defs=a_dims.defs(),
        a_sizes=a_dims.empty(a),
        b_sizes=Dims().empty(b),  # static
        out_sizes=a_dims.empty(out),
        a_shape=shape_text(a.shape),
        b_shape=shape_text(b.shape),
        out_shape=shape_text(out.shape),
        a_dims=", ".join(dims(a.rank)),
        b_dims=", ".join(dims(b.rank)),
        out_dims=", ".join(dims(out.rank)),
        a_parallels=iterators(["parallel"] * a.rank),
        b_parallels=iterators(["parallel"] * b.rank),
        out_parallels=iterators(["parallel"] * out.rank),
        decode_a=snippets.decode("a_", op.attrs.a_format),
        decode_b=snippets.decode("b_", op.attrs.b_format),
        **gemm_operand_fields(op, "%a_val", "%b_val"),
        contraction=product,
    )


def lower_amax_history_update(op: NamedOp) -> str:
    """Records this call's amax (0 where the recipe's options reject it), computes the next
    scale and rolls the history."""
    (history, _, _), _ = op.signature()
    return definition(
        "amax_history_update.mlir",
        head(op),
        length=history.shape[0],
        use_max="1" if op.attrs.algo is AmaxComputeAlgo.MAX else "0",
        fp8_max=f32_hex(op.attrs.fp8_max),
        inv_margin=f32_hex(2.0**-op.attrs.margin),
        # absent from IR built before the options existed: off, as in TE
        skip_non_finite="1" if op.attrs.skip_non_finite else "0",
        outlier_factor=f64_hex(op.attrs.outlier_factor or 0.0),
    )
