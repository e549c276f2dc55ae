"""llvm-cpu: a many-row FP8 ``scaled_matmul`` (a generator's prefill, a batch) as a GEMM that
reads B's codes as stored and decodes them inside its loop (``templates/gemm_fp8_executable.mlir``).

The data-tiled GEMM IREE makes of the decomposed op needs B decoded to bf16 and packed into its
tiles: with the weights in a parameter file and no decoded copy kept (a generator's
``pack_weights="auto"``), every call decodes and packs each weight (1 byte read, 2 written, read
again), a fifth of a 512-token prefill's time (benchmarks/RESULTS.md). This GEMM takes x, A's
decoded rows (bf16, ``[M, K]`` as they lie), and B's codes ``[N, K]``: each workgroup a block of
rows of each; a tile of :data:`TILE_ROWS` rows of x against two rows of B, a step of K 32 codes of
each B row decoded by byte-table lookups (``fp8_bf16_lookup.mlir``, the decode step's:
``gemv.py``) and multiplied by ``vdpbf16ps``, one 16-lane accumulator per (row of x, row of B),
summed at the end by a tree of shuffles (``gemm_merge.mlir``). The products are exact, the sums
f32 in another order than the data-tiled GEMM's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from passes.ir.dialect import GemvIsa, NamedOp, Scaling
from passes.ir.formats import E4M3, E5M2, FloatFormat
from passes.ir.types import DYNAMIC, TensorInfo, shape_text
from passes.lowering.cpu.common import definition, fragment
from passes.lowering.cpu.gemv import GEMV_FEATURES, INTERLEAVE, tables
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, Dims, x_rows_dynamic

LANES = 16  # rows of B a panel, rows of x a tile (16 accumulators of 16 lanes)
STEP = 32  # codes of a B row a decode: K must be a multiple
MAX_K_BLOCK = 512  # K a panel at most (its panel 32 x that bytes on the stack: 16 KiB)
BLOCK_ROWS = 256  # rows of x a workgroup (M is dynamic: its blocks' count is ceil(M / 256))
B_ROWS = 64  # rows of B a workgroup at most


DECODE_DOC = "vpermi2b over the 128 magnitudes' bf16 bytes"


@dataclass(frozen=True)
class Gemm:
    """A GEMM this file writes: B ``[n, k]`` E4M3 or E5M2 codes, per-tensor scales."""

    n: int
    k: int


def b_rows(n: int) -> int:
    """Rows of B a workgroup takes: the largest multiple of 16 dividing ``n`` up to
    :data:`B_ROWS`."""
    return next(r for r in range(B_ROWS, 0, -LANES) if n % r == 0)


def k_block(k: int) -> int:
    """K a panel takes: the largest multiple of :data:`STEP` dividing ``k``, at most
    :data:`MAX_K_BLOCK` (2816: 352)."""
    return next(c for c in range(MAX_K_BLOCK, 0, -STEP) if k % c == 0)


def transpose(rows: list[str]) -> tuple[str, list[str]]:
    """The text transposing 16 vectors of 16 lanes (``rows[r]``: row r's 16 pairs) by four
    rounds of two-source shuffles (each pair of vectors whose rows differ in one bit exchanges
    blocks of 1, 2, 4, 8 lanes), and the names of the results: result p holds lane p of every
    row, in row order."""
    assert len(rows) == LANES
    # each vector's lanes as (row, lane) of the input
    vectors = [(name, [(r, lane) for lane in range(LANES)]) for r, name in enumerate(rows)]
    lines = []
    for bit in range(4):
        group = 1 << bit
        out: list[tuple[str, list[tuple[int, int]]]] = [("", [])] * LANES
        done: set[int] = set()
        for i, (a, a_lanes) in enumerate(vectors):
            if i in done:
                continue
            j = next(
                j
                for j, (_, b_lanes) in enumerate(vectors)
                if j not in done
                and j != i
                and b_lanes[0][0] == a_lanes[0][0] + group
                and b_lanes[0][1] == a_lanes[0][1]
            )
            b, b_lanes = vectors[j]
            done |= {i, j}
            lo_mask: list[int] = []
            hi_mask: list[int] = []
            for start in range(0, LANES, 2 * group):
                low = range(start, start + group)
                high = range(start + group, start + 2 * group)
                lo_mask += [*low, *(LANES + q for q in low)]
                hi_mask += [*high, *(LANES + q for q in high)]
            lo, hi = f"%tr{bit}_{i}", f"%tr{bit}_{j}"
            lines.append(
                fragment(
                    "gemm_transpose.mlir", a=a, b=b, lo=lo, hi=hi, lo_mask=lo_mask, hi_mask=hi_mask
                )
            )
            both = a_lanes + b_lanes
            out[i] = (lo, [both[q] for q in lo_mask])
            out[j] = (hi, [both[q] for q in hi_mask])
        vectors = out
    results = [""] * LANES
    for name, lanes in vectors:
        assert [r for r, _ in lanes] == list(range(LANES)), lanes
        assert len({lane for _, lane in lanes}) == 1, lanes
        results[lanes[0][1]] = name
    return "\n".join(lines), results


def _panel(rows_file: str, src: tuple[str, str], dst: tuple[str, str, str]) -> str:
    """The text decoding 16 rows' 32 codes at ``%k`` (from ``src``, a memref and its type; the
    rows' indices from ``rows_file``) and storing them transposed, one line of 16 pairs for each
    pair of K, from line ``%line0`` of ``dst`` (a memref, its type, its leading indices: an SSA
    value and a comma, or none)."""
    parts, rows = [], []
    for j in range(LANES // 2):
        p = f"pr{j}_"
        lookup = fragment("fp8_bf16_lookup.mlir", p=p, interleave=INTERLEAVE)
        parts.append(fragment(rows_file, p=p, ra=2 * j, rb=2 * j + 1))
        parts.append(
            fragment(
                "gemm_panel_rows.mlir",
                p=p,
                src=src[0],
                src_type=src[1],
                concat=list(range(2 * STEP)),
                lookup=lookup,
            )
        )
        rows += [f"%{p}a", f"%{p}b"]
    transposed, lines = transpose(rows)
    parts.append(transposed)
    lead = dst[2]
    lead_reads = f" {lead.rstrip(', ')}:index" if lead else ""
    parts += [
        fragment(
            "gemm_panel_store.mlir",
            p=f"pl{line}_",
            dst=dst[0],
            dst_type=dst[1],
            lead=lead,
            lead_reads=lead_reads,
            line=line,
            v=v,
        )
        for line, v in enumerate(lines)
    ]
    return "\n".join(parts)


def executable(exe: str, fn: str, plan: Gemm, fmt: FloatFormat) -> str:
    """The ``stream.executable`` of ``plan``'s GEMM over ``fmt`` codes (AVX512-BF16 and
    AVX512-VBMI)."""
    n, k = plan.n, plan.k
    nb, kc = b_rows(n), k_block(k)
    panel = _panel(
        "gemm_w_rows.mlir",
        ("%w", f"memref<{n}x{k}xi8>"),
        ("%panel", f"memref<{kc // 2}x16xi32>", ""),
    )
    return fragment(
        "gemm_fp8_executable.mlir",
        exe=exe,
        fn=fn,
        N=n,
        K=k,
        KH=k // 2,
        KC=kc,
        KP=kc // 2,
        K_last=k - kc,
        NB=nb,
        NG=n // nb,
        MB=BLOCK_ROWS,
        decode_doc=DECODE_DOC,
        needs=" and ".join(GEMV_FEATURES[GemvIsa.AVX512_BF16]),
        decode_defs=fragment("gemv_defs_bf16_tables.mlir", **tables(fmt)),
        panel=panel,
        full_tile=_tile(n, k, kc, tail=False),
        tail_tile=_tile(n, k, kc, tail=True),
    )


def x_executable(exe: str, fn: str, k: int, fmt: FloatFormat) -> str:
    """The ``stream.executable`` decoding A's ``fmt`` codes ``[M, k]`` and tiling them as the
    GEMM reads them (``gemm_x_executable.mlir``)."""
    tiled = f"memref<?x{k // 2}x16xi32>"
    panel = _panel("gemm_x_rows.mlir", ("%a", f"memref<?x{k}xi8>"), ("%x", tiled, "%t, "))
    return fragment(
        "gemm_x_executable.mlir",
        exe=exe,
        fn=fn,
        K=k,
        KH=k // 2,
        decode_doc=DECODE_DOC,
        decode_defs=fragment("gemv_defs_bf16_tables.mlir", **tables(fmt)),
        panel=panel,
    )


def _tile(n: int, k: int, kc: int, tail: bool) -> str:
    """A tile of 16 rows of x against the panel (``gemm_tile.mlir``): whole, its rows' addresses
    a constant apart, or the last, of fewer rows (``tail``: rows past M repeat the last and are
    not stored)."""
    p = "tail_" if tail else "full_"
    suffix = "_tail" if tail else ""
    rows, products, stores = [], [], []
    for i in range(LANES):
        r, x, o = f"{p}r{i}_", f"{p}x{i}_", f"{p}o{i}_"
        rows.append(fragment(f"gemm_row{suffix}.mlir", p=r, tile0="%tile0", N=n, i=i))
        products.append(
            fragment(
                "gemm_products.mlir",
                p=x,
                KH=k // 2,
                i=i,
                t=f"%{p}t",
                kp=f"%{p}kp",
                wv=f"%{p}wv",
                acc=f"%{p}acc_{i}",
            )
        )
        row = {"acc": f"%{p}acc#{i}", "row": f"%{r}row", "N": n, "i": i}
        if tail:
            row["in"] = f"%{r}in"
        stores.append(fragment(f"gemm_store{suffix}.mlir", p=o, **row))
    return fragment(
        "gemm_tile.mlir",
        p=p,
        tile0="%tile0",
        N=n,
        KH=k // 2,
        KP=kc // 2,
        row_reads=" %m:index %m_last:index" if tail else "",
        rows="\n".join(rows),
        iter_args=", ".join(f"%{p}acc_{i} = %{p}r{i}_init" for i in range(LANES)),
        acc_types=", ".join(["vector<16xf32>"] * LANES),
        products="\n".join(products),
        yields=", ".join(f"%{p}x{i}_next" for i in range(LANES)),
        stores="\n".join(stores),
    )


def gemm_plan(op: NamedOp) -> Gemm | None:
    """The GEMM of a scaled GEMM that runs as one here: FP8 operands (E4M3 or E5M2) with
    per-tensor scales, B ``[N, K]`` static (stored transposed) with ``N`` a multiple of 16 and
    ``K`` of :data:`STEP`, A ``[..., K]`` with more than one row or a dynamic number; None
    otherwise."""
    attrs = op.attrs
    if not attrs.b_transposed or attrs.scaling is Scaling.BLOCK:
        return None
    if attrs.a_format not in (E4M3, E5M2) or attrs.b_format not in (E4M3, E5M2):
        return None
    ins, _ = op.signature(dynamic=True)
    a, b = ins[0], ins[2]
    if b.rank != 2 or not b.is_static or a.rank < 2:
        return None
    n, k = b.shape
    if n % LANES or k % STEP or a.shape[-1] != k:
        return None
    lead = a.shape[:-1]
    if DYNAMIC not in lead and math.prod(lead) <= 1:
        return None  # one row: decode-gemv's
    return Gemm(n, k)


def executable_names(op: NamedOp, part: str = "gemm") -> tuple[str, str]:
    """An executable's symbol and its function's (IREE links every CPU executable into one:
    each function's name is its op's own): ``part`` ``gemm`` or ``x`` (A's tiling)."""
    return f"{op.name}${part}_executable", f"{op.name}${part}"


def lower_gemm(op: NamedOp) -> str:
    """The executables and the definition of a GEMM :func:`gemm_plan` takes."""
    plan = gemm_plan(op)
    assert plan is not None, f"@{op.name} is not a many-row GEMM over B's codes"
    ins, (out,) = op.signature(dynamic=x_rows_dynamic(op))
    a = ins[0]
    n, k = plan.n, plan.k
    exe, fn = executable_names(op)
    x_exe, x_fn = executable_names(op, "x")
    a_dims = Dims.read("%a", a)  # no lines when static; out's dynamic dims are a's leading ones
    lead = a.shape[:-1]
    m = DYNAMIC if DYNAMIC in lead else math.prod(lead)
    groups = f"[{', '.join(str(i) for i in range(a.rank - 1))}], [{a.rank - 1}]"
    fields: dict[str, object] = {
        **head(op),
        "exe": exe,
        "fn": fn,
        "N": n,
        "K": k,
        "KH": k // 2,
        "M": shape_text((m,)),
        "a_shape": shape_text(a.shape),
        "out_shape": shape_text(out.shape),
    }
    if a.rank > 2:
        collapse = "\n" + fragment("gemm_collapse.mlir", **fields, groups=groups)
        sizes = a_dims.shape(out)
        size_reads = "".join(f" {s}:index" for s in sizes.split(", ") if s.startswith("%"))
        sizes = a_dims.shape(out)
        size_reads = "".join(f" {v}:index" for v in sizes.split(", ") if v.startswith("%"))
        expand = "\n" + fragment(
            "gemm_expand.mlir", **fields, groups=groups, sizes=sizes, size_reads=size_reads
        )
    else:
        collapse = "\n" + fragment("gemm_rows_2d.mlir", **fields)
        expand = "\n" + fragment("gemm_out_2d.mlir", **fields)
    rows = Dim.rows("%a_rows", TensorInfo((m, k), "i8"))  # dynamic: read as %dyn_m
    m_value = (
        f"arith.addi {rows.name}, %c0 : index" if rows.dynamic else f"arith.constant {m} : index"
    )
    body = definition(
        "scaled_matmul_gemm.mlir",
        fields,
        a_dims_defs=a_dims.defs(),
        collapse=collapse + rows.defs(),
        m_value=m_value,
        x_exe=x_exe,
        x_fn=x_fn,
        expand=expand,
    )
    gemm = executable(exe, fn, plan, op.attrs.b_format)
    return f"{x_executable(x_exe, x_fn, k, op.attrs.a_format)}\n{gemm}\n{body}"
