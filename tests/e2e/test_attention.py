"""SDPA on llvm-cpu: as bmm → softmax → bmm by default, as IREE's attention op with
``attention="fused"``, the same outputs; with ``quantize_all_matmuls`` its two GEMMs (Q·Kᵀ, P·V)
are quantized like any activation × activation matmul."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F  # noqa: N812

import compiler
from compiler.analysis.metrics import compare

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`


class CausalGQA(torch.nn.Module):
    """Causal self-attention with 4 query heads over 2 key/value heads."""

    def __init__(self, dim: int = 64, heads: int = 4, kv_heads: int = 2) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.q = torch.nn.Linear(dim, dim)
        self.kv = torch.nn.Linear(dim, 2 * kv_heads * self.head_dim)
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(x).view(b, t, 2, self.kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


@pytest.fixture(scope="module")
def model() -> tuple[torch.nn.Module, tuple[torch.Tensor], torch.Tensor]:
    m = CausalGQA().eval()
    x = torch.randn(2, 16, 64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        return m, (x,), m(x)


@pytest.mark.parametrize("attention", ["auto", "fused"])
def test_both_lowerings_match_torch(model, attention: str) -> None:  # type: ignore[no-untyped-def]
    m, inputs, ref = model
    art = compiler.compile(m, inputs, "none", attention=attention)
    assert art.metadata["attention"] == ("fused" if attention == "fused" else "matmuls")
    torch.testing.assert_close(art(*inputs), ref, rtol=1e-5, atol=1e-5)


def test_quantize_all_matmuls_quantizes_the_attention_gemms(model) -> None:  # type: ignore[no-untyped-def]
    m, inputs, ref = model
    art = compiler.compile(m, inputs, "fp8-current", quantize_all_matmuls=True)
    layers = art.metadata["layers"]
    assert [e["recipe"] for e in layers] == ["fp8-current"] * 5  # q, kv, Q·Kᵀ, P·V, out
    assert [e["layer"] for e in layers] == ["q", "kv", "", "", "out"]
    assert compare(ref.numpy(), art(*inputs).numpy()).sqnr_db > 20
    kept = compiler.compile(m, inputs, "fp8-current").metadata["layers"]
    notes = [e["note"] for e in kept if e["recipe"] == "none"]
    assert notes == ["no operand is a weight (use --quantize-all-matmuls)"] * 2


class _PaddedLM(torch.nn.Module):
    """A tiny Llama called with an attention mask (transformers builds the causal and padding
    mask it hands SDPA)."""

    def __init__(self) -> None:
        super().__init__()
        from tests.e2e import checkpoints

        self.lm = checkpoints.llama()

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=ids, attention_mask=mask, use_cache=False).logits


def test_a_left_padded_prompt_gives_torchs_logits() -> None:
    """A left-padded row's padding positions are closed to every key (causal and padding
    mask): their attention is 0, as torch's SDPA gives, not the softmax's 0 / 0, which made
    the next layer's keys and values at those positions NaN and with them the whole row."""
    lm = _PaddedLM().eval()
    ids = torch.randint(0, 256, (2, 8), generator=torch.Generator().manual_seed(2))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, :3] = 0
    with torch.no_grad():
        want = lm(ids, mask).numpy()
    got = np.asarray(compiler.compile(lm, (ids, mask), recipe="none")(ids.numpy(), mask.numpy()))
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
