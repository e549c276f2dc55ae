"""llvm-cpu: a one-row FP8 or NVFP4 ``scaled_matmul`` (a generator's decode step) as a
matrix-vector product that reads B's codes as stored and decodes them inside its loop.

``decode-gemv`` (``passes/decode_gemv.py``) marks the declarations that take it
(:func:`gemv_plan`; ``qmlir.gemv``, the instructions it is written for: :data:`GEMV_FEATURES`);
:func:`lower_gemv` writes their definition and the hand-written executable it dispatches
(``templates/gemv_fp8_executable.mlir``), for each 64 bytes of a loop step:

- AVX512-BF16 and AVX512-VBMI: ``gemv_fp8_decode.mlir`` or ``gemv_fp4_decode.mlir``, byte-table
  lookups of each code's bf16 value (``vpermi2b`` over FP8's 128 magnitudes, the high and the
  low byte, the sign bit or-ed in; ``vpermb`` over E2M1's 16 signed codes), multiplied with
  ``vdpbf16ps``: ``gemv_accumulate.mlir`` for per-tensor scales; for fp8-block's and mxfp8's
  block scales each 32 codes' products (``gemv_products_bf16.mlir``, 16 lanes) times their
  block's factor, made before the loop as in AVX2 code below (``gemv_accumulate_factors.mlir``,
  ``gemv_accumulate_scaled_block.mlir``: on the AVX512-BF16 host mxfp8 0.92-0.96x and fp8-block
  0.98-1.00x the time of the loop that loaded x's and the row's scales and multiplied them each
  step, RESULTS.md); ``gemv_accumulate_fp4.mlir`` for nvfp4's E4M3 ones (``decode-gemv`` gives
  FP4 GEMMs AVX2's loop by default). x is bf16.
- AVX2 with FMA and F16C, FP8: ``gemv_fp8_decode_f32.mlir``, each E4M3 code as an f32 whose
  bits are the code's, sign-extended and shifted (``gemv_e4m3_f32.mlir``: its value times
  2^-120, its subnormals f32 subnormals, read as such because the workgroup clears MXCSR's
  denormals-are-zero bit for its loop, ``gemv_defs_f32.mlir``, and restores the worker's mode
  after it, ``gemv_restore_mxcsr.mlir``; NaN's magnitude reads as a number, and
  ``gemv_nan_rows.mlir`` makes a row holding it NaN after the dispatch, from each row's largest
  magnitude: for a weight a constant expression, computed once at load), multiplied with f32
  FMAs (``gemv_accumulate_f32.mlir``). Block scales: each K block's factor, x's scale times
  the weight's, is made before the loop that reads it into the workgroup's stack
  (``gemv_defs_factors.mlir``; fp8-block's once a workgroup, whose rows lie in one row block:
  ``gemv_block_factors.mlir``; mxfp8's once a row, its E8M0 codes decoded 8 at a time:
  ``gemv_row_factors_e8m0.mlir``), and each 32 codes' products are summed in 8 lanes (a
  multiply, three FMAs: ``gemv_products_f32_blocks.mlir``) and added times their block's factor,
  one load and one FMA (``gemv_accumulate_scaled_block.mlir``, ``gemv_accumulate_factors.mlir``):
  0.93x and 0.91x the time of the loop that loaded and multiplied both scales every step
  (RESULTS.md). x is f32, times
  2^112 (:data:`X_FACTOR`), and the sums' remaining 2^-8 is taken back exactly (each row's sum
  times 2^8; with block scales, x's block scales times 2^8 beside the dispatch,
  ``gemv_scales_times.mlir``: a scalar a block, not a vector multiply a step). Three integer
  instructions a code vector and no conversion: 1.2x the speed of the decode through f16
  (``vcvtph2ps``) it replaces (benchmarks/RESULTS.md). FP8 weights in E4M3 only (every
  recipe's forward format).
- AVX2, nvfp4 and mxfp4: ``gemv_fp4_decode_i8.mlir``, in integers: each code's value times 2
  plus 12 (an unsigned byte, :func:`fp4_offset_table`) from a 16-entry table (``vpshufb``),
  times x's values times 2 (signed bytes) by ``vpmaddubsw``, each 4 bytes' 8 products summed in
  32 bits (``vpmaddwd``) less the offset's products (``gemv_fp4_offsets.mlir``: 12 times x's
  integers' sum, the same for every row): 4 times their exact sum, times the block's scales
  (``gemv_accumulate_fp4_i8.mlir``; x's a quarter) into 8-lane f32 accumulators: 2.6 times
  the speed of a decode through f16 (benchmarks/RESULTS.md), a third of the instructions.
  mxfp4's blocks are 32 codes (4 lanes each) with E8M0 scales, decoded in the loop as the f32
  of their bits shifted (``gemv_mxfp4_scales_i8.mlir``, ``gemv_accumulate_mxfp4_i8.mlir``); no
  AVX-512 variant (its one-row GEMMs stay data-tiled there).

Every decode is exact for every code, subnormals, infinities and NaN included (a bf16, an f16
or a byte holds each value; :func:`bf16_table`). A's decode and scales sit beside the dispatch
(``gemv_activation.mlir``, ``gemv_fp4_activation.mlir``, ``gemv_scales_*.mlir``). Why: the
data-tiled GEMM needs B decoded and packed into its tiles, so a one-token step either rewrote
every weight twice (1 byte read, 4 written: three quarters of an FP8 step's time,
benchmarks/RESULTS.md) or read decoded copies twice the codes' size (four times nvfp4's).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from passes.base.numbers import f32_hex
from passes.ir.dialect import GemvIsa, NamedOp, ScaleFormat, Scaling
from passes.ir.formats import E2M1, E4M3, E5M2, FloatFormat
from passes.ir.layouts import ScaleLayout
from passes.ir.types import TensorInfo, shape_text
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import definition, fragment
from passes.lowering.cpu.swizzle import scale_grid
from passes.lowering.definitions import head
from passes.lowering.dims import Dim

# What each variant's instructions need (LLVM's feature names, as the target lists them), in
# order of preference.
GEMV_FEATURES = {
    GemvIsa.AVX512_BF16: ("avx512bf16", "avx512vbmi"),
    GemvIsa.AVX2: ("avx2", "fma", "f16c"),
}
CHUNK = 64  # bytes of a row a chunk takes (one 512-bit load; two 256-bit ones)

# chunks a step of a row's loop takes at most: AVX-512 2 where K allows (4 accumulators of 16
# lanes); AVX2 1 (2 accumulators of 16 lanes, 4 of its 16 registers: with 32 lanes or 2 chunks
# the loop spilled registers and ran slower)
MAX_CHUNKS = {GemvIsa.AVX512_BF16: 2, GemvIsa.AVX2: 1}
# AVX2 code prefetches the codes this many bytes past each step's (the next row's, at K = 2048):
# 2048 x 5632 weights past the L3, fp8-current 0.44 -> 0.38 ms a call, fp8-block 0.48 -> 0.44,
# mxfp8 0.51 -> 0.47, nvfp4 0.24 -> 0.23 (1024: 0.39-0.40, 4096 and 8192 no better; RESULTS.md).
# AVX-512 code has no prefetch: not measured on such a host
PREFETCH_BYTES = 2048
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
    fp4: bool = False  # E2M1 codes, two a byte: nvfp4's, or mxfp4's (E8M0 scales)
    row_scales: bool = False  # fp8-rowwise: a scale per row, applied after the loop

    @property
    def mxfp4(self) -> bool:
        return self.fp4 and self.scale_format is ScaleFormat.E8M0


# each block-scale format's (A's block, B's block, A's layout, B's layout)
_BLOCKS = {
    ScaleFormat.FP32: ((1, 128), (128, 128), ScaleLayout.BLOCK1D, ScaleLayout.BLOCK2D),
    ScaleFormat.E8M0: ((1, 32), (1, 32), ScaleLayout.MX, ScaleLayout.MX),
    ScaleFormat.NVFP4: ((1, 16), (1, 16), ScaleLayout.MX, ScaleLayout.MX),
}


def gemv_isa(features: tuple[str, ...]) -> GemvIsa | None:
    """The variant a CPU with ``features`` runs (the first whose instructions it has), or None."""
    return next((isa for isa, need in GEMV_FEATURES.items() if set(need) <= set(features)), None)


def gemv_plan(op: NamedOp, isa: GemvIsa) -> Gemv | None:
    """The matrix-vector product of a scaled GEMM that can run as one on ``isa``: A static with
    one row, B ``[N, K]`` (stored transposed), 64 bytes a row's loop step; FP8 operands with
    per-tensor scales, or with the block scales of fp8-block (``K`` a multiple of 128) and mxfp8
    (the caller proves them powers of two: ``decode-gemv``), E4M3 weights on AVX2; or nvfp4's
    E2M1 operands; None otherwise."""
    attrs = op.attrs
    if not attrs.b_transposed:
        return None
    ins, _ = op.signature(dynamic=True)
    if not all(t.is_static for t in ins):
        return None
    globals_ = attrs.scale_format is ScaleFormat.NVFP4  # nvfp4's global scale operands
    fp4 = attrs.a_format == E2M1 or attrs.b_format == E2M1
    a, b = ins[0], ins[3 if globals_ else 2]
    if b.rank != 2 or math.prod(a.shape[:-1]) != 1:
        return None
    n, k = b.shape
    if k % CHUNK or a.shape[-1] != k:
        return None
    fp8 = (E4M3, E5M2)
    if fp4:
        if attrs.a_format != E2M1 or attrs.b_format != E2M1:
            return None
        if not globals_ and isa is not GemvIsa.AVX2:
            return None  # mxfp4: AVX2's integer loop only
    elif attrs.a_format not in fp8 or attrs.b_format not in fp8:
        return None
    elif isa is GemvIsa.AVX2 and attrs.b_format != E4M3:
        return None  # the f16 decode is E4M3's (a forward weight's format in every recipe)
    if attrs.scaling is not Scaling.BLOCK:
        return Gemv(n, k)
    rowwise = (attrs.a_block, attrs.b_block) == ((1, k), (1, k))
    one_d = (attrs.a_layout, attrs.b_layout) == (ScaleLayout.BLOCK1D,) * 2
    if attrs.scale_format is ScaleFormat.FP32 and rowwise and one_d:
        return Gemv(n, k, 0, ScaleFormat.FP32, row_scales=True)  # fp8-rowwise
    blocks = _BLOCKS.get(attrs.scale_format)
    layouts = tuple(_grid(lay) for lay in (attrs.a_layout, attrs.b_layout))
    if blocks != (attrs.a_block, attrs.b_block, *layouts):
        return None
    bk = blocks[0][1]
    if (2 * k if fp4 else k) % bk:
        return None
    return Gemv(n, k, bk, attrs.scale_format, fp4)


def workgroup_rows(n: int) -> int:
    """Rows a workgroup takes: a power of two dividing ``n``, at most :data:`MAX_ROWS`, and
    small enough for :data:`MIN_GROUPS` workgroups where ``n`` allows."""
    rows = MAX_ROWS
    while rows > 1 and (n % rows or n // rows < MIN_GROUPS):
        rows //= 2
    return rows


def chunk_count(k: int, isa: GemvIsa) -> int:
    """Chunks of 64 codes a step of a row's loop takes: the most, up to ``isa``'s
    :data:`MAX_CHUNKS`, that divide ``k`` into whole steps."""
    return next(c for c in range(MAX_CHUNKS[isa], 0, -1) if k % (c * CHUNK) == 0)


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


def fp4_offset_table() -> list[int]:
    """Each E2M1 code's value times 2 plus 12 (0..24), the unsigned bytes AVX2's nvfp4 loop
    multiplies (``gemv_fp4_decode_i8.mlir``)."""
    return [int(2 * code_value(E2M1, code)) + 12 for code in range(16)]


def _bf16_bits(value: float) -> int:
    f32 = 0x7FC00000 if math.isnan(value) else struct.unpack("<I", struct.pack("<f", value))[0]
    assert f32 & 0xFFFF == 0, f"{value} is not a bf16"
    return f32 >> 16


def _bytes(values: list[int]) -> str:
    """A ``vector<64xi8>`` literal's elements (signed)."""
    return "[" + ", ".join(str(v - 256 if v > 127 else v) for v in values) + "]"


# byte 2j of the interleave is low[j], byte 2j+1 high[j]: 64 little-endian bf16 values (AVX-512)
INTERLEAVE = "[" + ", ".join(str(j // 2 + (64 if j % 2 else 0)) for j in range(128)) + "]"


def executable_names(op: NamedOp) -> tuple[str, str]:
    """The executable's symbol and its function's: IREE links every CPU executable into one,
    so each function's name is its op's own."""
    return f"{op.name}$gemv_executable", f"{op.name}$gemv"


def lower_gemv(op: NamedOp) -> str:
    """The executable and the definition of a GEMM :func:`gemv_plan` takes (for the
    instructions its ``qmlir.gemv`` names)."""
    isa = op.attrs.gemv
    assert isa is not None, f"@{op.name} is not marked for decode-gemv"
    plan = gemv_plan(op, isa)
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
    if plan.mxfp4:
        layouts = (op.attrs.a_layout, op.attrs.b_layout)
        return _lower_mxfp4(plan, isa, fields, a_dims, ins[1], ins[3], layouts)
    if plan.fp4:
        sa, sb = ins[1], ins[4]
        kb = 2 * k // plan.bk
        executable = _executable(plan, isa, exe, fn, (n, kb), 1, E2M1)
        sa_type, sb_type = str(sa.builtin()), str(sb.builtin())
        x_elem = _x_elem(isa, fp4=True)
        e4m3, factor = snippets.decode("x_s_", E4M3), FP4_SCALE_FACTOR[isa]
        activation = _fp4_activation(isa, fields, a_dims, kb, e4m3, "%x_s_val", factor)
        offsets = x_offsets = x_offsets_type = nan_rows = ""
        acc = "%acc"
        if isa is GemvIsa.AVX2:  # the integer loop's offsets (gemv_fp4_decode_i8.mlir)
            offsets = "\n" + fragment("gemv_fp4_offsets.mlir", p="x_", XK=2 * k, LANES=k // 4)
            x_offsets, x_offsets_type = "%x_offsets, ", f"tensor<{k // 4}xi32>, "
            # a NaN block scale, which the loop's f16 decode reads as a number
            acc, nan_rows = (
                "%acc_sums",
                "\n" + fragment("gemv_nan_rows.mlir", N=n, K=kb, codes="%b_S"),
            )
        body = definition(
            "scaled_matmul_nvfp4_gemv.mlir",
            fields,
            x_elem=x_elem,
            XK=2 * k,
            KB=kb,
            sa_type=sa_type,
            sb_type=sb_type,
            unswizzle_a=scale_grid("x_", "%sa", sa_type, Dim(1), kb, op.attrs.a_layout),
            unswizzle_b=scale_grid("b_", "%sb", sb_type, Dim(n), kb, op.attrs.b_layout),
            activation=activation,
            offsets=offsets,
            x_offsets=x_offsets,
            x_offsets_type=x_offsets_type,
            acc=acc,
            nan_rows=nan_rows,
            alpha=fragment("gemv_alpha.mlir", **alpha, sa="%ga", sb="%gb"),
        )
        return f"{executable}\n{body}"
    sa, sb = ins[1], ins[3]
    fields["x_elem"] = _x_elem(isa)
    fields["acc"], fields["nan_rows"] = "%acc", ""
    if isa is GemvIsa.AVX2:  # E4M3's NaN, which the f16 decode reads as a number
        fields["acc"] = "%acc_sums"
        fields["nan_rows"] = "\n" + fragment("gemv_nan_rows.mlir", N=n, K=k, codes="%b")
    fields["activation"] = fragment(
        "gemv_activation.mlir",
        p="a_",
        a_shape=shape_text(a.shape),
        K=k,
        a_dims=a_dims,
        x_elem=fields["x_elem"],
        decode_a=snippets.decode("a_", op.attrs.a_format),
        to_x=_to_x(isa, op.attrs.b_format, "a_", "%a_val"),
    )
    fmt = op.attrs.b_format
    if not plan.bk:
        executable = _executable(plan, isa, exe, fn, (0, 0), 1, fmt)
        sa_type, sb_type = str(sa.builtin()), str(sb.builtin())
        if plan.row_scales:
            scaled = fragment("gemv_alpha_rows.mlir", **alpha, sa_type=sa_type, sb_type=sb_type)
        else:
            scaled = fragment("gemv_alpha.mlir", **alpha, sa="%a_scale_inv", sb="%b_scale_inv")
        body = definition(
            "scaled_matmul_gemv.mlir", fields, alpha=scaled, sa_type=sa_type, sb_type=sb_type
        )
        return f"{executable}\n{body}"
    rb, kb = (128 if plan.scale_format is ScaleFormat.FP32 else 1), k // plan.bk
    w_grid = sb.shape if plan.scale_format is ScaleFormat.FP32 else (n, kb)
    executable = _executable(plan, isa, exe, fn, w_grid, rb, fmt)
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
            unswizzle_a=scale_grid("a_", "%sa", grid["sa_type"], Dim(1), kb, op.attrs.a_layout),
            unswizzle_b=scale_grid("b_", "%sb", grid["sb_type"], Dim(n), kb, op.attrs.b_layout),
            decode_x=fragment("decode_e8m0_f32.mlir", p="x_", code="%x_code"),
        )
        doc = "E8M0 scales of 1 x 32 blocks, mx layout"
    scale_x, x_scales = "", "%x_scales"
    if isa is GemvIsa.AVX2:  # the 2^8 its decode leaves out of each block's products
        scale_x = "\n" + fragment("gemv_scales_times.mlir", KB=kb, factor=f32_hex(X_SUMS_FACTOR))
        x_scales = "%x_scales_times"
    body = definition(
        "scaled_matmul_block_gemv.mlir",
        fields,
        **grid,
        scales=scales,
        scale_doc=doc,
        scale_x=scale_x,
        x_scales=x_scales,
    )
    return f"{executable}\n{body}"


def _grid(layout: ScaleLayout | None) -> ScaleLayout | None:
    """mx-layout scales and compact ones read alike here (both as the [rows, K blocks] grid)."""
    return ScaleLayout.MX if layout is ScaleLayout.COMPACT else layout


def _lower_mxfp4(
    plan: Gemv,
    isa: GemvIsa,
    fields: dict[str, object],
    a_dims: str,
    sa: TensorInfo,
    sb: TensorInfo,
    layouts: tuple[ScaleLayout, ScaleLayout],
) -> str:
    """mxfp4's one-row GEMM (AVX2): nvfp4's integer loop over 32-code blocks with E8M0 scales;
    x's E8M0 scales decoded beside the dispatch, times a quarter (the integers' factor 4)."""
    n, k = plan.n, plan.k
    kb = 2 * k // plan.bk
    exe, fn = str(fields["exe"]), str(fields["fn"])
    executable = _executable(plan, isa, exe, fn, (n, kb), 1, E2M1)
    sa_type, sb_type = str(sa.builtin()), str(sb.builtin())
    e8m0 = fragment("decode_e8m0_f32.mlir", p="x_s_", code="%x_s_code")
    activation = _fp4_activation(isa, fields, a_dims, kb, e8m0, "%x_s_f32", 0.25)
    body = definition(
        "scaled_matmul_mxfp4_gemv.mlir",
        fields,
        x_elem="i8",
        XK=2 * k,
        KB=kb,
        LANES=k // 4,
        sa_type=sa_type,
        sb_type=sb_type,
        unswizzle_a=scale_grid("x_", "%sa", sa_type, Dim(1), kb, layouts[0]),
        unswizzle_b=scale_grid("b_", "%sb", sb_type, Dim(n), kb, layouts[1]),
        activation=activation,
        offsets="\n" + fragment("gemv_fp4_offsets.mlir", p="x_", XK=2 * k, LANES=k // 4),
    )
    return f"{executable}\n{body}"


def _fp4_activation(
    isa: GemvIsa,
    fields: dict[str, object],
    a_dims: str,
    kb: int,
    decode_scale: str,
    scale: str,
    factor: float,
) -> str:
    """An FP4 GEMM's A (``gemv_fp4_activation.mlir``): its E2M1 values as ``isa``'s x, and its
    block scales decoded by ``decode_scale`` (defining ``scale``) times ``factor``."""
    k = int(str(fields["K"]))
    return fragment(
        "gemv_fp4_activation.mlir",
        p="x_",
        a_shape=fields["a_shape"],
        a_dims=a_dims,
        K=k,
        XK=2 * k,
        KB=kb,
        decode_fp4=snippets.decode_e2m1("x_", "%x_fp4"),
        x_elem=_x_elem(isa, fp4=True),
        to_x=_to_x(isa, E2M1, "x_", "%x_fp4"),
        decode_scale=decode_scale,
        s_val=scale,
        scale_factor=factor,
    )


def _x_elem(isa: GemvIsa, fp4: bool = False) -> str:
    """The element type of x, the decoded activation, that ``isa``'s loop multiplies: bf16
    (AVX-512), f32 (AVX2, FP8) or i8 (AVX2, nvfp4: E2M1 values times 2)."""
    if isa is GemvIsa.AVX512_BF16:
        return "bf16"
    return "i8" if fp4 else "f32"


# what x's nvfp4 block scales are multiplied by: AVX2's integer sums are 4 times the products',
# and its loop's f16 decode of the row's scales leaves out 2^8 (gemv_fp4_scales_f16.mlir)
FP4_SCALE_FACTOR = {GemvIsa.AVX512_BF16: 1.0, GemvIsa.AVX2: 2.0**8 / 4}


# what x carries for AVX2's E4M3 decode into f32 bits (gemv_e4m3_f32.mlir): the decode leaves
# 2^-120 in a code's value; x takes 2^112 of it (E4M3's and E5M2's largest, 448 and 57344, stay
# finite) and the sums' 2^-8 is taken back after the loop (%f32_factor, gemv_defs_f32.mlir)
X_FACTOR = {E4M3: 2.0**112}
X_SUMS_FACTOR = 2.0**8  # what the sums (per tensor) or x's block scales take back


def _to_x(isa: GemvIsa, b_format: FloatFormat, p: str, val: str) -> str:
    """A decoded activation value ``val`` as ``isa``'s x (AVX2: times the factor B's decode
    leaves out)."""
    if isa is GemvIsa.AVX512_BF16:
        return fragment("gemv_x_bf16.mlir", p=p, val=val)
    if b_format == E2M1:
        return fragment("gemv_x_i8.mlir", p=p, val=val)
    return fragment("gemv_x_f32.mlir", p=p, val=val, factor=X_FACTOR[b_format])


def tables(fmt: FloatFormat) -> dict[str, str]:
    """The byte tables of ``fmt``'s bf16 values (AVX-512): FP8's two 128-entry tables
    (``hi0``/``hi1``, ``lo0``/``lo1``: magnitudes) or E2M1's 16-entry ones (``fp4_hi``,
    ``fp4_lo``: signed codes)."""
    if fmt == E2M1:
        bits = [_bf16_bits(code_value(fmt, code)) for code in range(16)] + [0] * 48
        return {
            "fp4_hi": _bytes([v >> 8 for v in bits]),
            "fp4_lo": _bytes([v & 0xFF for v in bits]),
        }
    table = bf16_table(fmt)
    high, low = [v >> 8 for v in table], [v & 0xFF for v in table]
    return {
        "hi0": _bytes(high[:64]),
        "hi1": _bytes(high[64:]),
        "lo0": _bytes(low[:64]),
        "lo1": _bytes(low[64:]),
    }


def e4m3_half_decodes(p: str) -> dict[str, str]:
    """The holes of ``gemv_fp8_decode_f32.mlir`` (prefix ``p``): each 32 codes of a chunk
    decoded into f32 bits (``gemv_e4m3_f32.mlir``)."""
    return {
        f"decode_{h}": fragment(
            "gemv_e4m3_f32.mlir", p=f"{p}{h}_", codes=f"%{p}codes_{h}", out=f"{p}{h}"
        )
        for h in "ab"
    }


def _chunk(
    plan: Gemv,
    isa: GemvIsa,
    c: int,
    acc: tuple[str, str],
    scale_fields: dict[str, int],
) -> str:
    """Chunk ``c`` of a loop step: its 64 bytes decoded and their products accumulated into
    ``acc`` (``%<p>next_a``, ``%<p>next_b``)."""
    p, n, k = f"c{c}_", plan.n, plan.k
    common = {"p": p, "N": n, "K": k, "XK": 2 * k if plan.fp4 else k, "offset": c * CHUNK}
    accs = {"p": p, "acc_a": acc[0], "acc_b": acc[1]}
    if plan.fp4:
        if plan.mxfp4:
            scales = fragment("gemv_mxfp4_scales_i8.mlir", p=p, **scale_fields)
            decode = fragment("gemv_fp4_decode_i8.mlir", **common, LANES=k // 4)
            accumulate = fragment("gemv_accumulate_mxfp4_i8.mlir", **accs)
        elif isa is GemvIsa.AVX2:
            scales = fragment("gemv_fp4_scales_f16.mlir", p=p, **scale_fields)
            decode = fragment("gemv_fp4_decode_i8.mlir", **common, LANES=k // 4)
            accumulate = fragment("gemv_accumulate_fp4_i8.mlir", **accs)
        else:
            scales = fragment("gemv_fp4_scales.mlir", p=p, **scale_fields)
            decode = fragment("gemv_fp4_decode.mlir", **common, interleave=INTERLEAVE)
            accumulate = fragment("gemv_accumulate_fp4.mlir", **accs)
        return f"{decode}\n{scales}\n{accumulate}"
    if isa is GemvIsa.AVX2:
        decode = fragment("gemv_fp8_decode_f32.mlir", **common, **e4m3_half_decodes(p))
        if not plan.bk:
            return f"{decode}\n{fragment('gemv_accumulate_f32.mlir', **accs)}"
        halves, lanes = fragment("gemv_products_f32_blocks.mlir", p=p), 8
    else:
        decode = fragment("gemv_fp8_decode.mlir", **common, interleave=INTERLEAVE)
        if not plan.bk:
            return f"{decode}\n{fragment('gemv_accumulate.mlir', **accs)}"
        halves, lanes = fragment("gemv_products_bf16.mlir", p=p), 16
    # two blocks of 32 codes' products, times one factor (fp8-block: a step lies in one K
    # block of 128) or each its own (mxfp8)
    scaled_file = (
        "gemv_accumulate_scaled_block.mlir"
        if plan.scale_format is ScaleFormat.FP32
        else "gemv_accumulate_factors.mlir"
    )
    scaled = fragment(scaled_file, **accs, KB=scale_fields["KB"], L=lanes)
    return f"{decode}\n{halves}\n{scaled}"


def _factor_defs(plan: Gemv, scale_fields: dict[str, int]) -> tuple[str, str]:
    """AVX2's block factors (``%factors``, x's block scales times the weight's) as the
    workgroup's text before its rows' loop (fp8-block: one row block's) and as each row's
    (mxfp8: the row's own E8M0 scales, 8 at a time, the rest one by one)."""
    if plan.scale_format is ScaleFormat.FP32:
        return "\n" + fragment("gemv_block_factors.mlir", **scale_fields), ""
    kb = scale_fields["KB"]
    fields = {**scale_fields, "p": "rf_", "KB_VEC": kb - kb % 8}
    tail = ""
    if kb % 8:
        decode = fragment("decode_e8m0_f32.mlir", p="rf_d_", code="%rf_tail_code")
        tail = fragment("gemv_row_factors_e8m0_tail.mlir", **fields, decode=decode)
    return "", "\n" + fragment("gemv_row_factors_e8m0.mlir", **fields, tail=tail)


# each variant's decode constants (a snippet) and how its loop decodes, by (isa, nvfp4)
_DECODE_DEFS = {
    (GemvIsa.AVX512_BF16, False): (
        "gemv_defs_bf16_tables.mlir",
        "128-entry byte tables of the magnitudes' bf16 values, vpermi2b",
    ),
    (GemvIsa.AVX512_BF16, True): (
        "gemv_defs_fp4_tables.mlir",
        "16-entry byte tables of E2M1's bf16 values, vpermb",
    ),
    (GemvIsa.AVX2, False): (
        "gemv_defs_f32.mlir",
        "each code's bits shifted into an f32's, denormals-are-zero off for the loop",
    ),
    (GemvIsa.AVX2, True): (
        "gemv_defs_fp4_i8.mlir",
        "each code's value times 2 plus 12 from a 16-entry byte table (vpshufb), multiplied with"
        " x's integers by vpmaddubsw",
    ),
}


def _executable(
    plan: Gemv,
    isa: GemvIsa,
    exe: str,
    fn: str,
    w_grid: tuple[int, ...],
    rb: int,
    fmt: FloatFormat,
) -> str:
    """The ``stream.executable`` of ``plan``'s matrix-vector product over ``fmt`` codes, in
    ``isa``'s instructions."""
    n, k = plan.n, plan.k
    chunks = 1 if plan.fp4 else chunk_count(k, isa)
    integer = plan.fp4 and isa is GemvIsa.AVX2  # nvfp4's products in integers
    # block-scaled FP8: each block's products (AVX2: summed into 8 lanes) times its factor
    factors = bool(plan.bk) and not plan.fp4
    lanes_count = 8 if integer or (factors and isa is GemvIsa.AVX2) else 16
    acc_type = f"vector<{lanes_count}xf32>"
    sums = [f"%acc{i}" for i in range(2 * chunks)]
    lanes, last = [], "%sums#0"
    for i in range(1, len(sums)):
        name = "%lanes" if i == len(sums) - 1 else f"%lanes{i}"
        lanes.append(f"        {name} = arith.addf {last}, %sums#{i} : {acc_type}")
        last = name
    kb = (2 * k if plan.fp4 else k) // max(plan.bk, 1)
    scale_fields = {"KB": kb, "RB": w_grid[0], "WKB": w_grid[1], "N": n}
    parts = [
        _chunk(plan, isa, c, (sums[2 * c], sums[2 * c + 1]), scale_fields) for c in range(chunks)
    ]
    scale_defs = row_defs = group_defs = x_arg = w_arg = ""
    if plan.bk:
        x_arg, w_arg = "%xs_binding: !stream.binding, ", "%ws_binding: !stream.binding, "
        if plan.fp4:
            defs_name = "gemv_defs_mxfp4.mlir" if plan.mxfp4 else "gemv_defs_fp4.mlir"
            defs = fragment(defs_name, KB=kb, N=n, K=k)
            if integer:
                x_arg += "%xo_binding: !stream.binding, "
        else:
            elem = "f32" if plan.scale_format is ScaleFormat.FP32 else "i8"
            defs = fragment("gemv_defs_block.mlir", **scale_fields, bk=plan.bk, rb=rb, ws_elem=elem)
            if factors:
                defs += "\n" + fragment("gemv_defs_factors.mlir", KB=kb)
                group_defs, row_defs = _factor_defs(plan, scale_fields)
            else:
                row_defs = "\n        %nb = arith.divui %n, %c_rb : index"
        scale_defs = "\n" + defs
    defs_file, decode_doc = _DECODE_DEFS[(isa, plan.fp4)]
    decode_fields = tables(fmt) if isa is GemvIsa.AVX512_BF16 else {}
    if integer:
        decode_fields = {"table": _bytes(fp4_offset_table() * 2), "LANES": k // 4}
    elif isa is GemvIsa.AVX2:
        decode_fields = {"sums_factor": f32_hex(X_SUMS_FACTOR)}
    decode_defs = fragment(defs_file, **decode_fields)
    prefetch_defs = prefetch = ""
    if isa is GemvIsa.AVX2:
        prefetch_defs = "\n" + fragment(
            "gemv_prefetch_defs.mlir", N=n, K=k, NK=n * k, distance=PREFETCH_BYTES, last=n * k - 1
        )
        prefetch = "\n" + fragment("gemv_prefetch.mlir", NK=n * k)
    f32_decode = isa is GemvIsa.AVX2 and not plan.fp4
    scale_total = decode_end = ""
    if f32_decode:
        decode_end = "\n" + fragment("gemv_restore_mxcsr.mlir")
        if not plan.bk:  # block-scaled: x's scales carry it (gemv_scales_times.mlir)
            scale_total = "\n        %total_scaled = arith.mulf %total, %f32_factor : f32"
    return fragment(
        "gemv_fp8_executable.mlir",
        exe=exe,
        fn=fn,
        N=n,
        K=k,
        XK=2 * k if plan.fp4 else k,
        x_elem=_x_elem(isa, plan.fp4),
        rows=workgroup_rows(n),
        step=chunks * CHUNK,
        chunk_count=chunks,
        accumulators=len(sums),
        iter_args=", ".join(f"{acc} = %zero" for acc in sums),
        acc_types=", ".join([acc_type] * len(sums)),
        lanes_count=lanes_count,
        yields=", ".join(f"%c{c}_next_{ab}" for c in range(chunks) for ab in "ab"),
        lanes="\n".join(lanes),
        chunks="\n".join(parts),
        x_scales_arg=x_arg,
        w_scales_arg=w_arg,
        scale_defs=scale_defs,
        row_defs=row_defs,
        group_defs=group_defs,
        decode_defs=decode_defs,
        decode_doc=decode_doc,
        scale_total=scale_total,
        total="%total_scaled" if scale_total else "%total",
        decode_end=decode_end,
        needs=" and ".join(GEMV_FEATURES[isa]),
        prefetch_defs=prefetch_defs,
        prefetch=prefetch,
    )
