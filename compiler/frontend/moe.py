"""Mixture-of-experts layers for export: every expert as its own dense, masked matmuls.

transformers' experts modules (``@use_experts_implementation``: Mixtral, Qwen2-MoE, Qwen3-MoE,
DeepSeek-V3, ...) hold each projection of all experts in one ``[experts, out, in]`` parameter
and run an expert over the tokens routed to it: a data-dependent loop (``nonzero``/``where``,
which ``torch.export`` cannot trace), ``histc`` (which IREE cannot compile) or a gather of the
weights by expert id (no operand is a weight, so nothing is quantized).

While a model is exported, :func:`dense_experts` replaces each such module's forward with one
that runs every expert over every token, its input rows masked to the tokens routed to it
(zeros elsewhere) and its output weighted by the token's routing weight (zero where not routed),
summed in expert order into the layer's dtype as transformers' ``index_add_`` does. Each
expert's projection reads ``weight[e]``, a constant slice that ``fold-weight-views`` turns into
a weight of its own, so the recipe quantizes every expert's GEMMs (its weights at compile time,
its activations as any layer's) and the report names them (``experts.expert<e>.gate_up_proj``,
``.down_proj``); the router beside them stays in high precision (:func:`moe_routers`).

Numerics: a routed token's expert output is the same function of its row as transformers'; an
unrouted row is zero before the expert (an activation of 0 and a projection without bias keep
it 0), so a per-tensor amax over an expert's input sees only the tokens routed to it, as the
eager loop's does. Cost: every expert computes every token (``experts / top_k`` times the FLOPs
of the routed tokens).
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import nn


def is_experts_module(module: nn.Module) -> bool:
    """A transformers experts module: ``@use_experts_implementation``'s attributes and a 3-D
    ``down_proj`` parameter of ``num_experts`` matrices."""
    down = getattr(module, "down_proj", None)
    return (
        hasattr(module, "has_gate")
        and hasattr(module, "is_transposed")
        and isinstance(getattr(module, "num_experts", None), int)
        and isinstance(down, nn.Parameter)
        and down.ndim == 3
        and down.shape[0] == module.num_experts
    )


def moe_routers(model: nn.Module) -> tuple[str, ...]:
    """The module paths of ``model``'s MoE routers: the ``gate`` (``router`` in PhiMoE) beside
    each experts module (``[experts, hidden]`` logits weight), kept in high precision by the
    recipe pass."""
    routers = []
    for name, module in model.named_modules():
        experts = getattr(module, "experts", None)
        if not (isinstance(experts, nn.Module) and is_experts_module(experts)):
            continue
        for attribute in ("gate", "router"):
            if isinstance(getattr(module, attribute, None), nn.Module):
                routers.append(f"{name}.{attribute}" if name else attribute)
                break
    return tuple(routers)


class _Projection(nn.Module):
    """One expert's projection (``gate_up_proj``, ``up_proj`` or ``down_proj``), called as a
    submodule ``expert<e>.<name>`` of the experts module so that the exported matmul carries that
    name (the report's layer). Holds no parameter: it reads the experts module's slice."""

    def __init__(self, experts: nn.Module, name: str, expert: int) -> None:
        super().__init__()
        object.__setattr__(self, "_experts", experts)  # not a submodule: no cycle in the tree
        self.projection, self.expert = name, expert

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        experts = self._experts
        weight = getattr(experts, self.projection)[self.expert]
        y = x @ weight if experts.is_transposed else F.linear(x, weight)
        if experts.has_bias:
            y = y + getattr(experts, f"{self.projection}_bias")[self.expert]
        return y


@contextlib.contextmanager
def dense_experts(model: nn.Module) -> Iterator[int]:
    """Within the block, every experts module of ``model`` runs :func:`_dense_forward` through
    per-expert submodules ``expert<e>``; yields how many experts modules there are."""
    patched = [m for m in model.modules() if is_experts_module(m)]
    for module in patched:
        first = "gate_up_proj" if module.has_gate else "up_proj"
        for e in range(module.num_experts):
            expert = nn.Module()
            for name in (first, "down_proj"):
                expert.add_module(name, _Projection(module, name, e))
            module.add_module(f"expert{e}", expert)
        module.forward = types.MethodType(_dense_forward, module)  # type: ignore[method-assign]
    try:
        yield len(patched)
    finally:
        for module in patched:
            del module.forward
            for e in range(module.num_experts):
                delattr(module, f"expert{e}")


def _dense_forward(
    self: nn.Module,
    hidden_states: torch.Tensor,
    top_k_index: torch.Tensor,
    top_k_weights: torch.Tensor,
) -> torch.Tensor:
    out = torch.zeros_like(hidden_states)
    for expert in range(self.num_experts):
        hit = top_k_index == expert  # [tokens, top_k]
        weight = (top_k_weights * hit).sum(dim=-1, keepdim=True)  # the routing weight, or 0
        x = hidden_states * hit.any(dim=-1, keepdim=True).to(hidden_states.dtype)
        projections = getattr(self, f"expert{expert}")
        if self.has_gate:
            h = self._apply_gate(projections.gate_up_proj(x))
        else:
            h = self.act_fn(projections.up_proj(x))
        y = projections.down_proj(h)
        if self.has_post_expert_norm:
            y = self.post_expert_norm(y)
        out = out + (y * weight).to(out.dtype)
    return out
