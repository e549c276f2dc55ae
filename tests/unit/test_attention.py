"""SDPA as bmm → softmax → bmm (compiler/frontend/attention.py): torch's semantics, and what
export keeps."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from compiler.frontend.attention import sdpa_as_matmuls
from compiler.frontend.export import export_model
from compiler.frontend.model_source import ModelSource
from passes.base.errors import QmlirError

B, H, L, S, E = 2, 4, 5, 7, 8


def _qkv(heads_kv: int = H) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (
        torch.randn(B, H, L, E, generator=g),
        torch.randn(B, heads_kv, S, E, generator=g),
        torch.randn(B, heads_kv, S, E, generator=g),
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"is_causal": True},
        {"scale": 0.3},
        {"attn_mask": torch.rand(L, S) > 0.3},  # bool: keep where True
        {"attn_mask": torch.randn(B, 1, L, S)},  # float: added
    ],
    ids=["plain", "causal", "scale", "bool-mask", "float-mask"],
)
def test_matches_torch_sdpa(kwargs: dict[str, object]) -> None:
    q, k, v = _qkv()
    mask = kwargs.get("attn_mask")
    if isinstance(mask, torch.Tensor) and mask.dtype == torch.bool:
        mask[:, 0] = True  # no fully masked row (NaN in both)
    expected = F.scaled_dot_product_attention(q, k, v, **kwargs)  # type: ignore[arg-type]
    torch.testing.assert_close(sdpa_as_matmuls(q, k, v, **kwargs), expected)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"is_causal": True},
        {"attn_mask": torch.rand(L, S) > 0.3},
        {"attn_mask": torch.randn(B, 1, L, S)},  # one mask for every head
        {"attn_mask": torch.randn(B, H, L, S)},  # a mask per query head
        {"attn_mask": torch.rand(1, H, L, S) > 0.3},
    ],
    ids=["plain", "causal", "bool-mask", "shared-mask", "per-head-mask", "per-head-bool"],
)
@pytest.mark.parametrize("heads_kv", [1, 2])
def test_grouped_query_attention(kwargs: dict[str, object], heads_kv: int) -> None:
    q, k, v = _qkv(heads_kv=heads_kv)
    mask = kwargs.get("attn_mask")
    if isinstance(mask, torch.Tensor) and mask.dtype == torch.bool:
        mask[..., 0] = True
    expected = F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kwargs)  # type: ignore[arg-type]
    out = sdpa_as_matmuls(q, k, v, enable_gqa=True, **kwargs)  # type: ignore[arg-type]
    torch.testing.assert_close(out, expected)


def test_grouped_query_attention_reads_each_kv_head_once() -> None:
    """The query heads are grouped by K/V head: K and V enter the GEMMs as given, never
    repeated (a repeat would copy a KV cache once per query head at every decode step)."""
    q, k, v = _qkv(heads_kv=2)
    graph = torch.fx.experimental.proxy_tensor.make_fx(
        lambda q, k, v: sdpa_as_matmuls(q, k, v, enable_gqa=True)
    )(q, k, v)
    nodes = [n for n in graph.graph.nodes if n.op == "call_function"]
    assert not [n for n in nodes if "repeat" in str(n.target)]
    grown = [  # an expand that copies (the matmul's own expands keep their input's size)
        n for n in nodes
        if "expand" in str(n.target)
        and n.meta["val"].numel() != n.args[0].meta["val"].numel()  # type: ignore[union-attr]
    ]  # fmt: skip
    assert not grown, grown
    shapes = [
        tuple(n.meta["val"].shape)
        for n in graph.graph.nodes
        if str(n.target) in ("aten.bmm.default", "aten.matmul.default")
    ]
    assert shapes == [(B * 2, 2 * L, S), (B * 2, 2 * L, E)], shapes


@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("heads_kv", [H, 2])
def test_a_row_closed_to_every_key_is_zero_as_torch_sdpa_gives(kind: str, heads_kv: int) -> None:
    """torch's SDPA (2.5 on: its safe softmax) gives 0 for a query row whose mask closes every
    key, where the softmax alone gives 0 / 0; a NaN in the inputs still propagates."""
    q, k, v = _qkv(heads_kv=heads_kv)
    keep = torch.ones(B, 1, L, S, dtype=torch.bool)
    keep[0, :, 2] = False  # row 2 of batch 0 closed to every key
    keep[1, :, :, 4:] = False
    mask = keep if kind == "bool" else torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))
    out = sdpa_as_matmuls(q, k, v, attn_mask=mask, enable_gqa=heads_kv != H)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=heads_kv != H)
    assert (out[0, :, 2] == 0).all() and not out.isnan().any()
    torch.testing.assert_close(out, expected)
    v[1, 0, 0, 0] = float("nan")  # an open key's value: NaN in every row that reads it
    poisoned = sdpa_as_matmuls(q, k, v, attn_mask=mask, enable_gqa=heads_kv != H)
    assert poisoned[1, 0].isnan().any() and (poisoned[0, :, 2] == 0).all()


def test_dropout_is_refused() -> None:
    q, k, v = _qkv()
    with pytest.raises(QmlirError, match="dropout_p=0.1"):
        sdpa_as_matmuls(q, k, v, dropout_p=0.1)


class _Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = torch.nn.Linear(E, E)

    def forward(self, x: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(self.q(x), k, v, is_causal=True)


@pytest.mark.parametrize("as_matmuls", [True, False])
def test_export_decomposes_sdpa_only_when_asked(as_matmuls: bool) -> None:
    q, k, v = _qkv()
    source = ModelSource("attention", _Attention().eval(), (q, k, v))
    program = export_model(source, attention_as_matmuls=as_matmuls)
    targets = [str(n.target) for n in program.graph.nodes if n.op == "call_function"]
    sdpa = [t for t in targets if "scaled_dot_product" in t]
    gemms = [t for t in targets if t in ("aten.bmm.default", "aten.matmul.default")]
    assert (sdpa, len(gemms)) == (([], 2) if as_matmuls else (sdpa, 0))
    assert as_matmuls or sdpa
    with torch.no_grad():
        expected = source.module(q, k, v)
    torch.testing.assert_close(program.module()(q, k, v), expected)


class _Masked(torch.nn.Module):
    """SDPA over q, k, v and a mask of one of the kinds ``sdpa_as_matmuls`` pads."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, m: torch.Tensor
    ) -> torch.Tensor:
        gqa = k.size(1) != q.size(1)
        if self.kind == "plain":
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
        if self.kind == "causal":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
        if self.kind == "float":
            return F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=gqa)
        keep = m > -0.5 if self.kind == "bool" else (m[..., :1, :] > -0.5)  # [B,1,L,S] / [B,1,1,S]
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep, enable_gqa=gqa)


@pytest.mark.parametrize("kind", ["plain", "causal", "float", "bool", "bool-over-rows"])
@pytest.mark.parametrize("heads_kv", [H, 2])
def test_a_dynamic_key_length_is_padded_to_a_multiple_of_8(kind: str, heads_kv: int) -> None:
    """With a dynamic key length, K and V get zero rows up to a multiple of 8 keys and the masks
    keep the padding's keys out (``passes/assume_multiples.py`` says why); the exported program
    gives torch's outputs at lengths on and off the multiple."""
    length = torch.export.Dim("length", min=2, max=40)
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(B, h, S, E, generator=g) for h in (H, heads_kv, heads_kv))
    mask = torch.randn(B, 1, S, S, generator=g)  # self-attention lengths (causal): L = S
    dims = {"q": {2: length}, "k": {2: length}, "v": {2: length}, "m": {2: length, 3: length}}
    source = ModelSource("masked", _Masked(kind).eval(), (q, k, v, mask), dynamic_shapes=dims)
    program = export_model(source)
    targets = [str(n.target) for n in program.graph.nodes if n.op == "call_function"]
    assert "aten.pad.default" in targets
    for n in (3, 8, 13):
        args = [torch.randn(B, h, n, E, generator=g) for h in (H, heads_kv, heads_kv)]
        args.append(torch.randn(B, 1, n, n, generator=g))
        args[3][..., 0] = 1.0  # no fully masked row (NaN in both)
        with torch.no_grad():
            expected = _Masked(kind)(*args)
            got = program.module()(*args)
        torch.testing.assert_close(got, expected)
