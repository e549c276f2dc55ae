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


def test_grouped_query_attention() -> None:
    q, k, v = _qkv(heads_kv=2)
    expected = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    torch.testing.assert_close(sdpa_as_matmuls(q, k, v, enable_gqa=True), expected)


def test_fully_masked_row_is_nan_like_torch_math() -> None:
    q, k, v = _qkv()
    mask = torch.ones(L, S, dtype=torch.bool)
    mask[2] = False
    out = sdpa_as_matmuls(q, k, v, attn_mask=mask)
    assert out[:, :, 2].isnan().all() and not out[:, :, :2].isnan().any()


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
