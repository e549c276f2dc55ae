"""MoE-style models: expert weights batched as ``[E, K, N]`` parameters used by ``torch.bmm``,
and the same computation written as one 2-D matmul per expert (the reference for numerics)."""

from __future__ import annotations

import torch
from torch import nn

EXPERTS, DIM, HIDDEN, TOKENS = 4, 64, 128, 8


def _weights(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(EXPERTS, DIM, HIDDEN, generator=g) * 0.1,
        torch.randn(EXPERTS, HIDDEN, DIM, generator=g) * 0.1,
    )


class BatchedExperts(nn.Module):
    """Every token through every expert (``relu(x @ up[i]) @ down[i]``), summed over experts."""

    def __init__(self, seed: int = 7) -> None:
        super().__init__()
        up, down = _weights(seed)
        self.w_up = nn.Parameter(up)
        self.w_down = nn.Parameter(down)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xe = x.unsqueeze(0).expand(EXPERTS, -1, -1)
        return torch.bmm(torch.relu(torch.bmm(xe, self.w_up)), self.w_down).sum(0)


class SeparateExperts(nn.Module):
    """:class:`BatchedExperts` with each expert's weights as 2-D parameters of their own."""

    def __init__(self, seed: int = 7) -> None:
        super().__init__()
        up, down = _weights(seed)
        self.w_up = nn.ParameterList([nn.Parameter(w.clone()) for w in up])
        self.w_down = nn.ParameterList([nn.Parameter(w.clone()) for w in down])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.stack([x @ w for w in self.w_up])
        h = torch.relu(h)
        return torch.stack([h[i] @ w for i, w in enumerate(self.w_down)]).sum(0)


class Moe(nn.Module):
    """A Linear, then the experts: three matmuls, two of them batched over experts."""

    def __init__(self, experts: nn.Module) -> None:
        super().__init__()
        self.proj = nn.Linear(DIM, DIM)
        self.moe = experts

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.moe(self.proj(x))


def _moe(experts: nn.Module) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = Moe(experts)
    return model.eval(), (torch.randn(TOKENS, DIM),)


def batched() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return _moe(BatchedExperts())


def separate() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return _moe(SeparateExperts())


class ExpertGemm(nn.Module):
    """One bmm: per-expert activations ``[E, M, K]`` times the experts' ``[E, K, N]`` weights."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(_weights(11)[0])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.bmm(x, self.w)


class Wrapped(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.moe = ExpertGemm()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.moe(x)


def expert_gemm() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Each expert's input on its own scale (10^i): a per-expert amax is visible in the result."""
    g = torch.Generator().manual_seed(12)
    x = torch.randn(EXPERTS, TOKENS, DIM, generator=g)
    x = x * (10.0 ** torch.arange(EXPERTS, dtype=torch.float32)).view(-1, 1, 1)
    return Wrapped().eval(), (x,)
