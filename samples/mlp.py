"""A 10-layer MLP, width 1024, batch 32: Linear → ReLU, nine times, then a last Linear.

``qmlir compile samples/mlp.py:build`` (f32) or ``samples/mlp.py:build_bf16``.
"""

from __future__ import annotations

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
