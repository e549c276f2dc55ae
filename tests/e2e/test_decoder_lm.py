"""A Llama-style decoder LM (samples/decoder_lm.py): it exports, imports and compiles, and its
next-token logits stay close to the f32 model's. Thresholds sit below the figures measured on
``build_small`` (32 rows; docs/recipes.md has the full table): fp8-current 28.5 dB, top-1 1.0;
nvfp4 17.4 dB, top-1 1.0 (0.992 on 256 rows)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import compiler
from compiler.analysis.metrics import compare
from samples import decoder_lm

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def small() -> tuple[nn.Module, tuple[torch.Tensor, ...], torch.Tensor]:
    model, inputs = decoder_lm.build_small()
    with torch.no_grad():
        ref = model(*inputs)
    return model, inputs, ref


def test_wrapper_is_the_last_position_of_hf_logits(small) -> None:  # type: ignore[no-untyped-def]
    """The wrapped SDPA model, no cache, against transformers' own forward with eager attention
    and its default cache on: the same next-token logits."""
    model, (ids,), ref = small
    lm = decoder_lm.make_lm()
    lm.config._attn_implementation = "eager"
    with torch.no_grad():
        expected = lm(input_ids=ids, use_cache=True).logits[:, -1, :]
    assert ref.shape == (ids.shape[0], decoder_lm.VOCAB)
    torch.testing.assert_close(ref, expected, rtol=1e-4, atol=1e-4)
    assert decoder_lm.top1_margin(ref).median() > 1.0  # peaked: top-1 agreement means something


@pytest.mark.parametrize(
    ("recipe", "min_top1", "min_sqnr_db"),
    [("none", 1.0, 90.0), ("fp8-current", 0.95, 25.0), ("nvfp4", 0.9, 15.0)],
)
def test_next_token_logits_close_to_f32(small, recipe, min_top1, min_sqnr_db) -> None:  # type: ignore[no-untyped-def]
    model, inputs, ref = small
    art = compiler.compile(model, inputs, recipe)
    metrics = compare(ref.numpy(), art(*inputs).numpy())
    assert metrics.top1 is not None and metrics.top1 >= min_top1, metrics
    assert metrics.sqnr_db >= min_sqnr_db, metrics
    quantized = [e for e in art.metadata["layers"] if e["recipe"] == recipe]
    assert len(quantized) == (0 if recipe == "none" else 29)  # 7 linears x 4 layers + lm_head


class Diff(nn.Module):
    """``torch.diff`` with ``prepend`` (transformers' packed-sequence check uses it)."""

    def __init__(self) -> None:
        super().__init__()
        self.out = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.diff(x, prepend=x[:, :1] - 1, dim=-1))


def test_diff_is_decomposed_before_import() -> None:
    torch.manual_seed(0)
    model, x = Diff().eval(), torch.randn(4, 8)
    with torch.no_grad():
        ref = model(x)
    out = compiler.compile(model, (x,), "none")(x)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
