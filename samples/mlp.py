"""A 10-layer MLP, width 1024, batch 32: Linear → ReLU, nine times, then a last Linear.

``qmlir compile samples/mlp.py:build`` (f32) or ``samples/mlp.py:build_bf16``.

Training: ``samples/mlp.py:build_train`` is the MLP under an MSE loss (forward(x, y) returns
it), for ``qmlir compile --train``; ``python samples/mlp.py batches.npz`` writes batches of a
synthetic regression (targets from a fixed random teacher MLP, plus noise) for ``qmlir train
--data``.
"""

from __future__ import annotations

import argparse
import io

import numpy as np
import torch
from torch import nn

WIDTH = 1024
DEPTH = 10
BATCH = 32


class MLP(nn.Module):
    def __init__(self, width: int = WIDTH, depth: int = DEPTH) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = torch.relu(x)
        return x


def build(dtype: torch.dtype = torch.float32) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = MLP().to(dtype).eval()
    return model, (torch.randn(BATCH, WIDTH).to(dtype),)


def build_bf16() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return build(torch.bfloat16)


class Regression(nn.Module):
    """A model under an MSE loss: ``forward(x, y)`` returns the loss (a training step's form)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return nn.functional.mse_loss(self.model(x), y)


def regression_batches(
    count: int,
    width: int = WIDTH,
    depth: int = DEPTH,
    batch: int = BATCH,
    noise: float = 0.5,
    seed: int = 1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` batches ``x, y`` stacked on a first axis: ``y = teacher(x) + noise * n``, the
    teacher a fixed random MLP of the same shape (outputs scaled to unit variance), ``n``
    standard normal; the best possible loss is ``noise**2``."""
    with torch.random.fork_rng():
        torch.manual_seed(seed + 1000)
        teacher = MLP(width, depth)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(count, batch, width, generator=g)
    with torch.no_grad():
        target = teacher(x)
        target = target / target.std()
    return x, target + noise * torch.randn(target.shape, generator=g)


def build_train(
    width: int = WIDTH, depth: int = DEPTH
) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = Regression(MLP(width, depth))
    x, y = regression_batches(1, width, depth)
    return model, (x[0], y[0])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="write regression batches for qmlir train")
    parser.add_argument("output", help="a .npz with x and y, batches on the first axis")
    parser.add_argument("--batches", type=int, default=16)
    args = parser.parse_args()
    xs, ys = regression_batches(args.batches)
    buffer = io.BytesIO()
    np.savez(buffer, x=xs.numpy(), y=ys.numpy())
    with open(args.output, "wb") as f:
        f.write(buffer.getvalue())
    print(f"wrote {args.output}: {args.batches} batches of x, y {list(xs.shape[1:])}")
