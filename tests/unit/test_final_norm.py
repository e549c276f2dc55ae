"""``final_norm_on_last_position``: while next-token logits are traced, a causal LM's final norm
takes the last position only (``compiler/frontend/final_norm.py``): the same logits, the norm
over ``[batch, 1, hidden]`` in the traced graph, and the caller's model left without the hook."""

from __future__ import annotations

import pytest
import torch

from compiler.frontend.checkpoint import NextTokenLogits
from compiler.frontend.final_norm import final_norm, final_norm_on_last_position
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
