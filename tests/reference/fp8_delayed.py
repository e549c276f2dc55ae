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


def step(
    state: DelayedState, amax: float, algo: str = "max", margin: int = 0, fp8_max: float = 448.0
) -> DelayedState:
    """One call: record amax in slot 0, compute the next scale, roll by -1, zero slot 0."""
    history = state.amax_history.copy()
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
