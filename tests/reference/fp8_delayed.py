"""Reference for fp8-delayed's state update (TE DelayedScaling), step by step, from SEMANTICS.md."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLT_MAX = np.float32(np.finfo(np.float32).max)


@dataclass
class DelayedState:
    amax_history: np.ndarray  # [L] float32
    scale: np.float32

    @classmethod
    def initial(cls, length: int) -> DelayedState:
        return cls(np.zeros(length, np.float32), np.float32(1.0))


def rejected(
    history: np.ndarray, amax: float, skip_non_finite: bool = False, outlier_factor: float = 0.0
) -> bool:
    """Whether the options reject ``amax`` (docs/recipes.md): not finite under either option,
    or above F times M, the max of slots 1.. (when M is a normal f32), compared in f64."""
    amax32 = np.float32(amax)
    if not np.isfinite(amax32):
        return skip_non_finite or outlier_factor > 0
    past = np.float32(history[1:].max()) if len(history) > 1 else np.float32(0)
    if outlier_factor <= 0 or past < np.finfo(np.float32).tiny:
        return False
    return bool(np.float64(amax32) > np.float64(outlier_factor) * np.float64(past))


def step(
    state: DelayedState,
    amax: float,
    algo: str = "max",
    margin: int = 0,
    fp8_max: float = 448.0,
    skip_non_finite: bool = False,
    outlier_factor: float = 0.0,
) -> DelayedState:
    """One call: record amax in slot 0 (0 if rejected), compute the next scale, roll by -1, zero
    slot 0."""
    history = state.amax_history.copy()
    if rejected(history, amax, skip_non_finite, outlier_factor):
        amax = 0.0
    history[0] = np.float32(amax)
    chosen = np.float32(history.max() if algo == "max" else history[0])
    if chosen == 0 or not np.isfinite(chosen):
        scale = state.scale
    else:
        with np.errstate(over="ignore"):
            quotient = np.float32(np.float32(fp8_max) / chosen)
            scale = np.float32(quotient / np.float32(2.0**margin))
        if np.isinf(scale):
            scale = FLT_MAX
    rolled = np.roll(history, -1)
    rolled[0] = 0
    return DelayedState(rolled, np.float32(scale))
