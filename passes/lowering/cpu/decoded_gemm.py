"""llvm-cpu: the GEMM of a scaled GEMM's decoded operands (``%acc = %a_f32 @ %b_f32``), as every
lowering of ``scaled_matmul`` over decoded operands writes it (``per_tensor.py``,
``block_matmul.py``, ``nvfp4.py``, ``mxfp4.py``): IREE's data-tiled ``linalg.matmul``, or, where
``dynamic-gemm`` set ``bf16_gemm``, a call of ``prefill-gemm``'s bf16 GEMM over the same decoded
bf16 operands (``gemm.bf16_gemm_definitions``), whose outputs are row-major (IREE's GEMM of a
dynamic number of rows unpacks its tiled outputs in a dispatch of their own). The same products
and the same sums in the same order: the same values bit for bit."""

from __future__ import annotations

from passes.ir.dialect import NamedOp
from passes.ir.types import TensorInfo, shape_text
from passes.lowering.cpu.common import contraction, fragment
from passes.lowering.cpu.gemm import bf16_gemm_definitions


def decoded_gemm(
    op: NamedOp, a: TensorInfo, b: TensorInfo, out: TensorInfo, b_transposed: bool
) -> tuple[str, str]:
    """``(ops, definitions)``: the ops defining ``%acc`` (f32 ``out``) from ``%a_f32`` and
    ``%b_f32`` (``a`` and ``b``'s shapes, of the op's GEMM operand type) into ``%acc_init``, and
    the top-level definitions they call (none for IREE's GEMM)."""
    gemm = op.attrs.operand_type
    if op.attrs.bf16_gemm is None:
        return contraction(a, b, out, b_transposed, gemm), ""
    n, k = b.shape
    assert b_transposed and gemm == "bf16" and b.rank == 2, op.name
    callee = f"{op.name}$bf16_gemm"
    x = a.with_dtype("bf16")
    ops = fragment(
        "contraction_bf16_gemm.mlir",
        callee=callee,
        a_shape=shape_text(x.shape),
        N=n,
        K=k,
        out_shape=shape_text(out.shape),
    )
    return ops, "\n".join(bf16_gemm_definitions(callee, x, n, k, rounded=False, prepacked=True))
