"""The optimizers a compiled training step applies, as functional torch code the capture traces
into the step's graph (``training_capture.py``): each takes the parameters, their gradients and
its state, and returns the new parameters and state, computing what ``torch.optim`` computes.

- ``sgd``: ``torch.optim.SGD`` (``momentum``, ``weight_decay``; no dampening, no Nesterov).
  Its momentum buffers start at zero, so the first step's buffer is the gradient, as torch's.
- ``adamw``: ``torch.optim.AdamW`` (``betas``, ``eps``, ``weight_decay``; no amsgrad). torch
  computes the bias corrections ``1 - beta^t`` in Python doubles; the step computes them in f32
  from its step counter (a state entry), so they agree to about 1e-7.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from passes.base.errors import QmlirError

OPTIMIZERS = ("sgd", "adamw")


@dataclass(frozen=True)
class OptimizerOptions:
    name: str = "sgd"
    lr: float = 1e-3
    weight_decay: float = 0.0
    momentum: float = 0.0  # sgd
    betas: tuple[float, float] = (0.9, 0.999)  # adamw
    eps: float = 1e-8  # adamw

    def __post_init__(self) -> None:
        if self.name not in OPTIMIZERS:
            raise QmlirError(f"unknown optimizer '{self.name}' (known: {', '.join(OPTIMIZERS)})")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise QmlirError(f"the learning rate must be a finite number > 0, not {self.lr:g}")
        if not (math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise QmlirError(
                f"weight decay must be a finite number >= 0, not {self.weight_decay:g}"
            )
        if not 0 <= self.momentum < 1:
            raise QmlirError(f"momentum must be in [0, 1), not {self.momentum:g}")
        if not all(0 <= b < 1 for b in self.betas) or len(self.betas) != 2:
            raise QmlirError(f"betas must be two numbers in [0, 1), not {self.betas}")
        if not (math.isfinite(self.eps) and self.eps > 0):
            raise QmlirError(f"eps must be a finite number > 0, not {self.eps:g}")

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name, "lr": self.lr}
        out["weight_decay"] = self.weight_decay
        if self.name == "sgd":
            out["momentum"] = self.momentum
        else:
            out["betas"] = list(self.betas)
            out["eps"] = self.eps
        return out


def state_entries(options: OptimizerOptions, names: Sequence[str]) -> list[tuple[str, int | None]]:
    """The optimizer's state, in order: (name, index of the parameter it has the shape of, or
    None for a scalar)."""
    if options.name == "sgd":
        if not options.momentum:
            return []
        return [(f"sgd.momentum_buffer.{n}", i) for i, n in enumerate(names)]
    return [
        ("adamw.step", None),
        *((f"adamw.exp_avg.{n}", i) for i, n in enumerate(names)),
        *((f"adamw.exp_avg_sq.{n}", i) for i, n in enumerate(names)),
    ]


def apply_update(
    options: OptimizerOptions,
    params: Sequence[torch.Tensor],
    grads: Sequence[torch.Tensor],
    state: Sequence[torch.Tensor],
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """(new parameters, new state) after one step."""
    if options.name == "sgd":
        return _sgd(options, params, grads, state)
    return _adamw(options, params, grads, state)


def _sgd(
    options: OptimizerOptions,
    params: Sequence[torch.Tensor],
    grads: Sequence[torch.Tensor],
    state: Sequence[torch.Tensor],
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    new_params, new_state = [], []
    for i, (p, g) in enumerate(zip(params, grads, strict=True)):
        if options.weight_decay:
            g = g + options.weight_decay * p
        if options.momentum:
            g = options.momentum * state[i] + g
            new_state.append(g)
        new_params.append(p - options.lr * g)
    return new_params, new_state


def _adamw(
    options: OptimizerOptions,
    params: Sequence[torch.Tensor],
    grads: Sequence[torch.Tensor],
    state: Sequence[torch.Tensor],
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    n = len(params)
    beta1, beta2 = options.betas
    step = state[0] + 1
    exp_avgs, exp_avg_sqs = state[1 : 1 + n], state[1 + n :]
    correction1 = 1 - torch.pow(torch.full_like(step, beta1), step)
    correction2_sqrt = torch.sqrt(1 - torch.pow(torch.full_like(step, beta2), step))
    step_size = options.lr / correction1
    new_params, new_avgs, new_sqs = [], [], []
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs, strict=True):
        p = p * (1 - options.lr * options.weight_decay)
        m = torch.lerp(m, g, 1 - beta1)
        v = v * beta2 + (1 - beta2) * (g * g)
        denom = torch.sqrt(v) / correction2_sqrt + options.eps
        new_params.append(p - step_size * (m / denom))
        new_avgs.append(m)
        new_sqs.append(v)
    return new_params, [step, *new_avgs, *new_sqs]
