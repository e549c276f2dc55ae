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

B's layout: per 8 rows and 4 codes of K, the 8 rows' 4 bytes each (a 32-byte line, one
``vpmaddubsw`` operand), its block scales decoded, times a quarter and transposed (8 rows' scales
one load). Made once, at load, where IREE hoists it into the module's initializer
(``int_gemm_b_layout.mlir``: inline weights, decoded copies); where a call would make it again
(``qmlir.stored_b``: a parameter file's weights under ``load``, ``pack_weights="call"``) the
executable reads B's codes and scales as stored and lays each 8 rows out itself, at most
:data:`MAX_PANEL_STEPS` steps of K at a time, into a panel on its stack (``int_gemm_panel.mlir``:
each 8 bytes split into nibbles and looked up by ``vpshufb``, each block scale's f32 bits read
from a table of the 256 codes: :func:`scale_table`); across such K blocks the sums so
far are read back from the output, so each output's roundings are the same in the same order.
A's codes become signed bytes, its scales f32 and its offsets i32, each call (IREE's
dispatches).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from passes.ir.dialect import NamedOp, ScaleFormat
from passes.ir.formats import E2M1, E4M3
from passes.ir.layouts import ScaleLayout
from passes.ir.types import shape_text
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import definition, fragment
from passes.lowering.cpu.gemm import alpha_epilogue, executable_names, many_rows, rows_fields
from passes.lowering.cpu.gemv import code_value, fp4_offset_table
from passes.lowering.definitions import head
from passes.lowering.dims import x_rows_dynamic

STEP = 16  # codes the kernel sums exactly at a time (a block of nvfp4, half of mxfp4's)
LANES = 8  # rows of B a step of the loop (a lane each)
BLOCK_ROWS = 128  # rows of A a workgroup
B_ROWS = (64, 32, 16, 8)  # rows of B a workgroup: the first of these that divides N
MAX_PANEL_STEPS = 128  # steps of K a panel of B's codes as stored (8 rows: 16 KiB, scales 4 KiB)


@dataclass(frozen=True)
class IntGemm:
    """A GEMM this file writes: B ``[n, k / 2]`` bytes of E2M1 codes, block scales ``fmt``
    (nvfp4's E4M3 ones of 1 x 16 with global scales, or mxfp4's E8M0 ones of 1 x 32)."""

    n: int
    k: int
    fmt: ScaleFormat

    @property
    def block(self) -> int:
        return 16 if self.fmt is ScaleFormat.NVFP4 else 32


def int_gemm_plan(op: NamedOp) -> IntGemm | None:
    """The integer GEMM of an FP4 ``scaled_matmul`` (E2M1 operands: nvfp4's, mxfp4's): B ``[N, K
    / 2]`` bytes, static and stored transposed, ``N`` a multiple of :data:`LANES`; block scales
    compact; A ``[..., K / 2]`` with more than one row or a dynamic number; None otherwise."""
    attrs = op.attrs
    fmt = attrs.scale_format
    if fmt not in (ScaleFormat.NVFP4, ScaleFormat.E8M0) or not attrs.b_transposed:
        return None
    if attrs.a_format != E2M1 or attrs.b_format != E2M1:
        return None
    if attrs.a_layout is not ScaleLayout.COMPACT or attrs.b_layout is not ScaleLayout.COMPACT:
        return None
    ins, _ = op.signature(dynamic=True)
    a, b = ins[0], ins[3 if fmt is ScaleFormat.NVFP4 else 2]
    if b.rank != 2 or not b.is_static or a.rank < 2:
        return None
    n, row_bytes = b.shape
    plan = IntGemm(n, 2 * row_bytes, fmt)
    if n % LANES or a.shape[-1] != row_bytes or plan.k % plan.block:
        return None
    return plan if many_rows(a) else None  # one row: decode-gemv's


def _decoded_scale(fmt: ScaleFormat, prefix: str) -> tuple[str, str]:
    """Lines decoding ``%<prefix>code`` (a block scale's code) and the f32 value they define."""
    if fmt is ScaleFormat.NVFP4:
        return snippets.decode_value(E4M3, prefix), f"%{prefix}val"
    return fragment("decode_e8m0_f32.mlir", p=prefix, code=f"%{prefix}code"), f"%{prefix}f32"


def k_steps(plan: IntGemm, stored: bool) -> int:
    """Steps of 16 codes the kernel takes at a time (its K block): all of K when B is laid out
    at load; from B's codes as stored, K in the fewest blocks of at most
    :data:`MAX_PANEL_STEPS` (their panel on the stack), as even as a block of ``plan.block``
    codes' scales kept whole allows (mxfp4's 32: an even number of steps; the last block may
    be shorter). A 0.35B model's MLP (K 2816, 176 steps) as blocks of 64 ran 1.08-1.27x the
    time of B laid out at load at 256 rows, of 128 1.02-1.10x, all of K at once 0.99x
    (benchmarks/RESULTS.md)."""
    steps = plan.k // STEP
    if not stored:
        return steps
    whole = plan.block // STEP
    blocks = -(-steps // MAX_PANEL_STEPS)
    return -(-steps // blocks // whole) * whole if blocks > 1 else steps


def scale_table(fmt: ScaleFormat, factor: float) -> list[int]:
    """The f32 bits (as signed i32) of each block-scale code's value times ``factor`` (exact: a
    power of two): nvfp4's E4M3 codes (magnitude 0x7F the quiet NaN 0x7FC00000, as
    ``decode_fp8.mlir``) or mxfp4's E8M0 ones (2^(e - 127); 0 for code 0 and NaN for 0xFF, as
    ``decode_e8m0_f32.mlir``)."""
    if fmt is ScaleFormat.NVFP4:
        values = [code_value(E4M3, code) * factor for code in range(256)]
    else:
        values = [math.nan if e == 255 else (2.0 ** (e - 127) if e else 0.0) * factor
                  for e in range(256)]  # fmt: skip
    bits = [
        0x7FC00000 if math.isnan(v) else struct.unpack("<i", struct.pack("<f", v))[0]
        for v in values
    ]
    return [b - (1 << 32) if b >= 1 << 31 else b for b in bits]


def _b_operands(plan: IntGemm, op: NamedOp, stored: bool, sb_type: str) -> dict[str, str]:
    """The definition's and the executable's fields for B: laid out at load
    (``int_gemm_b_layout.mlir``, IREE hoisting it), or read as stored and laid out a panel at
    a time inside the executable (``int_gemm_panel.mlir``)."""
    n, k = plan.n, plan.k
    nvfp4 = plan.fmt is ScaleFormat.NVFP4
    kcb = k_steps(plan, stored)
    w_doc = _DOCS[plan.fmt]["w_doc"]
    factor = "0.25" if nvfp4 else "1.0"
    if not stored:
        decode_b, b_val = _decoded_scale(plan.fmt, "wl_sbd_")
        layout = fragment(
            "int_gemm_b_layout.mlir",
            p="wl_",
            N=n,
            AK=k // 2,
            NG8=n // 8,
            KQ=k // 4,
            KH=k // STEP,
            KS=k // plan.block,
            R=plan.block // STEP,
            sb_type=sb_type,
            w_doc=w_doc,
            twice_b=snippets.e2m1_twice("wl_qb_"),
            decode_b=decode_b,
            b_val=b_val,
            w_factor=factor,
        )
        return {
            "b_defs": layout,
            "b_args": "%wl_wp, %wl_ws",
            "b_types": f"tensor<{n // 8}x{k // 4}x32xi8>, tensor<{k // STEP}x{n}xf32>",
            "b_doc": "%wl_wp, %wl_ws: B laid out once, at load (int_gemm_b_layout.mlir).",
            "w_type": f"memref<{n // 8}x{k // 4}x32xi8>",
            "s_type": f"memref<{k // STEP}x{n}xf32>",
            "ws_doc": f"{w_doc}, transposed (laid out once, at load)",
            "globals": "",
            "panel_alloc": "",
            "panel_build": "",
            "w_base": "%kb0",
            "wp": "%w",
            "wp_lead": "%g0, ",
            "wp_type": f"memref<{n // 8}x{k // 4}x32xi8>",
            "ws": "%s",
            "ws_col": "%n",
            "ws_type": f"memref<{k // STEP}x{n}xf32>",
        }
    scale_type = sb_type.replace("tensor<", "memref<")
    panel_type, pscale_type = f"memref<{4 * kcb}x32xi8>", f"memref<{kcb}x8xf32>"
    build = fragment(
        "int_gemm_panel.mlir",
        p="wp_",
        w_type=f"memref<{n}x{k // 2}xi8>",
        s_type=scale_type,
        KCQ=4 * kcb,
        KCB=kcb,
        R=plan.block // STEP,
        w_doc=w_doc,
        table=", ".join(str(v) for v in fp4_offset_table()),
    )
    table = f"@{op.name}$scale_table"
    bits = ", ".join(str(v) for v in scale_table(plan.fmt, float(factor)))
    return {
        "b_defs": "",
        "b_args": "%b, %sb",
        "b_types": f"tensor<{n}x{k // 2}xi8>, {sb_type}",
        "b_doc": "%b, %sb: B's codes and block scales as stored (no copy of them is kept).",
        "w_type": f"memref<{n}x{k // 2}xi8>",
        "s_type": scale_type,
        "ws_doc": f"{w_doc}; B read as stored, laid out a K block at a time into a panel on the "
        "stack (int_gemm_panel.mlir)",
        "globals": f'\n    memref.global "private" constant {table} : memref<256xi32> = '
        f"dense<[{bits}]>",
        "panel_alloc": f"\n      %panel = memref.alloca() : {panel_type}"
        f"\n      %pscale = memref.alloca() : {pscale_type}"
        f"\n      %scale_table = memref.get_global {table} : memref<256xi32>",
        "panel_build": "\n" + build,
        "w_base": "%c0",
        "wp": "%panel",
        "wp_lead": "",
        "wp_type": panel_type,
        "ws": "%pscale",
        "ws_col": "%c0",
        "ws_type": pscale_type,
    }


def lower_int_gemm(op: NamedOp) -> str:
    """The executable and the definition of a GEMM :func:`int_gemm_plan` takes (``stored_b``: B
    read as stored, laid out inside the executable)."""
    plan = int_gemm_plan(op)
    assert plan is not None, f"@{op.name} is not a many-row FP4 GEMM"
    n, k = plan.n, plan.k
    nvfp4 = plan.fmt is ScaleFormat.NVFP4
    stored = bool(op.attrs.stored_b)
    ins, (out,) = op.signature(dynamic=x_rows_dynamic(op))
    a, sa, sb = ins[0], ins[1], ins[4 if nvfp4 else 3]
    exe, fn = executable_names(op, "int_gemm")
    nb = next(rows for rows in B_ROWS if n % rows == 0)
    shapes = {"N": n, "K": k, "KQ": k // 4, "NG8": n // 8, "AK": k // 2}
    halves = {"KH": k // STEP, "KS": k // plan.block, "R": plan.block // STEP, "BK": plan.block}
    fields: dict[str, object] = {**head(op), **shapes, **halves, "out_shape": shape_text(out.shape)}
    a_dims, row_fields = rows_fields(a, out, fields, "i8")
    names = ("a", "sa", "ga", "b", "sb", "gb") if nvfp4 else ("a", "sa", "b", "sb")
    args = ",\n".join(f"%{name}: {t.builtin()}" for name, t in zip(names, ins, strict=True))
    # nvfp4: the global scales multiply the sums after the dispatch (as the data-tiled GEMM's
    # epilogue); mxfp4: a quarter (each block's sum is 4 times the products'), exact
    alpha = ("%ga", "%gb") if nvfp4 else ("%quarter", "%one")
    epilogue = alpha_epilogue(out, a_dims.empty(out), *alpha)
    decode_a, a_val = _decoded_scale(plan.fmt, "sad_")
    b = _b_operands(plan, op, stored, str(sb.builtin()))
    body = definition(
        "scaled_matmul_fp4_int.mlir",
        fields,
        **row_fields,
        fmt_doc=_DOCS[plan.fmt]["fmt_doc"],
        alpha_doc=_DOCS[plan.fmt]["alpha_doc"],
        exe=exe,
        fn=fn,
        args=args,
        sa_type=str(sa.builtin()),
        twice_a=snippets.e2m1_twice("qa_"),
        decode_a=decode_a,
        a_val=a_val,
        epilogue=epilogue,
        b_defs=b["b_defs"],
        b_args=b["b_args"],
        b_types=b["b_types"],
        b_doc=b["b_doc"],
    )
    kernel = fragment(
        "int_gemm_executable.mlir",
        exe=exe,
        fn=fn,
        MB=BLOCK_ROWS,
        NB=nb,
        NG=n // nb,
        KB=k // STEP,
        KCB=k_steps(plan, stored),
        **shapes,
        **{key: b[key] for key in _KERNEL_FIELDS},
    )
    return f"{kernel}\n{body}"


# the executable's fields :func:`_b_operands` gives
_KERNEL_FIELDS = (
    "w_type", "s_type", "ws_doc", "globals", "panel_alloc", "panel_build", "w_base", "wp",
    "wp_lead", "wp_type", "ws", "ws_col", "ws_type",
)  # fmt: skip


_DOCS = {
    ScaleFormat.NVFP4: {
        "fmt_doc": "NVFP4 operands: E4M3 block scales of 1 x 16, global scales",
        "alpha_doc": ", times (S_dec_a * S_dec_b)",
        "w_doc": " times a quarter (4 times the products' sum: exact)",
    },
    ScaleFormat.E8M0: {
        "fmt_doc": "MXFP4 operands: E8M0 block scales of 1 x 32",
        "alpha_doc": ", times a quarter (each 16's sum is 4 times the products')",
        "w_doc": "",
    },
}
