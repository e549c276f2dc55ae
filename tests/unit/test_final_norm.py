"""``final_norm_on_last_position``: while next-token logits are traced, a causal LM's final norm
takes the last position only (``compiler/frontend/final_norm.py``): the same logits, the norm
over ``[batch, 1, hidden]`` in the traced graph, and the caller's model left without the hook.
With ``mlp`` (a generator whose recipe quantizes each activation row alone) the last decoder
layer's MLP takes the last position only too: the same logits, the same cache."""

from __future__ import annotations

import pytest
import torch

from compiler.frontend.cached_decoder import KEYS, VALUES, CachedDecoder
from compiler.frontend.checkpoint import NextTokenLogits
from compiler.frontend.final_norm import final_norm, final_norm_on_last_position, last_mlp
from passes.recipes import get_recipe
from tests.e2e import checkpoints


@pytest.mark.parametrize("arch", ["llama", "gpt_neox"])
def test_the_last_position_alone_gives_the_same_logits(arch: str) -> None:
    lm = checkpoints.decoder(arch)
    norm = final_norm(lm)
    assert norm is not None
    ids = torch.randint(0, 200, (2, 7), generator=torch.Generator().manual_seed(0))
    seen: list[tuple[int, ...]] = []
    probe = norm.register_forward_hook(lambda _m, _a, out: seen.append(tuple(out.shape)))
    with torch.no_grad():
        want = lm(input_ids=ids, use_cache=False).logits[:, -1, :]
        got = NextTokenLogits(lm)(ids)
    probe.remove()
    assert seen[0][1] == 7 and seen[1][1] == 1  # every position, then the last alone
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert not norm._forward_pre_hooks  # the caller's model as it was


def test_a_model_without_a_known_final_norm_runs_as_it_is() -> None:
    model = torch.nn.Linear(4, 4)
    assert final_norm(model) is None
    with final_norm_on_last_position(model):
        assert model(torch.ones(2, 4)).shape == (2, 4)


def test_the_traced_norm_takes_one_position() -> None:
    lm = checkpoints.llama()
    ids = torch.randint(0, 200, (1, 9), generator=torch.Generator().manual_seed(1))
    program = torch.export.export(NextTokenLogits(lm), (ids,))
    shapes = [
        tuple(n.meta["val"].shape)
        for n in program.graph.nodes
        if n.op == "call_function" and "rsqrt" in str(n.target)
    ]
    assert shapes[-1][:2] == (1, 1), shapes  # the final norm's, after every layer's own


@pytest.mark.parametrize("arch", checkpoints.DECODERS)
def test_the_last_layers_mlp_takes_the_last_position_alone(arch: str) -> None:
    """Two generators' decoders over one model, the last layer's MLP over every position and
    over the last alone: its output ``[batch, 1, hidden]``, the same logits (its GEMMs of fewer
    rows sum in another order: 1e-6), the same keys and values in the cache (computed before
    it), and the model left without the hooks."""
    lm = checkpoints.decoder(arch)
    mlp = last_mlp(lm)
    assert mlp is not None
    ids = torch.randint(0, 200, (2, 9), generator=torch.Generator().manual_seed(2))
    start = torch.zeros(1, dtype=torch.int64)
    seen: list[int] = []
    probe = mlp.register_forward_hook(lambda _m, _a, out: seen.append(out.shape[1]))
    decoders = [CachedDecoder(lm, 2, 16, "model", rows).eval() for rows in (False, True)]
    with torch.no_grad():
        every, last = (decoder(ids, start) for decoder in decoders)
    probe.remove()
    assert seen == [9, 1]
    torch.testing.assert_close(last, every, rtol=1e-6, atol=1e-6)
    for name in (KEYS.format(1), VALUES.format(1)):
        torch.testing.assert_close(getattr(decoders[1], name), getattr(decoders[0], name))
    assert not mlp._forward_pre_hooks


@pytest.mark.parametrize("arch", ["llama", "gpt_neox"])
def test_next_token_logits_with_the_last_mlp_over_the_last_position(arch: str) -> None:
    """A folder's next-token logits (``NextTokenLogits``) under a recipe whose rows are
    quantized apart: the last MLP over one position, the same logits."""
    lm = checkpoints.decoder(arch)
    mlp = last_mlp(lm)
    assert mlp is not None
    ids = torch.randint(0, 200, (2, 7), generator=torch.Generator().manual_seed(4))
    seen: list[int] = []
    probe = mlp.register_forward_hook(lambda _m, _a, out: seen.append(out.shape[1]))
    with torch.no_grad():
        every, last = NextTokenLogits(lm)(ids), NextTokenLogits(lm, last_mlp=True)(ids)
    probe.remove()
    assert seen == [7, 1]
    torch.testing.assert_close(last, every, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("arch", checkpoints.MOE)
def test_a_mixture_of_experts_keeps_every_row(arch: str) -> None:
    assert last_mlp(checkpoints.moe(arch)) is None


@pytest.mark.parametrize(
    ("name", "options", "apart"),
    [
        ("none", {}, True),
        ("fp8-block", {}, True),  # 1 x 128 blocks
        ("fp8-block", {"x_block_scaling_dim": 2, "w_block_scaling_dim": 1}, False),
        ("mxfp8", {}, True),
        ("mxfp4", {}, True),
        ("fp8-rowwise", {}, True),
        ("fp8-current", {}, False),  # a per-tensor scale
        ("fp8-delayed", {}, False),  # an amax history
        ("nvfp4", {}, False),  # a global scale
    ],
)
def test_which_recipes_quantize_each_row_alone(
    name: str, options: dict[str, int], apart: bool
) -> None:
    assert get_recipe(name, options).rows_apart() is apart
