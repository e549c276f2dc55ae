"""``prefill-attention`` (llvm-cpu, where ``decode-gemv`` runs): the attention of several query
positions (a prefill's dynamic number, or a static one) runs as a tiled kernel with softmax's
running form (``passes/prefill_attention.py``). Checked against torch's SDPA in f64 (every mask
form, GQA and not, a bf16 cache, a key count and a query count that fill no whole tile or block, a
row masked everywhere, the AVX2 tile, dynamic batch and keys); generators' prefills against
the decomposed attention: ``tests/e2e/test_decode_attention.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.pipeline.core import decode_gemv_isa
from compiler.pipeline.target import resolve_target
from passes.ir.choices import GemvIsa
from passes.prefill_attention import tiling
from tests.e2e.filecheck import filecheck

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(
        decode_gemv_isa(resolve_target("llvm-cpu", None, "host")) is None,
        reason="this CPU lacks the instructions decode-gemv (and prefill-attention) need",
    ),
]

HEADS, KV_HEADS, E = 4, 2, 16


class _Attention(torch.nn.Module):
    """SDPA of T query positions (dynamic) over S keys."""

    def __init__(self, gqa: bool) -> None:
        super().__init__()
        self.gqa = gqa

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=self.gqa)


class _MaskedAttention(_Attention):
    """The same with a mask ``[1, 1, T, S]`` (bool, or float added) as an input."""

    def forward(  # type: ignore[override]
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, enable_gqa=self.gqa
        )


def _causal(t: int, s: int) -> torch.Tensor:
    """[1, 1, t, s] bool: query i (at position s - t + i) keeps the keys up to its own."""
    return torch.ones(t, s, dtype=torch.bool).tril(s - t)[None, None]


def _run(
    t: int,
    s: int,
    mask: torch.Tensor | None,
    kv_heads: int = KV_HEADS,
    dtype: torch.dtype = torch.float32,
    dump: Path | None = None,
    cpu: str | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """The compiled attention's output at ``t`` positions and torch's (f64, the same inputs)."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, HEADS, t, E, generator=g).to(dtype)
    k = torch.randn(1, kv_heads, s, E, generator=g).to(dtype)
    v = torch.randn(1, kv_heads, s, E, generator=g).to(dtype)
    gqa = kv_heads != HEADS
    module = (_Attention(gqa) if mask is None else _MaskedAttention(gqa)).eval()
    inputs = (q, k, v) if mask is None else (q, k, v, mask)
    tokens = torch.export.Dim("tokens", min=2, max=s)
    dims: tuple = ({2: tokens}, None, None) + (() if mask is None else ({2: tokens},))
    art = compiler.compile(
        module, inputs, recipe="none", dynamic_shapes=dims, dump_ir=dump, cpu=cpu
    )
    out = art(*inputs)
    got = np.asarray(out.float() if isinstance(out, torch.Tensor) else out, dtype=np.float64)
    wide = mask.double() if mask is not None and mask.is_floating_point() else mask
    with torch.no_grad():
        want = module(q.double(), k.double(), v.double(), *(() if wide is None else (wide,)))
    return got, want.numpy()


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def test_a_causal_prefill_runs_in_the_kernel(tmp_path: Path) -> None:
    got, want = _run(21, 40, _causal(21, 40), dump=tmp_path)  # 21 rows, 40 keys: no whole tile
    assert _rel(got, want) < 1e-6
    filecheck(
        """CHECK: func.func @main(
CHECK-NOT: torch.aten.softmax
CHECK: call @qmlir.prefill_attention.1x2xDx16.1x2x40x16f32.fill1x1x1xDx40(
CHECK-NOT: torch.aten.softmax
CHECK: stream.executable private @qmlir.prefill_attention.{{.*}}$executable
CHECK: vector.fma
CHECK: math.exp
CHECK: func.func private @qmlir.prefill_attention.1x2xDx16.1x2x40x16f32.fill1x1x1xDx40(
CHECK: tensor.pad
CHECK: flow.dispatch
""",
        tmp_path / "04-lower.mlir",
    )


def test_without_the_kernel_softmax_stays(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, HEADS, n, E, generator=g) for n in (8, 32, 32))
    module = _Attention(gqa=False).eval()
    tokens = torch.export.Dim("tokens", min=2, max=32)
    compiler.compile(
        module,
        (q, k, v),
        recipe="none",
        dynamic_shapes=({2: tokens}, None, None),
        decode_gemv="off",
        dump_ir=tmp_path,
    )
    filecheck("CHECK-NOT: qmlir.prefill_attention\n", tmp_path / "04-lower.mlir")


@pytest.mark.parametrize("t", [5, 16, 33])  # a partial block, one whole block, three blocks
def test_any_number_of_positions(t: int) -> None:
    got, want = _run(t, 48, _causal(t, 48), seed=t)
    assert _rel(got, want) < 1e-6


def test_an_added_float_mask() -> None:
    mask = torch.randn(1, 1, 12, 40, generator=torch.Generator().manual_seed(1))
    mask[..., -5:] = float("-inf")
    mask[..., 0, :] = float("-inf")  # a row closed to every key: 0, as torch's safe softmax
    mask[..., 3, 20:] = float("-inf")
    got, want = _run(12, 40, mask)
    assert (got[:, :, 0] == 0).all()
    want[:, :, 0] = 0.0  # torch's f64 math reference gives NaN there; its SDPA kernels 0
    assert _rel(got, want) < 1e-6


@pytest.mark.parametrize("kv_heads", [HEADS, 1])  # one K/V head per query head; MQA's one
def test_no_mask_and_no_grouping(kv_heads: int) -> None:
    got, want = _run(9, 37, None, kv_heads=kv_heads)
    assert _rel(got, want) < 1e-6


def test_a_bf16_cache_is_widened_exactly() -> None:
    got, want = _run(10, 48, _causal(10, 48), dtype=torch.bfloat16)
    # the result is rounded to bf16 once, as torch's: within a bf16 rounding of the exact one
    assert np.all(np.abs(got - want) <= 2.0**-8 * np.abs(want) + 1e-30)


class _WidenedAttention(torch.nn.Module):
    """SDPA over bf16 q, K and V widened to f32 first (a bf16 model's decomposed attention
    takes them so), a causal mask input: the f32 result, not rounded to bf16."""

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(
            q.float(), k.float(), v.float(), attn_mask=mask, enable_gqa=True
        )


@pytest.mark.skipif(
    decode_gemv_isa(resolve_target("llvm-cpu", None, "host")) is not GemvIsa.AVX512_BF16,
    reason="q . k as bf16 pairs needs AVX512-BF16",
)
@pytest.mark.parametrize("t", [7, 33])  # a partial block; three blocks
def test_bf16_q_and_k_multiply_as_pairs(t: int, tmp_path: Path) -> None:
    """q and K holding bf16 values (widened from bf16): q . k by vdpbf16ps over pairs of the
    head dim; the products exact, their f32 sums in pairs: within 1e-6 of torch's f64."""
    g = torch.Generator().manual_seed(t)
    s = 48
    q = torch.randn(1, HEADS, t, E, generator=g).bfloat16()
    k, v = (torch.randn(1, KV_HEADS, s, E, generator=g).bfloat16() for _ in range(2))
    mask = _causal(t, s)
    tokens = torch.export.Dim("tokens", min=2, max=s)
    module = _WidenedAttention().eval()
    art = compiler.compile(
        module,
        (q, k, v, mask),
        recipe="none",
        dynamic_shapes=({2: tokens}, None, None, {2: tokens}),
        dump_ir=tmp_path,
    )
    got = np.asarray(art(q, k, v, mask), dtype=np.float64)
    with torch.no_grad():
        want = torch.nn.functional.scaled_dot_product_attention(
            q.double(), k.double(), v.double(), attn_mask=mask, enable_gqa=True
        )
    assert _rel(got, want.numpy()) < 1e-6
    filecheck(
        """CHECK: call @qmlir.prefill_attention.pairs.1x2xDx16.1x2x48x16f32.fill1x1x1xDx48(
CHECK: stream.executable private @qmlir.prefill_attention.pairs.{{.*}}$executable
CHECK: memref<?x8x?xbf16>
CHECK: vector.bitcast %{{.*}} : vector<16xbf16> to vector<8xi32>
CHECK: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
CHECK-NOT: vector.fma %{{.*}} : vector<16xf32>
CHECK: math.exp
CHECK: func.func private @qmlir.prefill_attention.pairs.
CHECK: arith.truncf %{{.*}} : f32 to bf16
CHECK: flow.dispatch
""",
        tmp_path / "04-lower.mlir",
    )


def test_the_avx2_tile(tmp_path: Path) -> None:
    """AVX2 code (8 keys a tile, 8 rows a block, one row at a time), where this CPU runs it."""
    got, want = _run(19, 40, _causal(19, 40), cpu="x86-64-v3", dump=tmp_path)
    assert _rel(got, want) < 1e-6
    filecheck("CHECK: vector<8xf32>\n", tmp_path / "04-lower.mlir")


def test_the_tile_fits_the_stack_for_every_head_dim() -> None:
    for isa in ("avx512bf16", "avx2"):
        for e in (32, 64, 80, 96, 128, 256):
            tile = tiling(isa, e)
            stack = 4 * (2 * tile.rows * e + tile.rows * tile.lanes + tile.group * tile.lanes)
            assert stack + 8 * tile.rows <= 24576 and tile.rows % tile.group == 0


def test_a_tile_closed_to_the_whole_block_is_not_read() -> None:
    """Keys that the mask closes to every query of a block (the cache past a prompt) are never
    read: a non-finite stale value there does not reach the output (the decomposition
    multiplied it by a weight of 0: NaN)."""
    t, s = 6, 48
    keep = _causal(t, 32)
    keep = torch.cat([keep, torch.zeros(1, 1, t, s - 32, dtype=torch.bool)], dim=-1)
    g = torch.Generator().manual_seed(3)
    q = torch.randn(1, HEADS, t, E, generator=g)
    k, v = (torch.randn(1, KV_HEADS, s, E, generator=g) for _ in range(2))
    k[:, :, 40], v[:, :, 41] = float("nan"), float("inf")
    module = _MaskedAttention(gqa=True).eval()
    tokens = torch.export.Dim("tokens", min=2, max=s)
    art = compiler.compile(
        module,
        (q, k, v, keep),
        recipe="none",
        dynamic_shapes=({2: tokens}, None, None, {2: tokens}),
    )
    got = np.asarray(art(q, k, v, keep), dtype=np.float64)
    with torch.no_grad():
        want = module(
            q[..., :, :].double(), k[:, :, :32].double(), v[:, :, :32].double(), keep[..., :32]
        )
    assert np.isfinite(got).all()
    assert _rel(got, want.numpy()) < 1e-6


@pytest.mark.parametrize("mask_kind", ["none", "bool", "float"])
def test_a_static_number_of_positions(mask_kind: str, tmp_path: Path) -> None:
    """An encoder's attention (every query over every key, static shapes: MiniLM's) and a
    static causal one take the kernel too."""
    t = s = 24
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(2, HEADS, t, E, generator=g) for _ in range(3))
    if mask_kind == "none":
        module, inputs = _Attention(gqa=False).eval(), (q, k, v)
    else:
        mask = _causal(t, s).expand(2, 1, t, s)
        if mask_kind == "float":  # MiniLM's padding mask: a key closed to every query
            mask = torch.zeros(2, 1, 1, s)
            mask[1, ..., 20:] = float("-inf")
        module, inputs = _MaskedAttention(gqa=False).eval(), (q, k, v, mask)
    art = compiler.compile(module, inputs, recipe="none", dump_ir=tmp_path)
    got = np.asarray(art(*inputs), dtype=np.float64)
    with torch.no_grad():
        want = module(*(x.double() if x.is_floating_point() else x for x in inputs)).numpy()
    assert _rel(got, want) < 1e-6
    filecheck("CHECK: call @qmlir.prefill_attention.2x4x24x16.\n", tmp_path / "04-lower.mlir")


def test_a_dynamic_batch_and_key_count(tmp_path: Path) -> None:
    """An encoder compiled with dynamic batch and sequence (MiniLM under --dynamic): the keys'
    count is dynamic too (the decomposition pads it to a multiple of 8), and so is the batch."""
    g = torch.Generator().manual_seed(7)
    module = _MaskedAttention(gqa=False).eval()
    batch = torch.export.Dim("batch", min=1, max=8)
    seq = torch.export.Dim("seq", min=2, max=64)
    dims = ({0: batch, 2: seq}, {0: batch, 2: seq}, {0: batch, 2: seq}, {0: batch, 3: seq})

    def inputs(b: int, n: int) -> tuple[torch.Tensor, ...]:
        q, k, v = (torch.randn(b, HEADS, n, E, generator=g) for _ in range(3))
        mask = torch.zeros(b, 1, 1, n)
        mask[-1, ..., n // 2 :] = float("-inf")  # a padded sentence
        return q, k, v, mask

    art = compiler.compile(
        module, inputs(2, 12), recipe="none", dynamic_shapes=dims, dump_ir=tmp_path
    )
    filecheck(
        "CHECK: call @qmlir.prefill_attention.Dx4xDx16.Dx4xDx16f32.\n", tmp_path / "04-lower.mlir"
    )
    for b, n in ((3, 21), (1, 40), (2, 12)):
        x = inputs(b, n)
        got = np.asarray(art(*x))
        with torch.no_grad():
            want = module(*(t.double() for t in x)).numpy()
        assert _rel(got.astype(np.float64), want) < 1e-6, (b, n)
    # the same keys in the same tiles as a static compile's (padded keys add exact zeros)
    static = compiler.compile(module, x, recipe="none")
    np.testing.assert_array_equal(got.view(np.uint32), np.asarray(static(*x)).view(np.uint32))
