"""A pre-LN transformer block: x + attention(LN(x)), then x + MLP(LN(x)).

Attention is written with explicit matmuls (``q @ k^T``, ``p @ v``), which stay in high precision
unless ``--quantize-all-matmuls``. Batch 4, sequence 128, width 512, 8 heads, MLP 4x with GELU.
``samples/transformer_block.py:build`` (f32) or ``:build_bf16``.
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
