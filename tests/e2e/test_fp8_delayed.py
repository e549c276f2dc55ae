"""fp8-delayed: the state across calls against a step-by-step reference, and its API."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import torch
from torch import nn

import compiler
from compiler.analysis.metrics import compare
from compiler.runtime.scaling_health import ScaleStatus, ScalingHealthWarning, scaling_health
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


def test_concurrent_calls_lose_no_history_update() -> None:
    """4 threads x 200 calls on one module: every call's amax lands in the history once."""
    model, (x0,) = tiny.single()
    art = compiler.compile(model, (x0,), "fp8-delayed")  # history of 1024: room for all 800
    x = x0.numpy()
    threads, calls = 4, 200
    # distinct powers-of-two multiples keep every amax exact and different
    factors = [np.float32(2.0 ** (k % 16)) * np.float32(1 + k // 16 / 64) for k in range(800)]

    def work(t: int) -> None:
        for c in range(calls):
            art(x * factors[t * calls + c])

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    history = art.scaling_state()["matmul"]["amax_history"]
    expected = sorted(fp8.amax(x * f) for f in factors)
    np.testing.assert_array_equal(np.sort(history[history > 0]), np.array(expected, np.float32))
    assert int((history == 0).sum()) == history.size - threads * calls


def _assert_state(art: compiler.CompiledModule, ref: DelayedState) -> None:
    (state,) = art.scaling_state().values()
    np.testing.assert_array_equal(state["amax_history"], ref.amax_history)
    assert state["scale"].tobytes() == ref.scale.tobytes()


def test_one_outlier_poisons_te_default_and_the_options_reject_it() -> None:
    """TE (default): one call with a 1e30 element sets scale 448/1e30, and each of the next L
    calls quantizes a normal input to zeros. With the options the outlier (and an inf) is recorded
    as 0: the scale stays, the next calls return what they returned before it; a lasting jump is
    accepted once the older amaxes have left the history (the L-th call)."""
    torch.manual_seed(1)
    model = nn.Linear(64, 32, bias=False).eval()
    example = torch.randn(8, 64)
    x = example.numpy()
    outlier = x.copy()
    outlier[3, 5] = 1e30
    length = 8

    te = compiler.compile(model, (example,), "fp8-delayed", amax_history_len=length)
    ref = DelayedState.initial(length)
    for inp in (x, x):
        normal = te(inp)
        ref = step(ref, fp8.amax(inp))
    # the call that leaves the poisoned scale is warned, with the state's verdict, once
    with pytest.warns(ScalingHealthWarning, match=r"UNHEALTHY: scale .* quantizes a typical"):
        te(outlier)
    ref = step(ref, fp8.amax(outlier))
    _assert_state(te, ref)
    assert ref.scale == np.float32(448) / np.float32(1e30)
    (health,) = scaling_health(te.scaling_state())
    assert health.outlier and health.scale_status is ScaleStatus.TINY
    assert health.calls_until_max_leaves == length
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        for _ in range(length):  # poisoned until the outlier has left the history
            assert not te(x).any()
            ref = step(ref, fp8.amax(x))
    assert not [w for w in again if issubclass(w.category, ScalingHealthWarning)]
    _assert_state(te, ref)
    assert scaling_health(te.scaling_state())[0].healthy
    np.testing.assert_array_equal(te(x), normal)

    options = {"skip_non_finite_amax": True, "amax_outlier_factor": 100.0}
    safe = compiler.compile(model, (example,), "fp8-delayed", amax_history_len=length, **options)
    ref = DelayedState.initial(length)
    rules = {"skip_non_finite": True, "outlier_factor": 100.0}
    inf = x.copy()
    inf[0, 0] = np.inf
    warnings.simplefilter("error", ScalingHealthWarning)  # rejected: no broken scale to warn of
    for call, inp in enumerate((x, x, outlier, x, inf, x)):
        before = ref
        out = safe(inp)
        ref = step(ref, fp8.amax(inp), **rules)
        _assert_state(safe, ref)
        if inp is x:  # the first call has scale 1, each later one the steady scale
            if call:
                np.testing.assert_array_equal(out, normal)
        else:  # rejected: recorded as 0, the scale unchanged
            assert ref.amax_history[-1] == 0 and ref.scale == before.scale
    jump = 1000 * x  # lasting: rejected L - 1 times, then the past amaxes are gone
    for call in range(1, length + 1):
        safe(jump)
        ref = step(ref, fp8.amax(jump), **rules)
        _assert_state(safe, ref)
        assert (ref.amax_history[-1] != 0) == (call == length)
    # The bound itself: an amax of exactly F x M is accepted, the next f32 above it rejected.
    safe.reset_scaling_state()
    ref = DelayedState.initial(length)
    unit = x / np.abs(x).max()  # amax exactly 1
    above = np.nextafter(np.float32(100), np.float32(np.inf))
    for inp, kept in ((unit, True), (above * unit, False), (100 * unit, True)):
        safe(inp)
        ref = step(ref, fp8.amax(inp), **rules)
        _assert_state(safe, ref)
        assert (ref.amax_history[-1] != 0) == kept


def test_a_scale_broken_later_is_warned_at_the_next_scheduled_check() -> None:
    """After its first calls a state is checked on calls 8, 16, 32, 64, then every 64th: an
    outlier on call 6 poisons the scale, and the warning comes with call 8, not before."""
    from compiler.runtime.module import _checks_scales

    checked = [c for c in range(1, 200) if _checks_scales(c)]
    assert checked == [1, 2, 3, 4, 8, 16, 32, 64, 128, 192]
    torch.manual_seed(2)
    model = nn.Linear(32, 16, bias=False).eval()
    example = torch.randn(4, 32)
    x = example.numpy()
    outlier = x.copy()
    outlier[1, 2] = 1e30
    art = compiler.compile(model, (example,), "fp8-delayed", amax_history_len=16)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for call, inp in enumerate((x, x, x, x, x, outlier, x), start=1):
            art(inp)
            assert not [w for w in seen if issubclass(w.category, ScalingHealthWarning)], call
    with pytest.warns(ScalingHealthWarning, match=r"UNHEALTHY: scale .* quantizes a typical"):
        art(x)  # call 8
    art.reset_scaling_state()  # a new state: checked on its first calls again
    art(x)
    art(x)
    with pytest.warns(ScalingHealthWarning):
        art(outlier)  # call 3 of the new state
