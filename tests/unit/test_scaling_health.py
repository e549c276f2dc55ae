"""compiler.runtime.scaling_health: fp8-delayed states judged from their arrays alone."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.runtime.scaling_health import (
    ScaleStatus,
    ScalingHealth,
    scaling_health,
    summary_lines,
)
from passes.base.errors import QmlirError
from tests.reference.fp8_delayed import DelayedState, step


def _state(history: list[float], scale: float, length: int = 8) -> dict[str, np.ndarray]:
    """A history whose newest entries are ``history`` (oldest first), slot 0 left 0."""
    h = np.zeros(length, np.float32)
    if history:
        h[length - len(history) :] = history
    return {"amax_history": h, "scale": np.array(scale, np.float32)}


def _one(entry: dict[str, np.ndarray], **kwargs: float) -> ScalingHealth:
    (health,) = scaling_health({"fc1": entry}, **kwargs)  # type: ignore[arg-type]
    return health


def test_initial_state_is_healthy() -> None:
    h = _one(_state([], 1.0))
    assert h.healthy and h.recorded == 0 and h.history_max == 0.0
    assert h.recent_median is None and h.outlier_ratio is None and h.calls_until_max_leaves is None
    assert h.scale_status is ScaleStatus.OK
    assert h.verdict == "fc1: ok: no amax recorded yet, scale 1"
    assert str(h) == h.verdict


def test_steady_state_is_healthy() -> None:
    h = _one(_state([4.0, 3.5, 4.5], 448 / 4.5))
    assert h.healthy and h.recorded == 3 and h.history_max == 4.5
    assert h.recent_median == 4.0 and h.outlier_ratio == pytest.approx(4.5 / 4.0)
    assert h.calls_until_max_leaves == 8  # newest slot (7): the next 8 calls still use it
    assert h.verdict.startswith("fc1: ok: scale 99.5556, history max 4.5, 3 of 8 slots")


def test_outlier_from_the_real_update_is_flagged() -> None:
    """The state TE's update leaves after normal calls then one 1e30: a tiny scale, an outlier."""
    ref = DelayedState.initial(8)
    for amax in (4.0, 4.0, 1e30, 4.0):
        ref = step(ref, amax)
    h = _one({"amax_history": ref.amax_history, "scale": np.asarray(ref.scale)})
    assert not h.healthy and h.outlier
    assert h.scale_status is ScaleStatus.TINY
    assert h.history_max == np.float32(1e30) and h.recent_median == 4.0
    assert h.outlier_ratio == pytest.approx(2.5e29)
    assert h.calls_until_max_leaves == 7  # the outlier is in slot 6 now
    assert h.verdict.startswith("fc1: UNHEALTHY: scale 4.48e-28 quantizes a typical input")
    assert "is 2.5e+29x the recent median 4" in h.verdict
    assert h.verdict.endswith("reset_scaling_state() or load a calibrated state")
    # ...and each of those calls moves it one slot down, until it is gone
    for _ in range(7):
        ref = step(ref, 4.0)
    assert _one({"amax_history": ref.amax_history, "scale": np.asarray(ref.scale)}).healthy


def test_outlier_threshold_and_recent_window() -> None:
    entry = _state([1.0, 50.0, 1.0, 1.0], 448 / 50)
    assert _one(entry).healthy  # ratio 50 < 100
    assert _one(entry, outlier_ratio=10.0).outlier
    # median over the newest 2 slots only: [1, 1] (the 50 is older)
    assert _one(entry, recent=2, outlier_ratio=10.0).recent_median == 1.0


@pytest.mark.parametrize(
    ("scale", "status", "text"),
    [
        (0.0, ScaleStatus.ZERO, "scale 0 quantizes every input to zeros"),
        (-2.0, ScaleStatus.NEGATIVE, "scale -2 is negative"),
        (np.inf, ScaleStatus.INF, "scale inf saturates"),
        (np.nan, ScaleStatus.NAN, "scale NaN makes every output NaN"),
        (2.0**-12, ScaleStatus.TINY, "quantizes a typical input (amax 4) to all zeros"),
    ],
)
def test_bad_scales(scale: float, status: ScaleStatus, text: str) -> None:
    h = _one(_state([4.0, 4.0], scale))
    assert h.scale_status is status and not h.healthy
    assert text in h.verdict


def test_tiny_bound_is_where_e4m3_rounds_to_zero() -> None:
    # amax 4 * 2^-12 = 2^-10: a tie between 0 and E4M3's smallest subnormal, to even: 0
    assert _one(_state([4.0], 2.0**-12)).scale_status is ScaleStatus.TINY
    assert _one(_state([4.0], 2.0**-11)).scale_status is ScaleStatus.OK
    # with nothing recorded, only an f32 subnormal scale is known to be too small
    h = _one(_state([], 1e-40))
    assert h.scale_status is ScaleStatus.TINY and "is an f32 subnormal" in h.verdict
    assert _one(_state([], 2.0**-126)).healthy


def test_non_finite_and_negative_entries() -> None:
    h = _one(_state([4.0, np.inf, np.nan, -1.0, 4.0], 112.0))
    assert (h.non_finite, h.negative, h.recorded, h.history_max) == (2, 1, 2, 4.0)
    assert not h.healthy
    assert "2 non-finite amax in the history (the scale is frozen" in h.verdict
    assert "1 negative amax" in h.verdict


def test_several_keys_keep_their_order_and_summary() -> None:
    state = {"b": _state([4.0], 112.0), "a": _state([4.0, 4.0, 1e30], 448 / 1e30)}
    entries = scaling_health(state)
    assert [e.key for e in entries] == ["b", "a"]
    assert summary_lines(entries[:1]) == ["scaling state: 1 of 1 healthy"]
    lines = summary_lines(entries)
    assert lines[0] == "scaling state: 1 of 2 unhealthy"
    assert lines[1].startswith("  a: UNHEALTHY")
    many = scaling_health({str(i): state["a"] for i in range(6)})
    assert summary_lines(many, limit=2)[-1] == "  ... and 4 more"


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"fc1": {"scale": np.float32(1)}}, "needs 'amax_history' and 'scale'"),
        ({"fc1": {"amax_history": np.zeros((2, 2)), "scale": 1.0}}, "history shape \\[2, 2\\]"),
        ({"fc1": {"amax_history": np.zeros(0), "scale": 1.0}}, "expected \\[L\\] \\(L >= 1\\)"),
        ({"fc1": {"amax_history": np.zeros(4), "scale": np.ones(2)}}, "scale shape \\[2\\]"),
    ],
)
def test_malformed_state_is_one_line_error(state: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(QmlirError, match=message):
        scaling_health(state)


def test_bad_parameters() -> None:
    with pytest.raises(QmlirError, match="recent must be >= 1"):
        scaling_health({}, recent=0)
    with pytest.raises(QmlirError, match="outlier_ratio must be > 1"):
        scaling_health({}, outlier_ratio=1.0)
    assert scaling_health({}) == []
