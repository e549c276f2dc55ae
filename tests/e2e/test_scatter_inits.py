"""Scatters into zeros with dynamic dims (``passes/unshare_scatter_inits.py``): two
``index_put`` (accumulating) and a ``scatter`` into ``zeros_like`` tensors of one dynamic shape
give torch's values at every size. Without the pass IREE 3.13 wrote both ``index_put`` into
one shared buffer (errors of 2.6 to 7.5 here)."""

from __future__ import annotations

import numpy as np
import torch

import compiler


class ThreeScatters(torch.nn.Module):
    def forward(
        self, x: torch.Tensor, i1: torch.Tensor, i2: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        a = torch.zeros_like(x).index_put((i1,), x, accumulate=True)
        b = torch.zeros_like(x).index_put((i2,), x * 2, accumulate=True)
        c = torch.zeros_like(i1).scatter(0, i2, i1)
        return a, b, c


def _inputs(n: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(n)
    return (
        torch.randn(n, 8, generator=g),
        torch.randperm(n, generator=g),
        torch.randperm(n, generator=g),
    )


def test_scatters_into_zeros_with_dynamic_dims_give_torch_values() -> None:
    rows = torch.export.Dim("rows", min=2, max=64)
    art = compiler.compile(
        ThreeScatters(), _inputs(16), "none", dynamic_shapes=({0: rows}, {0: rows}, {0: rows})
    )
    for n in (16, 5, 64):
        inputs = _inputs(n)
        for got, want in zip(
            art(*[t.numpy() for t in inputs]), ThreeScatters()(*inputs), strict=True
        ):
            np.testing.assert_array_equal(got, want.numpy())
