"""Mixture-of-experts layers for export: every expert's projections as matmuls of their own,
run over the tokens routed to that expert (a grouped GEMM).

transformers' experts modules (``@use_experts_implementation``: Mixtral, Qwen2-MoE, Qwen3-MoE,
DeepSeek-V3, ...) hold each projection of all experts in one ``[experts, out, in]`` parameter
and run an expert over the tokens routed to it: a data-dependent loop (``nonzero``/``where``,
which ``torch.export`` cannot trace), ``histc`` (which IREE cannot compile) or a gather of the
weights by expert id (no operand is a weight, so nothing is quantized).

While a model is exported, :func:`experts_as_layers` replaces each such module's forward with
one of two formulations, both calling expert ``e``'s projections as submodules
``expert<e>.gate_up_proj`` (or ``up_proj``) and ``expert<e>.down_proj`` that read ``weight[e]``,
a constant slice that ``fold-weight-views`` turns into a weight of its own, so the recipe
quantizes every expert's GEMMs (its weights at compile time, its activations as any layer's)
and the report names them; the router beside them stays in high precision (:func:`moe_routers`):

- **routed** (:func:`_routed_forward`; the default on llvm-cpu, ``--experts``): the
  (token, slot) pairs are ordered by expert, stably (a one-hot count and prefix sum, then one
  scatter: no sort), each expert's count read back as a size (``counts.tolist()``: an
  unbacked size to ``torch.export``, a dynamic dimension to IREE), and expert ``e`` runs over
  exactly its rows, gathered in token order; its outputs, times their routing weights, are
  added into the result in expert order (``index_put`` with ``accumulate``; the pass
  ``unshare-scatter-inits`` keeps two layers' zeros apart for IREE), as transformers'
  ``index_add_`` loop does. GEMM work is the routed tokens' only.
- **padded** (:func:`_padded_forward`; cuda's routed form): routed, with one spare zero row
  in every expert's rows, so that no tensor has zero rows.
- **dense** (:func:`_dense_forward`; the reference, ``--experts dense``): every expert over
  every token, its input rows masked to the tokens routed to it (zeros elsewhere), its output
  weighted by the routing weight (zero where not routed), summed in expert order.
  ``experts / top_k`` times the routed GEMM work.

Numerics, the same in both and per recipe: expert ``e``'s activation quantization sees exactly
its routed rows (a per-tensor or global amax over them: the dense form's zero rows add nothing
to an amax; block scales are per row), its weight is quantized by itself, a routed token's
output row is the same function of its input row, and each token's sum runs in expert order
from zero (the dense form adds exact zeros for unrouted experts). Compiled, the two agree to
f32 accumulation order (the GEMMs' M differs, and with it IREE's tiling:
``tests/e2e/test_moe.py``). An expert no token is routed to runs over zero rows.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import nn

# how an experts module exports: each expert over its routed tokens, the same with one spare
# zero row an expert (no zero-row tensor: cuda), or every expert over every token, masked
FORMS = ("routed", "padded", "dense")


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
def experts_as_layers(model: nn.Module, form: str = "routed") -> Iterator[int]:
    """Within the block, every experts module of ``model`` runs the forward of ``form``
    (:data:`FORMS`) through per-expert submodules ``expert<e>``; yields how many experts
    modules there are."""
    patched = [m for m in model.modules() if is_experts_module(m)]
    for module in patched:
        first = "gate_up_proj" if module.has_gate else "up_proj"
        for e in range(module.num_experts):
            expert = nn.Module()
            for name in (first, "down_proj"):
                expert.add_module(name, _Projection(module, name, e))
            module.add_module(f"expert{e}", expert)
        forward = {"routed": _routed_forward, "padded": _padded_forward, "dense": _dense_forward}[
            form
        ]
        module.forward = types.MethodType(forward, module)  # type: ignore[method-assign]
    try:
        yield len(patched)
    finally:
        for module in patched:
            del module.forward
            for e in range(module.num_experts):
                delattr(module, f"expert{e}")


def _expert(self: nn.Module, expert: int, x: torch.Tensor) -> torch.Tensor:
    """Expert ``expert``'s output for the rows ``x``, through its ``expert<e>`` submodules."""
    projections = getattr(self, f"expert{expert}")
    if self.has_gate:
        h = self._apply_gate(projections.gate_up_proj(x))
    else:
        h = self.act_fn(projections.up_proj(x))
    y = projections.down_proj(h)
    if self.has_post_expert_norm:
        y = self.post_expert_norm(y)
    return y


def _routing(
    self: nn.Module, top_k_index: torch.Tensor, top_k_weights: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """The (token, slot) pairs ordered by expert, stably: each pair's token and routing weight
    in that order, and how many pairs each expert has (read back as sizes)."""
    top_k = top_k_index.shape[1]
    pairs = top_k_index.reshape(-1)  # pair p = token p // top_k, slot p % top_k
    hits = F.one_hot(pairs, self.num_experts)  # [pairs, experts]
    counts = hits.sum(dim=0)
    rank = (hits.cumsum(dim=0) * hits).sum(dim=-1) - 1  # among the pairs of its expert
    place = (counts.cumsum(dim=0) - counts)[pairs] + rank  # its position, ordered by expert
    # ordered[place[p]] = p: the scatter writes every entry, so any init of its size will do
    ordered = place.index_put((place,), torch.arange(pairs.shape[0], device=pairs.device))
    sizes = counts.tolist()
    start = 0
    for count in sizes:
        torch._check(count >= 0)
        torch._check(start + count <= pairs.shape[0])
        start = start + count
    return ordered // top_k, top_k_weights.reshape(-1)[ordered], sizes


def _routed_forward(
    self: nn.Module,
    hidden_states: torch.Tensor,
    top_k_index: torch.Tensor,
    top_k_weights: torch.Tensor,
) -> torch.Tensor:
    token_of, weight_of, sizes = _routing(self, top_k_index, top_k_weights)
    out = torch.zeros_like(hidden_states)
    start = 0
    for expert, count in enumerate(sizes):
        rows = token_of.narrow(0, start, count)
        y = _expert(self, expert, hidden_states.index_select(0, rows))
        y = y * weight_of.narrow(0, start, count).unsqueeze(-1)
        # added in expert order: each token's sum runs as transformers' ``index_add_`` loop's
        out = out.index_put((rows,), y.to(out.dtype), accumulate=True)
        start = start + count
    return out


def _padded_forward(
    self: nn.Module,
    hidden_states: torch.Tensor,
    top_k_index: torch.Tensor,
    top_k_weights: torch.Tensor,
) -> torch.Tensor:
    """:func:`_routed_forward` with one spare zero row in every expert's rows (past the
    tokens, its output added into a spare row of the result that is cut off): no tensor has
    zero rows, which cuda may refuse. The spare row changes no scale (a zero adds nothing to an
    amax; block scales are per row); each expert then costs at least one row's GEMM (its
    weights read even when no token reaches it)."""
    tokens = hidden_states.shape[0]
    token_of, weight_of, sizes = _routing(self, top_k_index, top_k_weights)
    pairs = token_of.shape[0]
    spare_token = torch.cat([token_of, token_of.new_zeros(1) + tokens])  # [pairs + 1]
    spare_weight = torch.cat([weight_of, weight_of.new_zeros(1)])
    x = torch.cat([hidden_states, torch.zeros_like(hidden_states.narrow(0, 0, 1))])
    out = torch.zeros_like(x)
    start = 0
    for expert, count in enumerate(sizes):
        j = torch.arange(count + 1, device=token_of.device)
        pick = torch.where(j < count, j + start, pairs)  # its pairs, then the spare one
        rows = spare_token.index_select(0, pick)
        y = _expert(self, expert, x.index_select(0, rows))
        y = y * spare_weight.index_select(0, pick).unsqueeze(-1)
        out = out.index_put((rows,), y.to(out.dtype), accumulate=True)
        start = start + count
    return out.narrow(0, 0, tokens)


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
        y = _expert(self, expert, x)
        out = out + (y * weight).to(out.dtype)
    return out
