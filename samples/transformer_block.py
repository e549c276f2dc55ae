"""A pre-LN transformer block: x + attention(LN(x)), then x + MLP(LN(x)).

Attention is written with explicit matmuls (``q @ k^T``, ``p @ v``), which stay in high precision
unless ``--quantize-all-matmuls``. Batch 4, sequence 128, width 512, 8 heads, MLP 4x with GELU.
``samples/transformer_block.py:build`` (f32) or ``:build_bf16``.

Training: ``:build_train`` is a smaller block (width 128, 4 heads) and a linear head under an
MSE loss on a synthetic sequence task (``sequence_batches``): each position's target mixes its
own vector with the sequence's mean, which attention can learn.
"""

from __future__ import annotations

import math

import torch
from torch import nn

BATCH, SEQ, DIM, HEADS = 4, 128, 512, 8


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).reshape(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        out = torch.softmax(scores, dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, s, d))


class MLP(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(nn.functional.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim: int = DIM, heads: int = HEADS) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def build(dtype: torch.dtype = torch.float32) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = Block().to(dtype).eval()
    return model, (torch.randn(BATCH, SEQ, DIM).to(dtype),)


def build_bf16() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return build(torch.bfloat16)


class SequenceRegression(nn.Module):
    """A block and a linear head under an MSE loss: ``forward(x, y)`` returns the loss."""

    def __init__(self, dim: int = 128, heads: int = 4) -> None:
        super().__init__()
        self.block = Block(dim, heads)
        self.head = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return nn.functional.mse_loss(self.head(self.block(x)), y)


def sequence_batches(
    count: int, batch: int = 8, seq: int = 32, dim: int = 128, noise: float = 0.5, seed: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` batches stacked on a first axis: ``y = (x + 4 * mean_seq(x)) @ W + noise * n``
    for a fixed random ``W``; the best possible loss is ``noise**2``."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(dim, dim, generator=g) / math.sqrt(dim)
    x = torch.randn(count, batch, seq, dim, generator=g)
    y = (x + 4 * x.mean(dim=2, keepdim=True)) @ w
    return x, y + noise * torch.randn(y.shape, generator=g)


def build_train() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = SequenceRegression()
    x, y = sequence_batches(1)
    return model, (x[0], y[0])
