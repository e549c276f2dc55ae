"""llvm-cpu: a one-row per-tensor FP8 ``scaled_matmul`` (a generator's decode step) as a
matrix-vector product that reads B's FP8 codes as stored and decodes them inside its loop.

``decode-gemv`` (``passes/decode_gemv.py``) marks the declarations that take it
(:func:`gemv_shape`; ``qmlir.gemv``); :func:`lower_gemv` writes their definition and the
hand-written executable it dispatches (``templates/gemv_fp8_executable.mlir``, one
``gemv_fp8_chunk.mlir`` for each 64 codes of a loop step). The decode is two byte-table lookups
(``vpermi2b``: the high and low byte of each magnitude's bf16 value) and the sign bit: exact
for every code, subnormals, infinities and NaN included (a bf16 holds each FP8 value; the
tables are :func:`bf16_table`). Why: the data-tiled GEMM needs B decoded to bf16 and packed
into its tiles, so a one-token step either rewrote every weight twice (1 byte read, 4 written:
three quarters of an FP8 step's time, benchmarks/RESULTS.md) or read decoded copies twice the
codes' size.
"""

from __future__ import annotations

import math
import struct

from passes.ir.dialect import NamedOp, Scaling
from passes.ir.formats import E4M3, E5M2, FloatFormat
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import definition, fragment
from passes.lowering.definitions import head

# What the executable's instructions need (LLVM's feature names, as the target lists them).
GEMV_FEATURES = ("avx512bf16", "avx512vbmi")
CHUNK = 64  # codes a chunk takes (one 512-bit load)
MAX_CHUNKS = 2  # chunks a step of a row's loop takes: 2 where K allows (4 accumulators)
MAX_ROWS = 16  # rows a workgroup takes at most (16 streamed faster than 32, RESULTS.md)
MIN_GROUPS = 8  # workgroups wanted at least, to spread over the CPU's threads


def gemv_shape(op: NamedOp) -> tuple[int, int] | None:
    """``(N, K)`` of a scaled GEMM that can run as the decoding matrix-vector product: per-tensor
    FP8 operands, A static with one row, B ``[N, K]`` (stored transposed) with ``K`` a multiple
    of 64; None otherwise."""
    attrs = op.attrs
    if attrs.scaling is Scaling.BLOCK or not attrs.b_transposed:
        return None
    if attrs.a_format not in (E4M3, E5M2) or attrs.b_format not in (E4M3, E5M2):
        return None
    (a, _, b, _), _ = op.signature(dynamic=True)
    if not a.is_static or not b.is_static or b.rank != 2 or math.prod(a.shape[:-1]) != 1:
        return None
    n, k = b.shape
    if k % CHUNK or a.shape[-1] != k:
        return None
    return n, k


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
    """The value of FP8 code ``code`` (0..255) of ``fmt``: E4M3 (magnitude 0x7F NaN) or E5M2
    (the top exponent: inf or NaN)."""
    sign = -1.0 if code & 0x80 else 1.0
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
    bits = []
    for code in range(128):
        value = code_value(fmt, code)
        f32 = 0x7FC00000 if math.isnan(value) else struct.unpack("<I", struct.pack("<f", value))[0]
        assert f32 & 0xFFFF == 0, f"{fmt.name} code {code} is not a bf16"
        bits.append(f32 >> 16)
    return bits


def _bytes(values: list[int]) -> str:
    """A ``vector<64xi8>`` literal's elements (signed)."""
    return "[" + ", ".join(str(v - 256 if v > 127 else v) for v in values) + "]"


def executable_names(op: NamedOp) -> tuple[str, str]:
    """The executable's symbol and its function's: IREE links every CPU executable into one,
    so each function's name is its op's own."""
    return f"{op.name}$gemv_executable", f"{op.name}$gemv"


def lower_gemv(op: NamedOp) -> str:
    """The executable and the definition of a GEMM :func:`gemv_shape` takes."""
    shape = gemv_shape(op)
    assert shape is not None, f"@{op.name} is not a one-row per-tensor FP8 GEMM"
    n, k = shape
    (a, _, _, _), (out,) = op.signature()
    table = bf16_table(op.attrs.b_format)
    high, low = [v >> 8 for v in table], [v & 0xFF for v in table]
    # byte 2j of the interleave is low[j], byte 2j+1 high[j]: 64 little-endian bf16 values
    interleave = "[" + ", ".join(str(j // 2 + (64 if j % 2 else 0)) for j in range(128)) + "]"
    chunks = chunk_count(k)
    sums = [f"%acc{i}" for i in range(2 * chunks)]
    nexts = [f"%c{c}_next_{ab}" for c in range(chunks) for ab in "ab"]
    acc_types = ", ".join(["vector<16xf32>"] * len(sums))
    lanes, last = [], "%sums#0"
    for i in range(1, len(sums)):
        name = "%lanes" if i == len(sums) - 1 else f"%lanes{i}"
        lanes.append(f"        {name} = arith.addf {last}, %sums#{i} : vector<16xf32>")
        last = name
    exe, fn = executable_names(op)
    executable = fragment(
        "gemv_fp8_executable.mlir",
        exe=exe,
        fn=fn,
        N=n,
        K=k,
        rows=workgroup_rows(n),
        step=chunks * CHUNK,
        chunk_count=chunks,
        accumulators=len(sums),
        iter_args=", ".join(f"{acc} = %zero" for acc in sums),
        acc_types=acc_types,
        yields=", ".join(nexts),
        lanes="\n".join(lanes),
        chunks="\n".join(
            fragment(
                "gemv_fp8_chunk.mlir",
                p=f"c{c}_",
                N=n,
                K=k,
                offset=c * CHUNK,
                acc_a=sums[2 * c],
                acc_b=sums[2 * c + 1],
                interleave=interleave,
            )
            for c in range(chunks)
        ),
        hi0=_bytes(high[:64]),
        hi1=_bytes(high[64:]),
        lo0=_bytes(low[:64]),
        lo1=_bytes(low[64:]),
    )
    body = definition(
        "scaled_matmul_gemv.mlir",
        head(op),
        exe=exe,
        fn=fn,
        N=n,
        K=k,
        a_shape="x".join(str(d) for d in a.shape),
        out_shape="x".join(str(d) for d in out.shape),
        a_dims=", ".join(str(i) for i in range(a.rank)),
        out_dims=", ".join(str(i) for i in range(out.rank)),
        out_sizes=", ".join(str(d) for d in out.shape),
        decode_a=snippets.decode("a_", op.attrs.a_format),
    )
    return f"{executable}\n{body}"
