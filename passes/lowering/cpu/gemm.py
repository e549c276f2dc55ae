"""llvm-cpu: a many-row FP8 or NVFP4 ``scaled_matmul`` (a generator's prefill, a batch; per-tensor
scales, or fp8-block's, mxfp8's or nvfp4's block scales with bf16 operands) as a GEMM that reads
B's codes as stored and decodes them inside its loop (``templates/gemm_executable.mlir``).

The data-tiled GEMM IREE makes of the decomposed op needs B decoded to bf16 and packed into its
tiles: with the weights in a parameter file and no decoded copy kept (a generator's
``pack_weights="auto"``), every call decodes and packs each weight (1 byte read, 2 written, read
again). Here two hand-written executables replace it:

- ``gemm_x_executable.mlir``: A's codes ``[M, K]`` decoded to bf16 (times their block scales)
  and tiled as the data-tiled GEMM's left operand: per 16 rows, each pair of K's 16 pairs
  together (a 32-bit word a pair), ``[ceil(M / 16), K / 2, 16]``.
- ``gemm_executable.mlir``: each workgroup takes :data:`BLOCK_ROWS` rows of x and up to
  :data:`B_ROWS` rows of B; per 16 rows of B and block of K (:func:`k_block`), the rows' codes
  are decoded two rows at a time by byte-table lookups (``fp8_bf16_lookup.mlir``, the decode
  step's: ``gemv.py``; nvfp4's E2M1 nibbles: ``fp4_bf16_lookup.mlir``), times their block scales
  (``gemm_panel_scale.mlir``; E4M3 and E8M0 ones decoded to f32 a K block at a time,
  :func:`decode_scales`) and rounded to bf16 by the hardware (``gemm_panel_round.mlir``), and
  transposed in registers (:func:`transpose`) into a panel on the stack, the data-tiled GEMM's
  right tile (16 x 2 a line); then per 16 rows of x
  (``gemm_tile.mlir``) 16 accumulators of 16 lanes, one ``vdpbf16ps`` a row and pair of K, the
  pair broadcast from x's tile as the instruction's memory operand. The sums so far wait
  between blocks of K in a result of their own, each tile's 16 x 16 block of a strip contiguous
  (:func:`_sums_type`); the last block stores them into the outputs, row-major: f32, or
  (:class:`Rounding`, ``round-gemm-outputs``) times the per-tensor scales and rounded to bf16.
  Before each tile, the tile's share of the next panel's bytes of B is prefetched
  (:func:`_prefetch`), so that decoding that panel reads them from the cache.

bf16 weights (``passes/bf16_prefill_gemm.py``: a bf16 model's linears) take the same two
executables, their rows' values read as they are into the panels and x's tiles.

The products are exact (bf16 factors), and each output's sums run as the data-tiled GEMM's (K in
order, by pairs): the same values bit for bit (tests/e2e/test_prefill_gemm.py). On the
AVX512-BF16 host a 512-token prefill of the 0.35B generators ran 0.94-0.95x the time of the
decode-and-pack path (fp8-current, fp8-block, mxfp8; nvfp4 0.96x; benchmarks/RESULTS.md); 512
rows a workgroup instead of 256 (each panel decoded once for a 512-token prompt, not twice) and
the prefetch took another 4% off the fp8-current and the bf16 `none` prefill; the sums' blocks
(row-major rows between blocks of K had taken one cache set a tile) and the rounding in the
GEMM 5-11% more (0.35B, 1.1B).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from passes.base.errors import QmlirError
from passes.ir.dialect import GemvIsa, NamedOp, ScaleFormat, Scaling
from passes.ir.formats import E2M1, E4M3, E5M2, FloatFormat
from passes.ir.layouts import ScaleLayout
from passes.ir.types import DYNAMIC, TensorInfo, shape_text
from passes.lowering.cpu.common import definition, dims, fragment, iterators
from passes.lowering.cpu.gemv import GEMV_FEATURES, INTERLEAVE, tables
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, Dims, x_rows_dynamic

LANES = 16  # rows of B a panel, rows of x a tile (16 accumulators of 16 lanes)
STEP = 32  # codes of a B row a decode: K must be a multiple
MAX_K_BLOCK = 512  # K a panel at most (its panel 32 x that bytes on the stack: 16 KiB)
BLOCK_ROWS = 512  # rows of x a workgroup (M is dynamic: its blocks' count is ceil(M / 512))
B_ROWS = 64  # rows of B a workgroup at most


# how each lookup decodes, by fp4 (the executables' comments)
DECODE_DOCS = {
    False: "vpermi2b over the 128 magnitudes' bf16 bytes",
    True: "vpermb over the 16 E2M1 codes' bf16 bytes",
}


@dataclass(frozen=True)
class Gemm:
    """A GEMM this file writes: B ``[n, k]`` E4M3 or E5M2 codes with per-tensor scales, or block
    scales (``scale_format``): fp8-block's fp32 ones (A's 1 x 128 blocks in the block1d layout,
    B's 128 x 128 in block2d), mxfp8's E8M0 ones (1 x 32 both, compact) or nvfp4's E4M3 ones of
    E2M1 codes two a byte (1 x 16, compact; global scales too), each panel's values multiplied
    by them as decoded (``bk`` codes of K a block)."""

    n: int
    k: int  # codes a row (nvfp4: two a byte)
    scale_format: ScaleFormat | None = None

    @property
    def bk(self) -> int:
        return _BLOCK_K[self.scale_format] if self.scale_format else 0

    @property
    def fp4(self) -> bool:
        return self.scale_format is ScaleFormat.NVFP4

    @property
    def row_bytes(self) -> int:
        return self.k // 2 if self.fp4 else self.k


_BLOCK_K = {ScaleFormat.FP32: 128, ScaleFormat.E8M0: 32, ScaleFormat.NVFP4: 16}


@dataclass(frozen=True)
class Rounding:
    """A GEMM whose outputs leave it rounded to bf16 (``arith.truncf``: to nearest, ties to even)
    as the last block of K stores them, rather than as f32 sums a dispatch of their own rounds
    afterwards; ``alpha``: two
    f32 scalars (per-tensor scales, nvfp4's global scales) whose product multiplies the sums
    first, as the data-tiled GEMM's epilogue does."""

    alpha: bool = False


def dispatch_fields(n: int, rounded: bool) -> dict[str, str]:
    """A definition's ``acc_types``: the types of the GEMM dispatch's results ``%sums, %acc``,
    its f32 sums between blocks of K (:func:`_sums_type`'s) and the outputs (``rounded``: bf16,
    else f32)."""
    sums = f"tensor<?x{n // LANES}x16x16xf32>{{%tiles}}"
    out = f"tensor<?x{n}x{'bf16' if rounded else 'f32'}>{{%m}}"
    return {"acc_types": f"({sums}, {out})"}


ROUNDED_DOC = ", rounded to bf16 as the GEMM's last block of K stores them"


@dataclass(frozen=True)
class Scales:
    """Block scales a panel's rows are multiplied by: a memref of ``scales_type`` read at
    ``[row // rb, k // bk]`` (``transposed``: at ``[k // bk, row]``, A's block1d layout).
    fp8-block's f32 ones are read as stored; nvfp4's E4M3 ones and mxfp8's E8M0 ones
    (:attr:`decoded`) in f32 from ``%sdec``, the 16 rows' scales of a K block decoded as the
    block begins (:func:`decode_scales`), not each as its codes are."""

    scale_format: ScaleFormat
    scales_type: str
    bk: int
    rb: int = 1
    transposed: bool = False

    @property
    def decoded(self) -> bool:
        return self.scale_format is not ScaleFormat.FP32

    def reads(self) -> str:
        """What :meth:`text` reads beside the panel rows' (``gemm_panel_rows.mlir``)."""
        if self.decoded:
            return " %sdec:memref<16x32xf32> %kq:index"
        return f" %scales:{self.scales_type}"

    def text(self, p: str, pair: int) -> str:
        """Rows ``%<p>ra``/``%<p>rb``'s scales (``gemm_scale_*.mlir``; the 16 rows' ``2 pair``
        and ``2 pair + 1``), multiplied into their values (``gemm_panel_scale.mlir``, nvfp4's
        two blocks a row: ``gemm_panel_scale16.mlir``) and rounded to bf16
        (``gemm_panel_round.mlir``), defining ``%<p>scaled``."""
        rows = {"p": p, "ra": 2 * pair, "rb": 2 * pair + 1}
        if self.scale_format is ScaleFormat.NVFP4:  # two blocks of 16 a row and step
            read = fragment("gemm_scale_e4m3_decoded.mlir", **rows)
            scale = fragment(
                "gemm_panel_scale16.mlir",
                p=p,
                **{f"f{r}": f"%{p}{r}_val" for r in ("a0", "a1", "b0", "b1")},
                concat16=list(range(32)),
                concat32=list(range(64)),
            )
            return f"{read}\n{scale}\n{_round_bf16(p)}"
        if self.scale_format is ScaleFormat.FP32:
            at = ("%{0}kb, %{0}{1}" if self.transposed else "%{0}{1}, %{0}kb").format
            read = fragment(
                "gemm_scale_fp32.mlir",
                p=p,
                scales_type=self.scales_type,
                bk=self.bk,
                rb=self.rb,
                at_a=at(p, "ba"),
                at_b=at(p, "bb"),
            )
            names = (f"%{p}fa", f"%{p}fb")
        else:
            read = fragment("gemm_scale_e8m0_decoded.mlir", **rows, bk=self.bk)
            names = (f"%{p}da_f32", f"%{p}db_f32")
        scale = fragment(
            "gemm_panel_scale.mlir", p=p, fa=names[0], fb=names[1], concat=list(range(64))
        )
        return f"{read}\n{scale}\n{_round_bf16(p)}"


def decode_scales(scales: Scales, kc: int, rows_file: str) -> str:
    """The text decoding 16 rows' block scales of a K block (``kc`` codes from ``%kc``; the
    rows' indices from ``rows_file``) into ``%sdec`` (``gemm_scales_rows.mlir``, two rows a
    step: E4M3 ones by the FP8 codes' lookup, E8M0 ones from their bits), which
    :meth:`Scales.text` then reads."""
    sb = kc // scales.bk
    assert scales.decoded and sb <= 32, (scales, kc)
    pad = [*range(sb), *[0] * (32 - sb), *range(sb, 2 * sb), *[sb] * (32 - sb)]
    e4m3 = scales.scale_format is ScaleFormat.NVFP4
    parts = []
    for j in range(LANES // 2):
        p = f"sd{j}_"
        parts.append(fragment(rows_file, p=p, ra=2 * j, rb=2 * j + 1))
        if e4m3:
            lookup = fragment("fp8_bf16_lookup.mlir", p=p, interleave=INTERLEAVE)
            decode = fragment(
                "gemm_scales_e4m3.mlir", p=p, table_reads=_TABLE_READS[False], lookup=lookup
            )
        else:
            decode = fragment("gemm_scales_e8m0.mlir", p=p)
        parts.append(
            fragment(
                "gemm_scales_rows.mlir",
                p=p,
                ra=2 * j,
                rb=2 * j + 1,
                sb=sb,
                bk=scales.bk,
                pad=pad,
                scales_type=scales.scales_type,
                decode_reads=_TABLE_READS[False] if e4m3 else "",
                decode=decode,
            )
        )
    return "\n".join(parts)


def _decoded_scales(scales: Scales, kc: int, rows_file: str) -> tuple[str, str, str]:
    """For ``scales`` read decoded (:attr:`Scales.decoded`): the definitions to add (``%sdec``),
    the byte tables to add (E4M3's: the FP8 lookup's) and the text decoding a K block's
    (:func:`decode_scales`); empty where they are read as stored."""
    if not scales.decoded:
        return "", "", ""
    tables = "\n" + _decode_defs(E4M3) if scales.scale_format is ScaleFormat.NVFP4 else ""
    return "\n" + fragment("gemm_scales_decoded.mlir"), tables, decode_scales(scales, kc, rows_file)


def _round_bf16(p: str) -> str:
    """The products ``%<p>prod`` rounded to bf16 (``%<p>scaled``) by the hardware's conversion
    (``gemm_panel_round.mlir``)."""
    return fragment("gemm_panel_round.mlir", p=p, concat=list(range(64)))


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


def panel(
    rows_file: str,
    src: tuple[str, str],
    dst: tuple[str, str, str],
    scales: Scales | None,
    fmt: FloatFormat | None,
) -> str:
    """The text decoding 16 rows' 32 ``fmt`` codes at ``%k`` (``fmt`` None: bf16 values, read as
    they are; from ``src``, a memref and its type; the rows' indices from ``rows_file``) and
    storing them transposed, one line of 16 pairs for each pair of K, from line ``%line0`` of
    ``dst`` (a memref, its type, its leading indices: an SSA value and a comma, or none)."""
    parts, rows = [], []
    fp4 = fmt == E2M1
    for j in range(LANES // 2):
        p = f"pr{j}_"
        parts.append(fragment(rows_file, p=p, ra=2 * j, rb=2 * j + 1))
        rows += [f"%{p}a", f"%{p}b"]
        if fmt is None:
            parts.append(fragment("gemm_bf16_rows.mlir", p=p, src=src[0], src_type=src[1]))
            continue
        if fp4:  # 16 bytes a row: the two rows' 32 in the low half of 64
            lookup = fragment(
                "fp4_bf16_lookup.mlir", p=p, interleave=_FP4_INTERLEAVE, pairs=_FP4_PAIRS
            )
        else:
            lookup = fragment("fp8_bf16_lookup.mlir", p=p, interleave=INTERLEAVE)
        width = STEP // 2 if fp4 else STEP
        scale, values, scale_reads = "", f"%{p}values", ""
        if scales is not None:
            scale = scales.text(p, j)
            values, scale_reads = f"%{p}scaled", scales.reads()
        parts.append(
            fragment(
                "gemm_panel_rows.mlir",
                p=p,
                src=src[0],
                src_type=src[1],
                concat=list(range(2 * width)),
                widen=list(range(2 * STEP)),
                width=width,
                both=2 * width,
                col="%kh" if fp4 else "%k",
                table_reads=_TABLE_READS[fp4],
                lookup=lookup,
                scale=scale,
                values=values,
                scale_reads=scale_reads,
            )
        )
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


def _decode_defs(fmt: FloatFormat | None) -> str:
    """The byte tables of ``fmt``'s lookups (FP8's 128 magnitudes, E2M1's 16 codes; bf16
    values: none)."""
    if fmt is None:
        return ""
    name = "gemv_defs_fp4_tables.mlir" if fmt == E2M1 else "gemv_defs_bf16_tables.mlir"
    return fragment(name, **tables(fmt))


def _elem(fmt: FloatFormat | None) -> str:
    """The element type of a memref of ``fmt`` codes (bytes) or, ``fmt`` None, bf16 values."""
    return "bf16" if fmt is None else "i8"


def executable(
    exe: str,
    fn: str,
    plan: Gemm,
    fmt: FloatFormat | None,
    scales: tuple[str, int] | None = None,
    rounding: Rounding | None = None,
    prepacked: bool = False,
) -> str:
    """The ``stream.executable`` of ``plan``'s GEMM over ``fmt`` codes (None: bf16 values as
    stored; AVX512-BF16 and AVX512-VBMI); ``scales``: B's block scales' memref type and row
    block; ``rounding``: its outputs rounded to bf16 (a second result), else f32 sums;
    ``prepacked``: B (bf16 values) stored as its panels, ``[N / 16, K / 2, 16]`` pairs
    (``gemm_b_panels.mlir``), each line read where it is rather than built into a panel on the
    stack."""
    n, k = plan.n, plan.k
    nb, kc = b_rows(n), k_block(k)
    assert not prepacked or (fmt is None and plan.scale_format is None), plan
    block, bindings, defs, panel_scales = None, "", "", ""
    decode_defs = _decode_defs(fmt)
    if plan.scale_format is not None:
        assert scales is not None
        block = Scales(plan.scale_format, scales[0], plan.bk, scales[1])
        bindings = "%s_binding: !stream.binding, "
        defs = fragment(
            "gemm_block_scales.mlir",
            scales_type=scales[0],
            dims="",
            rows_map="s0",
            doc=f"B's, [{n} / {scales[1]}, {k} / {plan.bk}]",
        )
        more_defs, tables, panel_scales = _decoded_scales(block, kc, "gemm_w_rows.mlir")
        defs, decode_defs = defs + more_defs, decode_defs + tables
    w_type = f"memref<{n}x{plan.row_bytes}x{_elem(fmt)}>"
    panel_type = f"memref<{kc // 2}x16xi32>"
    panel_name = "%panel"
    if prepacked:  # the tiles read each line where it is stored: no panel built, none prefetched
        w_type = panel_type = f"memref<{n // LANES}x{k // 2}x16xi32>"
        panel_name, panel_alloc, prefetch, panel_build = "%w", "", "", ""
    else:
        panel_alloc = f"      %panel = memref.alloca() : {panel_type}"
        prefetch = _prefetch(plan, kc, w_type, fmt is None)
        dst = ("%panel", panel_type, "")
        panel_text = panel("gemm_w_rows.mlir", ("%w", w_type), dst, block, fmt)
        panel_build = fragment("gemm_panel_build.mlir", panel_scales=panel_scales, panel=panel_text)
    if fmt is None:
        docs = {"x_doc": "the activation", "w_doc": "bf16 values", "epilogue_doc": "",
                "panel_doc": "bf16 values"}  # fmt: skip
    else:
        docs = {
            "x_doc": "the dequantized activation",
            "w_doc": f"codes ({plan.row_bytes} bytes a row)",
            "epilogue_doc": " (per-tensor and global scales multiply acc beside the dispatch)",
            "panel_doc": f"codes decoded from byte tables ({DECODE_DOCS[fmt == E2M1]}), times "
            "their block scales, and",
        }
    rounds = {"alpha_bindings": "", "alpha_defs": "", "round_doc": "", "out_elem": "f32"}
    if rounding is not None:
        rounds["out_elem"] = "bf16"
        rounds["round_doc"] = ", rounded to it"
        docs["epilogue_doc"] = ""
        if rounding.alpha:
            rounds["alpha_bindings"] = (
                "%sa_binding: !stream.binding, %sb_binding: !stream.binding, "
            )
            doc = "global scales" if plan.fp4 else "per-tensor scales"
            rounds["alpha_defs"] = "\n" + fragment("gemm_round_alpha.mlir", doc=doc)
    docs["w_doc"] += ", read as stored: no decoded or packed copy of the weight exists"
    panel_step = (
        f"the 16 rows' {kc} {docs.pop('panel_doc')} transposed into a panel on the stack, each"
        f" of its {kc // 2}\n//      lines one pair of K's 16 values (the data-tiled GEMM's"
        " tile, 16 x 2);"
    )
    if prepacked:
        docs["w_doc"] = (
            "bf16 values stored as the GEMM's panels ([N / 16, K / 2, 16] pairs, laid out once"
            " when the module loaded)"
        )
        panel_step = "the 16 rows' panel of the K block read where it is stored (none built);"
    return fragment(
        "gemm_executable.mlir",
        panel_step=panel_step,
        exe=exe,
        fn=fn,
        N=n,
        K=k,
        BK=plan.row_bytes,
        KH=k // 2,
        KC=kc,
        KP=kc // 2,
        NB=nb,
        NG=n // nb,
        MB=BLOCK_ROWS,
        w_elem=_elem(fmt),
        **docs,
        needs=" and ".join(GEMV_FEATURES[GemvIsa.AVX512_BF16]),
        decode_defs=decode_defs,
        scale_bindings=bindings,
        scale_defs=defs,
        w_type=w_type,
        panel_alloc=panel_alloc,
        panel_build=panel_build,
        prefetch=prefetch,
        sums_type=_sums_type(n),
        full_tile=_tile(n, k, kc, False, rounding, (panel_name, panel_type, prepacked)),
        tail_tile=_tile(n, k, kc, True, rounding, (panel_name, panel_type, prepacked)),
        **rounds,
    )


def x_executable(
    exe: str, fn: str, plan: Gemm, fmt: FloatFormat | None, scales: Scales | None
) -> str:
    """The ``stream.executable`` decoding A's ``fmt`` codes ``[M, k]`` (times ``scales``, its
    block scales; ``fmt`` None: bf16 values as they are) and tiling them as the GEMM reads them
    (``gemm_x_executable.mlir``)."""
    k = plan.k
    tiled = f"memref<?x{k // 2}x16xi32>"
    codes = ("%a", f"memref<?x{plan.row_bytes}x{_elem(fmt)}>")
    panel_text = panel("gemm_x_rows.mlir", codes, ("%x", tiled, "%t, "), scales, fmt)
    bindings = defs = panel_scales = ""
    decode_defs, kc = _decode_defs(fmt), k_block(k)
    if scales is not None:
        bindings = "%s_binding: !stream.binding, "
        defs = "\n" + fragment(
            "gemm_block_scales.mlir",
            scales_type=scales.scales_type,
            dims="{%s_rows}",
            rows_map=X_ROWS[scales.scale_format],
            doc="A's" + (", K blocks by rows" if scales.transposed else ""),
        )
        more_defs, tables, panel_scales = _decoded_scales(scales, kc, "gemm_x_rows.mlir")
        defs, decode_defs = defs + more_defs, decode_defs + tables
    if fmt is None:
        a_doc = "bf16 values as they are"
    else:
        scaled = ", times their block scales," if scales is not None else ""
        a_doc = f"codes decoded to bf16 from byte tables ({DECODE_DOCS[fmt == E2M1]}){scaled}"
    return fragment(
        "gemm_x_executable.mlir",
        exe=exe,
        fn=fn,
        K=k,
        AK=plan.row_bytes,
        KH=k // 2,
        a_elem=_elem(fmt),
        KC=kc,
        a_doc=a_doc,
        decode_defs=decode_defs,
        scale_bindings=bindings,
        scale_defs=defs,
        panel_scales=panel_scales,
        panel=panel_text,
    )


# the rows of A's block scales for M rows: block1d's padded to a multiple of 4, compact's M
X_ROWS = {ScaleFormat.FP32: "(s0 ceildiv 4) * 4", ScaleFormat.E8M0: "s0", ScaleFormat.NVFP4: "s0"}

# the tables each lookup reads (gemv_defs_fp4_tables.mlir, gemv_defs_bf16_tables.mlir), by fp4
_TABLE_READS = {
    True: "".join(f" %{v}:vector<64xi8>" for v in ("nibble", "four", "hi_table", "lo_table")),
    False: "".join(
        f" %{v}:vector<64xi8>"
        for v in ("sign", "hi_lo_table", "hi_hi_table", "lo_lo_table", "lo_hi_table")
    ),
}
# E2M1's lookup (fp4_bf16_lookup.mlir): the low 32 bytes' values, low and high byte interleaved
# (32 bf16 values), then the even and the odd elements' values interleaved (K order)
_FP4_INTERLEAVE = [j // 2 + (64 if j % 2 else 0) for j in range(64)]
_FP4_PAIRS = [j // 2 + (32 if j % 2 else 0) for j in range(64)]


LINE_BYTES = 64  # a cache line


def _prefetch(plan: Gemm, kc: int, w_type: str, bf16: bool) -> str:
    """The lines of the next panel's weight bytes a whole tile prefetches
    (``gemm_prefetch.mlir``): 16 rows of ``kc`` codes (bf16 values), in lines of 64 bytes
    shared out among a workgroup's tiles, so that building the next panel reads them from the
    cache (``w_type``: the weight's memref)."""
    elem_bytes = 2 if bf16 else 1  # the memref's element: a bf16 value, or a byte of codes
    codes_per_elem = 2 if plan.fp4 else 1
    line_elems = LINE_BYTES // elem_bytes
    row_lines = -(-kc * elem_bytes // codes_per_elem // LINE_BYTES)
    per_tile = -(-LANES * row_lines // (BLOCK_ROWS // LANES))
    col_last = max(plan.row_bytes - line_elems, 0)
    lines = [
        fragment(
            "gemm_prefetch_line.mlir",
            p=f"pf{i}_",
            q0="%pf_q0",
            n="%pf_n",
            col0="%pf_col0",
            w_type=w_type,
            i=i,
            row_last=plan.n - 1,
            col_last=col_last,
            line_elems=line_elems,
        )
        for i in range(per_tile)
    ]
    return fragment(
        "gemm_prefetch.mlir",
        p="pf_",
        w_type=w_type,
        P=per_tile,
        codes_per_elem=codes_per_elem,
        lines="\n".join(lines),
    )


def _tile(
    n: int, k: int, kc: int, tail: bool, rounding: Rounding | None, panel: tuple[str, str, bool]
) -> str:
    """A tile of 16 rows of x against the panel (``gemm_tile.mlir``): whole, its rows' addresses
    a constant apart, or the last, of fewer rows (``tail``: rows past M repeat the last and are
    not stored). Its sums wait in ``%sums`` between blocks of K (its 16 x 16 block of the strip);
    the last block stores them into ``%out`` (``gemm_stores_last.mlir``): as f32 sums, or
    (``rounding``) times alpha and rounded to bf16."""
    p = "tail_" if tail else "full_"
    suffix = "_tail" if tail else ""
    sums_type = _sums_type(n)
    out_type = f"memref<?x{n}x{'f32' if rounding is None else 'bf16'}>"
    block = {"sums_type": sums_type, "sums_reads": f" %{p}t:index %strip:index %c0:index"}
    rows, products, stores, last = [], [], [], []
    for i in range(LANES):
        r, x, o = f"{p}r{i}_", f"{p}x{i}_", f"{p}o{i}_"
        at = f"%{p}t, %strip, %{r}off, %c0"  # row i's sums in the tile's block of the strip
        rows.append(
            fragment(f"gemm_row{suffix}.mlir", p=r, tile0="%tile0", N=n, i=i, sums_at=at, **block)
        )
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
        row = {"acc": f"%{p}acc#{i}", "N": n, "i": i}
        if tail:
            row["in"] = f"%{r}in"
        store = fragment(
            f"gemm_store{suffix}.mlir",
            p=o,
            **row,
            what="sums so far",
            dst="%sums",
            dst_type=sums_type,
            dst_at=at,
            dst_reads=f"{block['sums_reads']} %{r}off:index",
        )
        stores.append(store)
        if rounding is None:  # the f32 sums into the outputs, row-major
            last.append(
                fragment(
                    f"gemm_store{suffix}.mlir",
                    p=f"{p}h{i}_",
                    **row,
                    what="outputs (row-major)",
                    dst="%out",
                    dst_type=out_type,
                    dst_at=f"%{r}row, %n",
                    dst_reads=f" %{r}row:index %n:index",
                )
            )
            continue
        value = row.pop("acc")
        if rounding.alpha:
            last.append(fragment("gemm_acc_alpha.mlir", p=f"{p}s{i}_", acc=value))
            value = f"%{p}s{i}_scaled"
        last.append(
            fragment(f"gemm_store_bf16{suffix}.mlir", p=f"{p}h{i}_", v=value, row=f"%{r}row", **row)
        )
    if rounding is None:
        last_doc = "the f32 sums"
    else:
        last_doc = "times alpha, rounded to bf16" if rounding.alpha else "rounded to bf16"
    text = fragment(
        "gemm_stores_last.mlir",
        p=f"{p}st_",
        k_last=k - kc,
        last_doc=last_doc,
        store_reads=f"{_store_reads(n, rounding)} %sums:{sums_type} %n:index",
        last="\n".join(last),
        sums="\n".join(stores),
    )
    return fragment(
        "gemm_tile.mlir",
        p=p,
        panel=panel[0],
        panel_type=panel[1],
        # a line of the panel: its index in the K block's panel, or (B stored as its panels:
        # [N / 16, K / 2, 16]) the strip's and the pair of K's
        panel_at=f"%strip, %{p}kp, %c0" if panel[2] else f"%{p}p, %c0",
        tile0="%tile0",
        N=n,
        KH=k // 2,
        KP=kc // 2,
        row_reads=(" %m:index %m_last:index" if tail else "") + " %strip:index",
        store_reads=_store_reads(n, rounding),
        sums_type=sums_type,
        rows="\n".join(rows),
        iter_args=", ".join(f"%{p}acc_{i} = %{p}r{i}_init" for i in range(LANES)),
        acc_types=", ".join(["vector<16xf32>"] * LANES),
        products="\n".join(products),
        yields=", ".join(f"%{p}x{i}_next" for i in range(LANES)),
        stores=text,
    )


def _sums_type(n: int) -> str:
    """The memref of a GEMM's f32 sums between blocks of K, ``[ceil(M / 16), n / 16, 16, 16]``:
    each tile's 16 x 16 block of a strip of 16 outputs contiguous (rows of a row-major
    ``[M, n]``, n x 4 bytes apart, would each take a cache line of one set, every block)."""
    return f"memref<?x{n // LANES}x16x16xf32>"


def _store_reads(n: int, rounding: Rounding | None) -> str:
    """What a tile's last stores read beside its own values (``gemm_tile.mlir``'s
    ``store_reads``): the outputs, and alpha where the GEMM multiplies it in."""
    if rounding is None:
        return f" %out:memref<?x{n}xf32>"
    alpha = " %alpha:vector<16xf32>" if rounding.alpha else ""
    return f" %out:memref<?x{n}xbf16>{alpha}"


def gemm_plan(op: NamedOp) -> Gemm | None:
    """The GEMM of a scaled GEMM that runs as one here: FP8 operands (E4M3 or E5M2) with
    per-tensor scales, or with fp8-block's or mxfp8's block scales where the operands are
    multiplied in bf16 (``gemm-operands``: the dequantized values exact there); B ``[N, K]``
    static (stored transposed) with ``N`` a multiple of 16 and ``K`` of :data:`STEP` (block
    scales: of the block), A ``[..., K]`` with more than one row or a dynamic number; None
    otherwise."""
    attrs = op.attrs
    if not attrs.b_transposed:
        return None
    nvfp4 = attrs.scale_format is ScaleFormat.NVFP4
    formats = (E2M1,) if nvfp4 else (E4M3, E5M2)
    if attrs.a_format not in formats or attrs.b_format not in formats:
        return None
    ins, _ = op.signature(dynamic=True)
    a, b = ins[0], ins[3 if nvfp4 else 2]
    if b.rank != 2 or not b.is_static or a.rank < 2:
        return None
    n, row_bytes = b.shape
    k = 2 * row_bytes if nvfp4 else row_bytes  # nvfp4: two codes a byte
    if n % LANES or k % STEP or a.shape[-1] != row_bytes:
        return None
    if not many_rows(a):
        return None  # one row: decode-gemv's
    if attrs.scaling is not Scaling.BLOCK:
        return Gemm(n, k)
    if attrs.operand_type != "bf16" or _BLOCKS.get(attrs.scale_format) != (
        attrs.a_block,
        attrs.b_block,
        attrs.a_layout,
        attrs.b_layout,
    ):
        return None
    plan = Gemm(n, k, attrs.scale_format)
    return plan if k % plan.bk == 0 else None


def many_rows(a: TensorInfo) -> bool:
    """Whether an activation ``[..., K]`` has more than one row, or a dynamic number: a GEMM of
    one row is decode-gemv's matrix-vector product."""
    lead = a.shape[:-1]
    return DYNAMIC in lead or math.prod(lead) > 1


# each block-scale format's (A's block, B's block, A's layout, B's layout) as the CPU's GEMM
# reads them (mx-layout scales compact: compact-block-scales)
_BLOCKS = {
    ScaleFormat.FP32: ((1, 128), (128, 128), ScaleLayout.BLOCK1D, ScaleLayout.BLOCK2D),
    ScaleFormat.E8M0: ((1, 32), (1, 32), ScaleLayout.COMPACT, ScaleLayout.COMPACT),
    ScaleFormat.NVFP4: ((1, 16), (1, 16), ScaleLayout.COMPACT, ScaleLayout.COMPACT),
}


_SCALE_DOCS = {
    ScaleFormat.FP32: "fp32 block scales (A's 1 x 128 blocks, B's 128 x 128)",
    ScaleFormat.E8M0: "E8M0 block scales of 1 x 32, compact",
    ScaleFormat.NVFP4: "E2M1 codes with E4M3 block scales of 1 x 16, compact, and global scales",
}


def rows_fields(
    a: TensorInfo, out: TensorInfo, fields: dict[str, object], elem: str
) -> tuple[Dims, dict[str, object]]:
    """A many-row GEMM definition's rows: A ``[..., AK]`` (``elem`` elements) as ``%a_rows``
    ``[M, AK]`` (``collapse``, after the lines reading its dynamic dims: ``a_dims_defs``), ``%m``
    (``m_value``), and ``%acc_rows`` ``[M, N]`` back to ``out``'s shape as ``%acc_out``
    (``expand``; ``out_elem``, ``out``'s element type); also ``M`` and ``a_shape``. ``fields``:
    the definition's (``N``, ``AK``, ``out_shape``). The dims read (out's dynamic dims are A's
    leading ones) come back too."""
    a_dims = Dims.read("%a", a)  # no lines when static
    lead = a.shape[:-1]
    m = DYNAMIC if DYNAMIC in lead else math.prod(lead)
    groups = f"[{', '.join(str(i) for i in range(a.rank - 1))}], [{a.rank - 1}]"
    fields = {
        **fields,
        "M": shape_text((m,)),
        "a_shape": shape_text(a.shape),
        "a_elem": elem,
        "out_elem": out.dtype,
    }
    if a.rank > 2:
        collapse = "\n" + fragment("gemm_collapse.mlir", **fields, groups=groups)
        sizes = a_dims.shape(out)
        size_reads = "".join(f" {v}:index" for v in sizes.split(", ") if v.startswith("%"))
        expand = "\n" + fragment(
            "gemm_expand.mlir", **fields, groups=groups, sizes=sizes, size_reads=size_reads
        )
    else:
        collapse = "\n" + fragment("gemm_rows_2d.mlir", **fields)
        expand = "\n" + fragment("gemm_out_2d.mlir", **fields)
    rows = Dim.rows("%a_rows", TensorInfo((m, a.shape[-1]), elem))  # dynamic: read as %dyn_m
    m_value = (
        f"arith.addi {rows.name}, %c0 : index" if rows.dynamic else f"arith.constant {m} : index"
    )
    return a_dims, {
        "M": fields["M"],
        "a_shape": fields["a_shape"],
        "a_dims_defs": a_dims.defs(),
        "collapse": collapse + rows.defs(),
        "m_value": m_value,
        "expand": expand,
        "out_elem": out.dtype,
    }


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
    rounded = bool(op.attrs.rounded)
    if out.dtype != ("bf16" if rounded else "f32"):
        raise QmlirError(f"@{op.name}: a result of {out.dtype} (rounded: {rounded})")
    alpha = plan.scale_format is None or plan.fp4  # per-tensor (nvfp4: global) scales
    exe, fn = executable_names(op)
    x_exe, x_fn = executable_names(op, "x")
    fields: dict[str, object] = {
        **head(op),
        "exe": exe,
        "fn": fn,
        "N": n,
        "K": k,
        "AK": plan.row_bytes,
        "BK": plan.row_bytes,
        "KH": k // 2,
        "out_shape": shape_text(out.shape),
    }
    a_dims, row_fields = rows_fields(a, out, fields, "i8")
    sa, sb = ins[1], ins[-2 if plan.fp4 else -1]
    sa_type, sb_type = str(sa.builtin()), str(sb.builtin())
    names = ("a", "sa", "ga", "b", "sb", "gb") if plan.fp4 else ("a", "sa", "b", "sb")
    args = ",\n".join(f"%{name}: {t.builtin()}" for name, t in zip(names, ins, strict=True))
    x_scales = gemm_scales = None
    dispatch = {
        "x_scales": "",
        "x_operands": "",
        "x_types": "",
        "gemm_args": "",
        "gemm_arg_types": "",
        "scale_doc": "per-tensor scales",
    }
    if plan.scale_format is not None:
        fmt = plan.scale_format
        elem = "f32" if fmt is ScaleFormat.FP32 else "i8"  # E8M0, nvfp4's E4M3: codes
        transposed = fmt is ScaleFormat.FP32  # block1d: [K blocks, rows padded to 4]
        kb = k // plan.bk
        x_type = f"{kb}x?x{elem}" if transposed else f"?x{kb}x{elem}"
        x_scales = Scales(fmt, f"memref<{x_type}>", plan.bk, 1, transposed)
        gemm_scales = (f"memref<{shape_text(sb.shape)}x{elem}>", 128 if transposed else 1)
        dispatch = {
            "x_scales": "\n"
            + fragment(
                "gemm_x_scales.mlir",
                sa_type=sa_type,
                sa_any_type=f"tensor<{x_type}>",
                rows_map=X_ROWS[fmt],
            ),
            "x_operands": "%sa_any, ",
            "x_types": f"tensor<{x_type}>{{%s_rows}}, ",
            "gemm_args": "%sb, ",
            "gemm_arg_types": f"{sb_type}, ",
            "scale_doc": _SCALE_DOCS[fmt],
        }
    # per-tensor (nvfp4: global) scales multiply the sums beside the dispatch, as the data-tiled
    # GEMM's epilogue does (IREE fuses it with a bias add alike: the same roundings); a rounded
    # GEMM multiplies them in before it rounds
    sizes = a_dims.empty(out)
    rounding = Rounding(alpha) if rounded else None
    dispatch.update(dispatch_fields(n, rounded))
    scalars = ("%ga", "%gb") if plan.fp4 else ("%sa", "%sb")
    if rounded and alpha:  # the two scalars, operands of the GEMM's dispatch
        types = (ins[2], ins[-1]) if plan.fp4 else (ins[1], ins[-1])
        dispatch["gemm_args"] += "".join(f"{s}, " for s in scalars)
        dispatch["gemm_arg_types"] += "".join(f"{t.builtin()}, " for t in types)
    if alpha and not rounded:
        epilogue = alpha_epilogue(out, sizes, *scalars)
    else:
        epilogue = fragment(
            "gemm_alpha_one.mlir", out_shape=shape_text(out.shape), out_elem=out.dtype
        )
    where = "in the GEMM before it rounds" if rounded else "after the dispatch"
    body = definition(
        "scaled_matmul_gemm.mlir",
        fields,
        **row_fields,
        x_exe=x_exe,
        x_fn=x_fn,
        args=args,
        epilogue=epilogue,
        alpha_where=where,
        rounded_doc=ROUNDED_DOC if rounded else "",
        **dispatch,
    )
    gemm = executable(exe, fn, plan, op.attrs.b_format, gemm_scales, rounding)
    x = x_executable(x_exe, x_fn, plan, op.attrs.a_format, x_scales)
    return f"{x}\n{gemm}\n{body}"


def alpha_epilogue(out: TensorInfo, sizes: str, sa: str, sb: str) -> str:
    """``gemm_alpha.mlir``: ``%acc_out`` (``out``'s type) times the product of the f32 scalars
    ``sa`` and ``sb`` (per-tensor or global scales) as ``%out``; ``sizes``: its dynamic sizes."""
    return fragment(
        "gemm_alpha.mlir",
        out_shape=shape_text(out.shape),
        sa=sa,
        sb=sb,
        out_sizes=sizes,
        size_reads="".join(f" {v}:index" for v in sizes.split(", ") if v),
        out_dims=", ".join(dims(out.rank)),
        out_parallels=iterators(["parallel"] * out.rank),
    )


def bf16_gemm_definitions(
    name: str, x: TensorInfo, n: int, k: int, rounded: bool, prepacked: bool = False
) -> list[str]:
    """The text of the two executables and of ``@name``, the function dispatching them: ``x``
    (bf16 ``[..., k]``) times a bf16 weight ``[n, k]`` transposed, f32 ``[..., n]`` (``rounded``:
    rounded to bf16 as the GEMM stores them); ``prepacked``: the weight laid out as the GEMM's
    panels first (``gemm_b_panels.mlir``: for a constant, which IREE then lays out once)."""
    plan = Gemm(n, k)
    exe, fn = f"{name}$gemm_executable", f"{name}$gemm"
    x_exe, x_fn = f"{name}$x_executable", f"{name}$x"
    out = TensorInfo((*x.shape[:-1], n), "bf16" if rounded else "f32")
    fields: dict[str, object] = {"name": name, "exe": exe, "fn": fn, "N": n, "K": k, "AK": k,
                                 "KH": k // 2, "out_shape": shape_text(out.shape)}  # fmt: skip
    _, rows = rows_fields(x, out, fields, "bf16")
    b = {"b_panels": "", "b_value": "%b", "b_type": f"tensor<{n}x{k}xbf16>"}
    if prepacked:
        s, kh = n // LANES, k // 2
        b = {
            "b_panels": fragment("gemm_b_panels.mlir", N=n, K=k, S=s, KH=kh),
            "b_value": "%b_panels",
            "b_type": f"tensor<{s}x{kh}x32xbf16>",
        }
    body = definition(
        "linear_bf16_gemm.mlir",
        fields,
        **rows,
        **dispatch_fields(n, rounded),
        **b,
        x_exe=x_exe,
        x_fn=x_fn,
        rounded_doc=ROUNDED_DOC if rounded else "",
    )
    rounding = Rounding() if rounded else None
    gemm = executable(exe, fn, plan, None, None, rounding, prepacked)
    return [x_executable(x_exe, x_fn, plan, None, None), gemm, body]
