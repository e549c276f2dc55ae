"""The export's small-topk decomposition (``compiler/frontend/export.py``: an MoE router's topk
as rounds of max and first index) against torch's own topk, in torch: the same values and
indices on random rows (no ties); on ties (the lower index first, where torch's CPU topk has
its own order), NaN (ranked above everything, first as the largest, last as the smallest),
-inf and +inf, both directions, the values torch's; larger ones are left to torch."""

from __future__ import annotations

import pytest
import torch

from compiler.frontend.export import SMALL_TOPK_N, _topk


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize(("n", "k"), [(2, 1), (4, 2), (8, 2), (64, 8), (256, 6)])
def test_random_rows_match_torch(n: int, k: int, largest: bool) -> None:
    x = torch.randn(50, n, generator=torch.Generator().manual_seed(n * 10 + k))
    values, indices = _topk(x, k, -1, largest, True)
    want = torch.topk(x, k, -1, largest, True)
    torch.testing.assert_close(values, want.values, rtol=0, atol=0)
    torch.testing.assert_close(indices, want.indices, rtol=0, atol=0)


def test_ties_nan_and_infinities() -> None:
    nan, inf = float("nan"), float("inf")
    x = torch.tensor(
        [
            [1.0, 3.0, 3.0, 2.0],
            [nan, 1.0, nan, 0.0],
            [-inf, -inf, -inf, 5.0],
            [inf, 1.0, inf, -inf],
            [0.0, -0.0, 0.0, 0.0],
        ]
    )
    values, indices = _topk(x, 3, -1, True, True)
    assert indices.tolist() == [[1, 2, 3], [0, 2, 1], [3, 0, 1], [0, 2, 1], [0, 1, 2]]
    want = torch.topk(x, 3)
    torch.testing.assert_close(values, want.values, rtol=0, atol=0, equal_nan=True)
    low_values, low_indices = _topk(x, 2, 1, False, False)
    assert low_indices.tolist() == [[0, 3], [3, 1], [0, 1], [3, 1], [0, 1]]
    want = torch.topk(x, 2, 1, largest=False)
    torch.testing.assert_close(low_values, want.values, rtol=0, atol=0, equal_nan=True)
    only_nan = torch.tensor([[nan, nan, 1.0]])
    assert _topk(only_nan, 3, -1, False, True)[1].tolist() == [[2, 0, 1]]


def test_other_dims_and_large_ones() -> None:
    x = torch.randn(3, 7, 5, generator=torch.Generator().manual_seed(1))
    values, indices = _topk(x, 2, 1, True, True)
    want = torch.topk(x, 2, 1)
    assert torch.equal(indices, want.indices) and torch.equal(values, want.values)
    big = torch.randn(2, SMALL_TOPK_N + 1)
    assert _topk(big, 2, -1, True, True) is NotImplemented  # stays torch's topk
    assert _topk(big, 2, -1, True, False) is not NotImplemented  # made sorted
