"""fp8-delayed: the state across calls against a step-by-step reference, and its API."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import compiler
from compiler.metrics import compare
from samples import mlp, transformer_block
from tests.e2e.models import tiny
from tests.reference import fp8
from tests.reference.fp8_delayed import DelayedState, step

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`


def _inputs(x: np.ndarray) -> list[np.ndarray]:
    """A sequence exercising the rules: growth, a zero tensor, an inf, then small values."""
    inf = x.copy()
    inf[0, 0] = np.inf
    return [x, 4 * x, np.zeros_like(x), inf, 0.5 * x, x, 0.25 * x]


@pytest.mark.parametrize(("algo", "margin", "length"), [("max", 0, 3), ("most_recent", 2, 4)])
def test_state_matches_reference_step_by_step(algo: str, margin: int, length: int) -> None:
    model, (x0,) = tiny.single()
    art = compiler.compile(
        model,
        (x0,),
        "fp8-delayed",
        amax_history_len=length,
        amax_compute_algo=algo,
        margin=margin,
    )
    (key,) = art.scaling_state()
    assert key == "matmul"  # a bare nn.Linear has no module path
    ref = DelayedState.initial(length)
    w = model.weight.detach().numpy()
    wq, ws = fp8.quantize_per_tensor(w)
    for x in _inputs(x0.numpy()):
        out = art(x)
        # This call quantized with the scale from before it.
        if np.isfinite(x).all():
            xq = fp8.encode_e4m3((x * ref.scale).astype(np.float32))
            expected = (
                fp8.decode_e4m3(xq).astype(np.float64) @ fp8.decode_e4m3(wq).astype(np.float64).T
            ) * (np.float64(np.float32(1) / ref.scale) * np.float64(ws))
            expected += model.bias.detach().numpy()
            assert compare(expected, out).rel_l2_error <= 1e-5
        ref = step(ref, fp8.amax(x), algo=algo, margin=margin)
        state = art.scaling_state()[key]
        np.testing.assert_array_equal(state["amax_history"], ref.amax_history)
        assert state["scale"].tobytes() == ref.scale.tobytes()


def test_state_survives_save_and_restore() -> None:
    model, (x,) = tiny.build()
    art = compiler.compile(model, (x,), "fp8-delayed", amax_history_len=8)
    assert set(art.scaling_state()) == {"fc1", "fc2"}
    for _ in range(3):
        art(x)
    saved = art.scaling_state()
    after_three = art(x)
    art.reset_scaling_state()
    fresh = art.scaling_state()
    assert all((s["scale"] == 1).all() and not s["amax_history"].any() for s in fresh.values())
    art.load_scaling_state(saved)
    np.testing.assert_array_equal(art(x), after_three)
    with pytest.raises(compiler.QmlirError, match="misses fc2"):
        art.load_scaling_state({"fc1": saved["fc1"]})
    with pytest.raises(compiler.QmlirError, match="has shape"):
        art.load_scaling_state({**saved, "fc1": {**saved["fc1"], "amax_history": np.zeros(3)}})


def test_current_scaling_modules_have_no_state() -> None:
    model, inputs = tiny.build()
    art = compiler.compile(model, inputs, "fp8-current")
    assert art.scaling_state() == {}
    art.reset_scaling_state()  # nothing to do, no error


@pytest.mark.parametrize("build", [mlp.build, transformer_block.build])
def test_sqnr_after_warm_up(build) -> None:  # type: ignore[no-untyped-def]
    model, inputs = build()
    art = compiler.compile(model, inputs, "fp8-delayed", amax_history_len=16)
    for _ in range(2):
        art(*inputs)
    with torch.no_grad():
        ref = model(*inputs).numpy()
    assert compare(ref, art(*inputs).numpy()).sqnr_db >= 30.0
