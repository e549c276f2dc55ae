"""llvm-cpu: a one-row FP8 or NVFP4 ``scaled_matmul`` (a generator's decode step) as a
matrix-vector product that reads B's codes as stored and decodes them inside its loop.

``decode-gemv`` (``passes/decode_gemv.py``) marks the declarations that take it
(:func:`gemv_plan`; ``qmlir.gemv``); :func:`lower_gemv` writes their definition and the
hand-written executable it dispatches (``templates/gemv_fp8_executable.mlir``: for each 64 bytes
of a loop step ``gemv_fp8_decode.mlir`` or ``gemv_fp4_decode.mlir``, then ``gemv_accumulate.mlir``
for per-tensor scales, ``gemv_accumulate_scaled.mlir`` for fp8-block's and mxfp8's block scales
(fp32 as stored, E8M0 codes decoded in the loop) or ``gemv_accumulate_fp4.mlir`` for nvfp4's
E4M3 ones; A's decode and scales beside the dispatch: ``gemv_activation.mlir``,
``gemv_fp4_activation.mlir``, ``gemv_scales_*.mlir``). The decode is byte-table lookups of each
code's bf16 value: ``vpermi2b`` over FP8's 128 magnitudes (the high and low byte; the sign bit
or-ed in), ``vpermb`` over E2M1's 16 signed codes; exact for every code, subnormals, infinities
and NaN included (a bf16 holds each value; :func:`bf16_table`). Why: the data-tiled GEMM needs B
decoded to bf16 and packed into its tiles, so a one-token step either rewrote every weight
twice (1 byte read, 4 written: three quarters of an FP8 step's time, benchmarks/RESULTS.md) or
read decoded copies twice the codes' size (four times nvfp4's).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from passes.ir.dialect import NamedOp, ScaleFormat, Scaling
from passes.ir.formats import E2M1, E4M3, E5M2, FloatFormat
from passes.ir.layouts import ScaleLayout
from passes.ir.types import shape_text
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import definition, fragment
from passes.lowering.cpu.swizzle import unswizzle
from passes.lowering.definitions import head
from passes.lowering.dims import Dim

# What the executable's instructions need (LLVM's feature names, as the target lists them).
GEMV_FEATURES = ("avx512bf16", "avx512vbmi")
CHUNK = 64  # codes a chunk takes (one 512-bit load)
MAX_CHUNKS = 2  # chunks a step of a row's loop takes: 2 where K allows (4 accumulators)
MAX_ROWS = 16  # rows a workgroup takes at most (16 streamed faster than 32, RESULTS.md)
MIN_GROUPS = 8  # workgroups wanted at least, to spread over the CPU's threads


@dataclass(frozen=True)
class Gemv:
    """A GEMM :func:`gemv_plan` takes: B ``[n, k]`` (bytes: nvfp4 packs two codes a byte);
    ``bk`` the K blocks' size in codes (0: per-tensor scales), ``scale_format`` the block
    scales' (``fp32``: fp8-block's 1x128 and 128x128 blocks; ``e8m0``: mxfp8's 1x32;
    ``nvfp4``: E4M3 scales of 1x16 blocks of E2M1 codes)."""

    n: int
    k: int
    bk: int = 0
    scale_format: ScaleFormat | None = None

    @property
    def fp4(self) -> bool:
        return self.scale_format is ScaleFormat.NVFP4


# each block-scale format's (A's block, B's block, A's layout, B's layout)
_BLOCKS = {
    ScaleFormat.FP32: ((1, 128), (128, 128), ScaleLayout.BLOCK1D, ScaleLayout.BLOCK2D),
    ScaleFormat.E8M0: ((1, 32), (1, 32), ScaleLayout.MX, ScaleLayout.MX),
    ScaleFormat.NVFP4: ((1, 16), (1, 16), ScaleLayout.MX, ScaleLayout.MX),
}


def gemv_plan(op: NamedOp) -> Gemv | None:
    """The matrix-vector product of a scaled GEMM that can run as one: A static with one row, B
    ``[N, K]`` (stored transposed), 64 bytes a row's loop step; FP8 operands with per-tensor
    scales, or with block scales whose decoded operands are exact in bf16
    (``qmlir.gemm_operands = "bf16"``: powers of two) as fp8-block (``K`` a multiple of 128) and
    mxfp8 give them; or nvfp4's E2M1 operands; None otherwise."""
    attrs = op.attrs
    if not attrs.b_transposed:
        return None
    ins, _ = op.signature(dynamic=True)
    if not all(t.is_static for t in ins):
        return None
    fp4 = attrs.scale_format is ScaleFormat.NVFP4
    a, b = ins[0], ins[3 if fp4 else 2]
    if b.rank != 2 or math.prod(a.shape[:-1]) != 1:
        return None
    n, k = b.shape
    if k % CHUNK or a.shape[-1] != k:
        return None
    fp8 = (E4M3, E5M2)
    if fp4:
        if attrs.a_format != E2M1 or attrs.b_format != E2M1:
            return None
    elif attrs.a_format not in fp8 or attrs.b_format not in fp8:
        return None
    if attrs.scaling is not Scaling.BLOCK:
        return Gemv(n, k)
    if attrs.operand_type != "bf16":
        return None  # block scales not provably powers of two: the products would round
    blocks = _BLOCKS.get(attrs.scale_format)
    if blocks != (attrs.a_block, attrs.b_block, attrs.a_layout, attrs.b_layout):
        return None
    bk = blocks[0][1]
    if (2 * k if fp4 else k) % bk:
        return None
    return Gemv(n, k, bk, attrs.scale_format)


def workgroup_rows(n: int) -> int:
    """Rows a workgroup takes: a power of two dividing ``n``, at most :data:`MAX_ROWS`, and
    small enough for :data:`MIN_GROUPS` workgroups where ``n`` allows."""
    rows = MAX_ROWS
    while rows > 1 and (n % rows or n // rows < MIN_GROUPS):
        rows //= 2
    return rows


def chunk_count(k: int) -> int:
    """Chunks of 64 codes a step of a row's loop takes: the most, up to :data:`MAX_CHUNKS`,
    that divide ``k`` into whole steps."""
    return next(c for c in range(MAX_CHUNKS, 0, -1) if k % (c * CHUNK) == 0)


def code_value(fmt: FloatFormat, code: int) -> float:
    """The value of code ``code`` of ``fmt``: E4M3 (magnitude 0x7F NaN), E5M2 (the top
    exponent: inf or NaN), E2M1 (0..15, no inf or NaN)."""
    sign_bit = 1 << (fmt.ebits + fmt.mbits)
    sign = -1.0 if code & sign_bit else 1.0
    code &= 2 * sign_bit - 1
    exponent = (code >> fmt.mbits) & ((1 << fmt.ebits) - 1)
    mantissa = code & ((1 << fmt.mbits) - 1)
    top = (1 << fmt.ebits) - 1
    if fmt == E4M3 and code & 0x7F == 0x7F or fmt == E5M2 and exponent == top and mantissa:
        return math.nan
    if fmt == E5M2 and exponent == top:
        return sign * math.inf
    if exponent == 0:
        return sign * mantissa * 2.0 ** (fmt.emin - fmt.mbits)
    return sign * (1 + mantissa / (1 << fmt.mbits)) * 2.0 ** (exponent - fmt.bias)


def bf16_table(fmt: FloatFormat) -> list[int]:
    """The bf16 bits of each magnitude code 0..127 of ``fmt`` (exact: every FP8 value is a
    bf16; NaN as 0x7FC0)."""
    return [_bf16_bits(code_value(fmt, code)) for code in range(128)]


def _bf16_bits(value: float) -> int:
    f32 = 0x7FC00000 if math.isnan(value) else struct.unpack("<I", struct.pack("<f", value))[0]
    assert f32 & 0xFFFF == 0, f"{value} is not a bf16"
    return f32 >> 16


def _bytes(values: list[int]) -> str:
    """A ``vector<64xi8>`` literal's elements (signed)."""
    return "[" + ", ".join(str(v - 256 if v > 127 else v) for v in values) + "]"


def executable_names(op: NamedOp) -> tuple[str, str]:
    """The executable's symbol and its function's: IREE links every CPU executable into one,
    so each function's name is its op's own."""
    return f"{op.name}$gemv_executable", f"{op.name}$gemv"


def lower_gemv(op: NamedOp) -> str:
    """The executable and the definition of a GEMM :func:`gemv_plan` takes."""
    plan = gemv_plan(op)
    assert plan is not None, f"@{op.name} is not a one-row GEMM over B's codes"
    n, k = plan.n, plan.k
    ins, (out,) = op.signature()
    a = ins[0]
    exe, fn = executable_names(op)
    fields: dict[str, object] = {
        **head(op),
        "exe": exe,
        "fn": fn,
        "N": n,
        "K": k,
        "a_shape": shape_text(a.shape),
        "out_shape": shape_text(out.shape),
        "out_dims": ", ".join(str(i) for i in range(out.rank)),
        "out_sizes": ", ".join(str(d) for d in out.shape),
    }
    a_dims = ", ".join(str(i) for i in range(a.rank))
    alpha = {
        "N": n,
        "out_shape": fields["out_shape"],
        "out_dims": fields["out_dims"],
        "out_sizes": fields["out_sizes"],
    }
    if plan.fp4:
        sa, sb = ins[1], ins[4]
        kb = 2 * k // plan.bk
        executable = _executable(plan, exe, fn, (n, kb), 1, E2M1)
        sa_type, sb_type = str(sa.builtin()), str(sb.builtin())
        activation = fragment(
            "gemv_fp4_activation.mlir",
            p="x_",
            a_shape=shape_text(a.shape),
            a_dims=a_dims,
            K=k,
            XK=2 * k,
            KB=kb,
            decode_fp4=snippets.decode_e2m1("x_", "%x_fp4"),
            decode_scale=snippets.decode("x_s_", E4M3),
        )
        body = definition(
            "scaled_matmul_nvfp4_gemv.mlir",
            fields,
            XK=2 * k,
            KB=kb,
            sa_type=sa_type,
            sb_type=sb_type,
            unswizzle_a=unswizzle("x_", "%sa", sa_type, Dim(1), kb),
            unswizzle_b=unswizzle("b_", "%sb", sb_type, Dim(n), kb),
            activation=activation,
            alpha=fragment("gemv_alpha.mlir", **alpha, sa="%ga", sb="%gb"),
        )
        return f"{executable}\n{body}"
    sa, sb = ins[1], ins[3]
    fields["activation"] = fragment(
        "gemv_activation.mlir",
        p="a_",
        a_shape=shape_text(a.shape),
        K=k,
        a_dims=a_dims,
        decode_a=snippets.decode("a_", op.attrs.a_format),
    )
    if not plan.bk:
        executable = _executable(plan, exe, fn, (0, 0), 1, op.attrs.b_format)
        scaled = fragment("gemv_alpha.mlir", **alpha, sa="%a_scale_inv", sb="%b_scale_inv")
        body = definition("scaled_matmul_gemv.mlir", fields, alpha=scaled)
        return f"{executable}\n{body}"
    rb, kb = (128 if plan.scale_format is ScaleFormat.FP32 else 1), k // plan.bk
    w_grid = sb.shape if plan.scale_format is ScaleFormat.FP32 else (n, kb)
    executable = _executable(plan, exe, fn, w_grid, rb, op.attrs.b_format)
    grid = {"KB": kb, "RB": w_grid[0], "WKB": w_grid[1], "sa_type": str(sa.builtin())}
    grid["sb_type"] = str(sb.builtin())
    grid["ws_elem"] = "f32" if plan.scale_format is ScaleFormat.FP32 else "i8"
    if plan.scale_format is ScaleFormat.FP32:
        scales = fragment("gemv_scales_fp32.mlir", **grid, rb=rb)
        doc = "fp32 scales, A's 1 x 128 blocks (block1d), B's 128 x 128 (block2d)"
    else:
        scales = fragment(
            "gemv_scales_e8m0.mlir",
            **grid,
            unswizzle_a=unswizzle("a_", "%sa", grid["sa_type"], Dim(1), kb),
            unswizzle_b=unswizzle("b_", "%sb", grid["sb_type"], Dim(n), kb),
            decode_x=fragment("decode_e8m0_f32.mlir", p="x_", code="%x_code"),
        )
        doc = "E8M0 scales of 1 x 32 blocks, mx layout"
    body = definition("scaled_matmul_block_gemv.mlir", fields, **grid, scales=scales, scale_doc=doc)
    return f"{executable}\n{body}"


def _tables(fmt: FloatFormat) -> dict[str, str]:
    """The executable's byte tables of ``fmt``'s bf16 values: FP8's two 128-entry tables
    (``hi0``/``hi1``, ``lo0``/``lo1``: magnitudes), E2M1's 16-entry ones (``fp4_hi``,
    ``fp4_lo``: signed codes); the other format's left as zeros."""
    zeros = _bytes([0] * 64)
    if fmt == E2M1:
        bits = [_bf16_bits(code_value(fmt, code)) for code in range(16)] + [0] * 48
        return {
            "hi0": zeros, "hi1": zeros, "lo0": zeros, "lo1": zeros,
            "fp4_hi": _bytes([v >> 8 for v in bits]),
            "fp4_lo": _bytes([v & 0xFF for v in bits]),
        }  # fmt: skip
    table = bf16_table(fmt)
    high, low = [v >> 8 for v in table], [v & 0xFF for v in table]
    return {
        "hi0": _bytes(high[:64]),
        "hi1": _bytes(high[64:]),
        "lo0": _bytes(low[:64]),
        "lo1": _bytes(low[64:]),
    }


def _w_scales(plan: Gemv, p: str, fields: dict[str, int]) -> str:
    """A block-scaled step's loads of the row's two scales as f32 (``%<p>swa_f32``,
    ``%<p>swb_f32``): fp32 as stored, E8M0 codes decoded in the loop."""
    if plan.scale_format is ScaleFormat.FP32:
        return fragment("gemv_scale_f32.mlir", p=p, **fields)
    if plan.scale_format is ScaleFormat.E8M0:
        return fragment(
            "gemv_scale_e8m0.mlir",
            p=p,
            **fields,
            decode_a=fragment("decode_e8m0_f32.mlir", p=f"{p}swa_", code=f"%{p}swc_a"),
            decode_b=fragment("decode_e8m0_f32.mlir", p=f"{p}swb_", code=f"%{p}swc_b"),
        )
    return ""


def _executable(
    plan: Gemv, exe: str, fn: str, w_grid: tuple[int, ...], rb: int, fmt: FloatFormat
) -> str:
    """The ``stream.executable`` of ``plan``'s matrix-vector product over ``fmt`` codes."""
    n, k = plan.n, plan.k
    # byte 2j of the interleave is low[j], byte 2j+1 high[j]: 64 little-endian bf16 values
    interleave = "[" + ", ".join(str(j // 2 + (64 if j % 2 else 0)) for j in range(128)) + "]"
    chunks = 1 if plan.fp4 else chunk_count(k)
    sums = [f"%acc{i}" for i in range(2 * chunks)]
    lanes, last = [], "%sums#0"
    for i in range(1, len(sums)):
        name = "%lanes" if i == len(sums) - 1 else f"%lanes{i}"
        lanes.append(f"        {name} = arith.addf {last}, %sums#{i} : vector<16xf32>")
        last = name
    kb = (2 * k if plan.fp4 else k) // max(plan.bk, 1)
    scale_fields = {"KB": kb, "RB": w_grid[0], "WKB": w_grid[1], "N": n}
    decode = "gemv_fp4_decode.mlir" if plan.fp4 else "gemv_fp8_decode.mlir"
    accumulate = "gemv_accumulate.mlir"
    if plan.bk:
        accumulate = "gemv_accumulate_fp4.mlir" if plan.fp4 else "gemv_accumulate_scaled.mlir"
    xk = 2 * k if plan.fp4 else k
    parts = []
    for c in range(chunks):
        p = f"c{c}_"
        parts.append(
            fragment(decode, p=p, N=n, K=k, XK=xk, offset=c * CHUNK, interleave=interleave)
        )
        parts.append(
            fragment(
                accumulate,
                p=p,
                acc_a=sums[2 * c],
                acc_b=sums[2 * c + 1],
                w_scales=_w_scales(plan, p, scale_fields),
                ws_elem="f32" if plan.scale_format is ScaleFormat.FP32 else "i8",
                **scale_fields,
            )
        )
    tables = _tables(fmt)
    scale_defs = row_defs = x_arg = w_arg = ""
    if plan.bk:
        x_arg, w_arg = "%xs_binding: !stream.binding, ", "%ws_binding: !stream.binding, "
        if plan.fp4:
            defs = fragment(
                "gemv_defs_fp4.mlir", KB=kb, N=n, K=k, fp4_hi=tables["fp4_hi"],
                fp4_lo=tables["fp4_lo"],
            )  # fmt: skip
        else:
            elem = "f32" if plan.scale_format is ScaleFormat.FP32 else "i8"
            defs = fragment("gemv_defs_block.mlir", **scale_fields, bk=plan.bk, rb=rb, ws_elem=elem)
            row_defs = "\n        %nb = arith.divui %n, %c_rb : index"
        scale_defs = "\n" + defs
    return fragment(
        "gemv_fp8_executable.mlir",
        exe=exe,
        fn=fn,
        N=n,
        K=k,
        XK=xk,
        rows=workgroup_rows(n),
        step=chunks * CHUNK,
        chunk_count=chunks,
        accumulators=len(sums),
        iter_args=", ".join(f"{acc} = %zero" for acc in sums),
        acc_types=", ".join(["vector<16xf32>"] * len(sums)),
        yields=", ".join(f"%c{c}_next_{ab}" for c in range(chunks) for ab in "ab"),
        lanes="\n".join(lanes),
        chunks="\n".join(parts),
        x_scales_arg=x_arg,
        w_scales_arg=w_arg,
        scale_defs=scale_defs,
        row_defs=row_defs,
        **{key: v for key, v in tables.items() if not key.startswith("fp4")},
    )
