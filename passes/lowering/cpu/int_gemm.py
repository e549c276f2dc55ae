"""llvm-cpu in AVX2 code: a many-row nvfp4 ``scaled_matmul`` (a batch, a prefill) as a GEMM in
integers (``templates/scaled_matmul_nvfp4_int.mlir``, ``templates/int_gemm_executable.mlir``).

IREE's GEMM for nvfp4 on a CPU without bf16 instructions multiplies f32 operands: each code
decoded and times its block scale (exact), f32 FMAs, 8 products an instruction. E2M1 values
times 2 are the integers -12..12, so a block of 16 codes' products is summed exactly by
``vpmaddubsw`` (32 byte products an instruction, pairs summed in 16 bits) and ``vpmaddwd``:
the unsigned operand is B's values times 2 plus 12 (0..24), the offset's products (12 times A's
integers' sum over the block) taken off after. Each block's exact sum times the product of its
two E4M3 block scales and a quarter (exact: 4-bit significands, the sum at most 2304) is added
to the f32 sums, one rounding a block where the data-tiled GEMM rounds after each product:
the same exact products, summed in fewer roundings and another order (docs/numerics.md). The
global scales multiply the sums after the dispatch, as the data-tiled GEMM's epilogue does.
On the AVX2 host MiniLM nvfp4 ran 0.65-0.70x its time with the data-tiled GEMM, the
decoder sample 0.73-0.74x, their dynamic artifacts 0.67-0.72x (benchmarks/RESULTS.md).

B is laid out once where it is a constant (IREE hoists the layout into the module's initializer;
a parameter file's weights without decoded copies are laid out each call, as the data-tiled
GEMM decoded and packed them): per 8
rows and 4 codes of K, the 8 rows' 4 bytes each (a 32-byte line, one ``vpmaddubsw`` operand),
its block scales decoded, times a quarter and transposed (8 rows' scales one load). A's codes
become signed bytes, its scales f32 and its offsets i32, each call (IREE's dispatches).
"""

from __future__ import annotations

import math

from passes.ir.dialect import NamedOp, ScaleFormat
from passes.ir.formats import E2M1, E4M3
from passes.ir.layouts import ScaleLayout
from passes.ir.types import DYNAMIC, shape_text
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import definition, dims, fragment, iterators
from passes.lowering.cpu.gemm import executable_names, rows_fields
from passes.lowering.definitions import head
from passes.lowering.dims import x_rows_dynamic

BLOCK = 16  # nvfp4's codes a block scale
LANES = 8  # rows of B a step of the loop (a lane each)
BLOCK_ROWS = 128  # rows of A a workgroup
B_ROWS = (64, 32, 16, 8)  # rows of B a workgroup: the first of these that divides N


def int_gemm_plan(op: NamedOp) -> tuple[int, int] | None:
    """``(N, K)`` of an nvfp4 ``scaled_matmul`` that runs as the integer GEMM: B ``[N, K / 2]``
    bytes, static and stored transposed, ``N`` a multiple of :data:`LANES`; block scales of 1 x
    16, compact; A ``[..., K / 2]`` with more than one row or a dynamic number; None otherwise."""
    attrs = op.attrs
    if attrs.scale_format is not ScaleFormat.NVFP4 or not attrs.b_transposed:
        return None
    if attrs.a_format != E2M1 or attrs.b_format != E2M1:
        return None
    if attrs.a_layout is not ScaleLayout.COMPACT or attrs.b_layout is not ScaleLayout.COMPACT:
        return None
    ins, _ = op.signature(dynamic=True)
    a, b = ins[0], ins[3]
    if b.rank != 2 or not b.is_static or a.rank < 2:
        return None
    n, row_bytes = b.shape
    if n % LANES or a.shape[-1] != row_bytes or (2 * row_bytes) % BLOCK:
        return None
    lead = a.shape[:-1]
    if DYNAMIC not in lead and math.prod(lead) <= 1:
        return None  # one row: decode-gemv's
    return n, 2 * row_bytes


def lower_int_gemm(op: NamedOp) -> str:
    """The executable and the definition of a GEMM :func:`int_gemm_plan` takes."""
    plan = int_gemm_plan(op)
    assert plan is not None, f"@{op.name} is not a many-row nvfp4 GEMM"
    n, k = plan
    ins, (out,) = op.signature(dynamic=x_rows_dynamic(op))
    a, sa, sb = ins[0], ins[1], ins[4]
    exe, fn = executable_names(op, "int_gemm")
    nb = next(rows for rows in B_ROWS if n % rows == 0)
    shapes = {"N": n, "K": k, "KB": k // BLOCK, "KQ": k // 4, "NG8": n // 8, "AK": k // 2}
    fields: dict[str, object] = {**head(op), **shapes, "out_shape": shape_text(out.shape)}
    a_dims, row_fields = rows_fields(a, out, fields, "i8")
    names = ("a", "sa", "ga", "b", "sb", "gb")
    args = ",\n".join(f"%{name}: {t.builtin()}" for name, t in zip(names, ins, strict=True))
    sizes = a_dims.empty(out)
    epilogue = fragment(
        "gemm_alpha.mlir",
        out_shape=shape_text(out.shape),
        sa="%ga",
        sb="%gb",
        out_sizes=sizes,
        size_reads="".join(f" {v}:index" for v in sizes.split(", ") if v),
        out_dims=", ".join(dims(out.rank)),
        out_parallels=iterators(["parallel"] * out.rank),
    )
    body = definition(
        "scaled_matmul_nvfp4_int.mlir",
        fields,
        **row_fields,
        exe=exe,
        fn=fn,
        args=args,
        sa_type=str(sa.builtin()),
        sb_type=str(sb.builtin()),
        twice_a=snippets.e2m1_twice("qa_"),
        twice_b=snippets.e2m1_twice("qb_"),
        decode_a=snippets.decode_value(E4M3, "sad_"),
        decode_b=snippets.decode_value(E4M3, "sbd_"),
        epilogue=epilogue,
    )
    kernel = fragment(
        "int_gemm_executable.mlir", exe=exe, fn=fn, MB=BLOCK_ROWS, NB=nb, NG=n // nb, **shapes
    )
    return f"{kernel}\n{body}"
