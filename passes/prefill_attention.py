"""Pass ``prefill-attention`` (llvm-cpu): the attention of several query positions (a prefill's
dynamic number over a generator's KV cache, or a static number: an encoder's, a static causal
model's) as a hand-written kernel, FlashAttention's running softmax over tiles of keys, with
tiles the mask closes to every query of a block skipped.

SDPA is decomposed into ``matmul → × scale → mask → softmax → matmul``
(``compiler/frontend/attention.py``). At a prefill IREE ran that as data-tiled f32 GEMMs over the
whole cache, the scores ``[heads, T, S]`` written, unpacked, scaled, masked, softmaxed and packed
again for the second GEMM: at 0.35B with a 512-token prompt and a 640-position cache, 761 of
2390 CPU ms a prefill on the AVX512-BF16 host, a causal mask's future (half the scores) and the
cache's unused positions computed and thrown away (``benchmarks/RESULTS.md``). Here each such
attention (``passes/ir/attention_sites.py``: scores ``[B, KVH, g, T, S]`` or ``[B, H, T, S]``
with T dynamic or static above 1, the batch B and the keys S static or dynamic, the heads and
head dim static) becomes a call of ``lowering/cpu/templates/prefill_attention.mlir``: K and V
(f32, as the decomposition widened a bf16 cache) padded with zeros to a multiple of the tile
(masked) and K transposed, once a call, the mask made additive, then per block of query rows of
one head and per tile of keys the scores by f32 FMAs in registers (the block's rows x the tile's
keys), the running maximum, sum and output per row (``prefill_attention_executable.mlir``). A
tile that the mask closes to every row of the block is not computed: a prompt at the start of
the cache reads about half of its keys' tiles and none past its end. Static shapes gain too
(AVX512-BF16 host, one run of ``benchmarks/cpu.py``: MiniLM fp8-current 84.9 -> 72.3 ms, the
decoder sample `none` 71.2 -> 64.6 ms). The executable takes T, B and the padded key count as
operands (IREE inlines them where they are constants): a dynamic artifact's attention sums the
same products in the same order as its static twin's, bit for bit (padded keys add exact zeros).

The values: each score is the decomposition's q · k summed in order by FMAs (the decomposition's
GEMM sums in tiles: the last bits differ), × scale + mask; softmax's running form rescales the
sums as the maximum grows and divides the output by the sum at the end, where the decomposition
divides each weight first: the same to f32 roundings (a random 2-layer Llama's prefill logits
within 3e-7 of the decomposition's, tests against torch's SDPA in f64). A masked position
contributes exp(-inf) = 0 times its value, as in the decomposition; a query row masked
everywhere is 0, as torch's SDPA gives since torch 2.5.

Where q and K hold bf16 values (a bf16 model's attention: the decomposition widens its bf16 q, K
and V) and the target has AVX512-BF16, q . k runs on pairs of the head dim instead
(``vdpbf16ps``; the call's name ``qmlir.prefill_attention.pairs.*``): K is laid out ``[K/V
heads, E/2, keys x 2]`` bf16 (half the bytes of its f32 transpose), each query row's pairs are
kept as i32s, and each step adds a pair's two exact products to the f32 sums, ``2e + 1``'s
first, subnormals flushed (docs/numerics.md). The 0.35B bf16 Llama's attention then took 20%
less CPU time relative to its GEMMs (``benchmarks/RESULTS.md``).

Option ``isa``: the instructions the tile is sized for, ``avx512bf16`` (any AVX-512 CPU: 16
keys a tile, 16 query rows a block, four rows' outputs updated together) or ``avx2`` (8 keys,
8 rows, one row at a time). The pipeline runs it where ``decode-gemv`` runs (``decode_gemv=
"auto"`` on a CPU with its instructions), after ``decode-attention``.
"""

from __future__ import annotations

import dataclasses
import math

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.base.numbers import f32_hex
from passes.ir.attention_sites import (
    AttentionSite,
    additive_mask,
    find_site,
    holds_bf16,
    replace_with_call,
)
from passes.ir.functions import function_names
from passes.ir.types import DYNAMIC, TensorInfo, shape_text
from passes.ir.walk import ops_where
from passes.lowering.cpu.common import definition, fragment

PREFIX = "qmlir.prefill_attention."
# per ISA: f32 lanes of a vector, vector registers
ISAS = {"avx512bf16": (16, 32), "avx2": (8, 16)}
STACK_BYTES = 24576  # a workgroup's buffers (IREE's CPU limit for a dispatch's stack: 32 KiB)


@register_pass
@dataclasses.dataclass(frozen=True)
class PrefillAttention(ModulePass):
    name = "prefill-attention"

    isa: str = "avx512bf16"

    def apply(self, module: ir.Module) -> None:
        if self.isa not in ISAS:
            raise QmlirError(f"prefill-attention: no isa '{self.isa}' ({', '.join(ISAS)})")
        softmaxes = ops_where(module.operation, lambda op: op.name == "torch.aten.softmax.int")
        names = function_names(module)

        for op in softmaxes:
            site = find_site(op)
            if site is None or not site.per_position:
                continue
            pairs = takes_pairs(site, self.isa)

            def definitions(name: str, site: AttentionSite, pairs: bool = pairs) -> list[str]:
                return prefill_definitions(name, site, self.isa, pairs)

            prefix = PREFIX + ("pairs." if pairs else "")
            replace_with_call(module, names, site, prefix, definitions)


def takes_pairs(site: AttentionSite, isa: str) -> bool:
    """Whether the kernel multiplies q and K as bf16 pairs (``vdpbf16ps``): on AVX512-BF16,
    where both hold bf16 values (a bf16 model's, widened by the decomposition) and the head dim
    is even."""
    _, k, _ = site.shapes()
    return (
        isa == "avx512bf16" and k.shape[-1] % 2 == 0 and holds_bf16(site.q) and holds_bf16(site.k)
    )


@dataclasses.dataclass(frozen=True)
class Tiling:
    """A prefill kernel's tile: ``lanes`` keys (one vector), ``rows`` query rows a block,
    ``group`` rows whose outputs are updated together (their accumulators in registers)."""

    lanes: int
    rows: int
    group: int


def tiling(isa: str, head_dim: int) -> Tiling:
    """The tile for ``isa`` and a head dim: a block's score accumulators fill half the vector
    registers, a group's outputs the other half, the workgroup's buffers within STACK_BYTES."""
    lanes, registers = ISAS[isa]
    rows = registers // 2
    vectors = -(-head_dim // lanes)  # a row's output
    group = next(g for g in (4, 2, 1) if g == 1 or g * vectors <= registers // 2)
    while rows > group and stack_bytes(Tiling(lanes, rows, group), head_dim) > STACK_BYTES:
        rows //= 2
    return Tiling(lanes, rows, group)


def stack_bytes(tile: Tiling, head_dim: int) -> int:
    """A workgroup's buffers: the block's queries and outputs, a tile of scores, a group's
    exps, each row's running maximum and sum (f32)."""
    rows, lanes = tile.rows, tile.lanes
    return 4 * (2 * rows * head_dim + rows * lanes + tile.group * lanes + 2 * rows)


def prefill_definitions(name: str, site: AttentionSite, isa: str, pairs: bool = False) -> list[str]:
    """The text of the kernel's executable and of ``@name``, the function dispatching it: q
    ``[B, KVH, g x T, E]`` (grouped) or ``[B, H, T, E]`` f32; K and V ``[B, KVH, S, E]`` f32 (as
    the decomposition widened a bf16 cache); the mask (none, i1 for masked_fill, f32 added)
    over ``[.., T or 1, S]``; B, T and S static or dynamic."""
    q, k, mask = site.shapes()
    b, kvh, s, e = k.shape
    tile = tiling(isa, e)
    exe, fn = f"{name}$executable", f"{name}$attention"
    # the snippets' sizes (the executable's mask and keys are dynamic: IREE inlines constants)
    sizes = {"R": tile.rows, "E": e, "L": tile.lanes, "U": tile.group, "B": "?", "S": "?"}
    # q . k's operands: f32, or bf16 pairs of the head dim (``pairs``: K [.., E / 2, keys x 2])
    kp = 2 if pairs else 1
    operands = {
        "EP": e // 2,
        "KP": kp,
        "KE": e // kp,
        "KL": tile.lanes * kp,
        "q_elem": "bf16" if pairs else "f32",
        "qs_elem": "i32" if pairs else "f32",
    }
    executable = fragment(
        "prefill_attention_executable.mlir",
        exe=exe,
        fn=fn,
        H=site.heads,
        G=site.heads // kvh,
        KVH=kvh,
        R_less=tile.rows - 1,
        factor=f32_hex(site.factor),
        q_stage=fragment(
            "prefill_attention_q_pairs.mlir" if pairs else "prefill_attention_q_f32.mlir",
            **operands,
            **sizes,
        ),
        **_unrolled(tile, sizes, "prefill_attention_dot.mlir" if pairs else None, operands),
        **operands,
        **sizes,
    )
    kv_rows = b * kvh if b != DYNAMIC else DYNAMIC
    q_sizes = [
        "%batch" if q.shape[0] == DYNAMIC else str(q.shape[0]),
        str(q.shape[1]),
        "%q_len" if q.shape[2] == DYNAMIC else str(q.shape[2]),
        str(e),
    ]
    kv_fields = {"kv_rows": shape_text((kv_rows,)), "E": e, "EP": e // 2}
    kt_empty = (
        f"{kv_fields['kv_rows']}x{e // 2}x?x2xbf16"
        if pairs
        else f"{kv_fields['kv_rows']}x{e}x?xf32"
    )
    function = definition(
        "prefill_attention.mlir",
        kt_make=fragment(
            "prefill_attention_kt_pairs.mlir" if pairs else "prefill_attention_kt_f32.mlir",
            **kv_fields,
        ),
        q_make=fragment(
            "prefill_attention_q_bf16.mlir" if pairs else "prefill_attention_q_as_is.mlir", E=e
        ),
        kt_empty_type=kt_empty,
        KE=operands["KE"],
        KP=kp,
        q_elem=operands["q_elem"],
        name=name,
        exe=exe,
        fn=fn,
        B=shape_text((b,)),
        KVH=kvh,
        H=site.heads,
        S=shape_text((s,)),
        E=e,
        L=tile.lanes,
        L_less=tile.lanes - 1,
        QG=site.per_position,
        R=tile.rows,
        R_less=tile.rows - 1,
        k_shape=shape_text(k.shape),
        kv_rows=kv_fields["kv_rows"],
        kv_sizes="%keys" if kv_rows != DYNAMIC else "%kv_heads, %keys",
        q_shape=shape_text(q.shape),
        q_rows=shape_text((q.shape[0] * q.shape[1] * q.shape[2] if q.is_static else DYNAMIC,)),
        q_sizes=", ".join(q_sizes),
        q_heads_doc="K/V heads with each one's query heads x T rows"
        if site.per_position > 1
        else "heads, T rows",
        **_mask_fields(mask, site.fill, b, s),
    )
    return [executable, function]


def _unrolled(
    tile: Tiling, sizes: dict[str, int], dot: str | None, operands: dict[str, object]
) -> dict[str, str]:
    """The executable's unrolled parts: a block's score accumulators (one a row) and their FMA
    steps (``dot``'s instead: a snippet of pairs) and stores, a group's row steps, output
    accumulators, their FMAs and stores."""
    rows, group = range(tile.rows), range(tile.group)
    accumulators = ", ".join([f"vector<{tile.lanes}xf32>"] * tile.rows)
    outputs = ", ".join([f"vector<{sizes['E']}xf32>"] * tile.group)
    return {
        "acc_args": ", ".join(f"%a{i} = %zero_l" for i in rows),
        "acc_types": accumulators,
        "acc_next": ", ".join(f"%r{i}_next" for i in rows),
        "fma_rows": "\n".join(
            fragment(
                dot or "prefill_attention_fma.mlir",
                p=f"r{i}_",
                i=i,
                acc=f"%a{i}",
                **operands,
                **sizes,
            )
            for i in rows
        ),
        "tile_stores": "\n".join(
            fragment("prefill_attention_tile_store.mlir", p=f"s{i}_", i=i, acc=f"%acc#{i}", **sizes)
            for i in rows
        ),
        "rows": "\n".join(_row_step(u, tile.lanes, sizes) for u in group),
        "pv_args": ", ".join(f"%o{u} = %x{u}_o" for u in group),
        "pv_types": outputs,
        "pv": "\n".join(
            fragment(
                "prefill_attention_pv.mlir", p=f"y{u}_", slot=f"%x{u}_slot", acc=f"%o{u}", **sizes
            )
            for u in group
        ),
        "pv_next": ", ".join(f"%y{u}_next" for u in group),
        "o_stores": "\n".join(
            fragment(
                "prefill_attention_row_store.mlir",
                value=f"%o_all#{u}",
                buffer="%os",
                i=f"%x{u}_i",
                W=sizes["E"],
                **sizes,
            )
            for u in group
        ),
    }


def _row_step(u: int, lanes: int, sizes: dict[str, int]) -> str:
    """Row ``u`` of a group over a tile: its scores, their maximum by halves (``lanes`` down to
    1), its softmax step."""
    p = f"x{u}_"
    steps = [fragment("prefill_attention_row.mlir", p=p, u=u, **sizes)]
    src, width = f"%{p}s", lanes // 2
    while width >= 1:
        half = fragment("prefill_attention_max_half.mlir", p=p, src=src, W=width, W2=2 * width)
        steps.append(half)
        src, width = f"%{p}max{width}", width // 2
    steps.append(fragment("prefill_attention_softmax.mlir", p=p, **sizes))
    return "\n".join(steps)


def _mask_fields(mask: TensorInfo | None, fill: bool, b: int, s: int) -> dict[str, object]:
    """The function's mask argument and its rows ``[MB, T or 1, S]`` (MB: 1 or the batch), made
    additive (-inf where masked) over ``[B, T, S]`` (``b``, ``s``: the batch and keys, static or
    dynamic)."""
    keys = shape_text((s,))
    if mask is None:
        mask_elem, shape, mb, mt = "i1", (1, 1, s), 1, 1
        if s == DYNAMIC:
            rows = (
                "  %mask_false = arith.constant false\n"
                "  %mask_empty = tensor.empty(%s) : tensor<1x1x?xi1>\n"
                "  %mask_rows = linalg.fill ins(%mask_false : i1)"
                " outs(%mask_empty : tensor<1x1x?xi1>) -> tensor<1x1x?xi1>"
            )
        else:
            rows = f"  %mask_rows = arith.constant dense<false> : tensor<1x1x{s}xi1>"
        arg, doc = "", "none: every position open"
    else:
        mask_elem, shape = mask.dtype, mask.shape
        per_query = mask.rank >= 2 and mask.shape[-2] != 1
        mt = mask.shape[-2] if per_query else 1
        lead = mask.shape[:-2]
        mb = DYNAMIC if DYNAMIC in lead else math.prod(lead)
        arg = f", %mask: tensor<{shape_text(mask.shape)}x{mask_elem}>"
        doc = "True: masked" if fill else "added to the scores"
        into = f"tensor<{shape_text((mb, mt))}x{keys}x{mask_elem}>"
        source = f"tensor<{shape_text(mask.shape)}x{mask_elem}>"
        if mask.rank <= 2:
            t_dim = "%t" if mt == DYNAMIC else str(mt)
            s_dim = "%s" if s == DYNAMIC else str(s)
            groups = "[[0, 1, 2]]" if mask.rank == 1 else "[[0, 1], [2]]"
            rows = (
                f"  %mask_rows = tensor.expand_shape %mask {groups} output_shape"
                f" [1, {t_dim if mask.rank == 2 else 1}, {s_dim}] : {source} into {into}"
            )
        else:
            lead_dims = ", ".join(str(i) for i in range(mask.rank - 2))
            rows = (
                f"  %mask_rows = tensor.collapse_shape %mask [[{lead_dims}], [{mask.rank - 2}],"
                f" [{mask.rank - 1}]] : {source} into {into}"
            )
    value = additive_mask(mask is not None, fill)
    dynamic = [name for name, d in (("%batch", b), ("%t", DYNAMIC), ("%s", s)) if d == DYNAMIC]
    return {
        "MB": shape_text((mb,)),
        "MT": shape_text((mt,)),
        "mask_shape": shape_text(shape),
        "mask_elem": mask_elem,
        "mask_doc": doc,
        "mask_arg": arg,
        "mask_rows": rows,
        "mask_sizes": ", ".join(dynamic),
        "mask_b": "0" if mb == 1 else "b",
        "mask_t": "t" if mt != 1 else "0",
        "mask_value": value,
    }
