"""The health of fp8-delayed's scaling state, from the state alone (numpy, no module needed).

``scaling_health(module.scaling_state())`` reports, per activation, what would silently break
calls: non-finite or negative entries in the amax history, a scale that is 0, negative, inf, NaN
or so small that a typical input quantizes to zeros, and an outlier (the history's max far above
the median of the recent amaxes: TE's delayed scaling keeps such a value for up to L calls).

History layout (docs/recipes.md): between calls slot 0 is 0 and the newest amax is in the last
slot, the one before it in the slot before, and so on; an entry in slot j is dropped by the j-th
next call.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

import numpy as np

from passes.base.errors import QmlirError

# x * scale at or below 2^-10 rounds to 0 in E4M3 (half the smallest subnormal, 2^-9: a tie, to
# even): a scale that brings the typical amax there quantizes the whole tensor to zeros.
E4M3_ROUNDS_TO_ZERO = 2.0**-10
F32_MIN_NORMAL = float(np.finfo(np.float32).tiny)  # 2^-126: smaller scales are flushed on CPU


class ScalingHealthWarning(RuntimeWarning):
    """A call of an fp8-delayed module left a scale that breaks the next calls (it quantizes a
    typical input to zeros, saturates everything, or is NaN): the first such verdict of
    :func:`scaling_health`, warned once per module until its state is reset or loaded."""


class ScaleStatus(enum.Enum):
    """What the stored scale does to the next call."""

    OK = "ok"
    ZERO = "zero"  # every value quantizes to 0
    NEGATIVE = "negative"  # not a scale (a corrupt or hand-made state)
    INF = "inf"  # every non-zero value saturates
    NAN = "nan"  # every output NaN
    TINY = "tiny"  # an f32 subnormal, or the typical input's amax quantizes to 0


@dataclasses.dataclass(frozen=True)
class ScalingHealth:
    """One activation's state, judged.

    ``recorded``: history entries that are finite and > 0 (calls with a non-zero amax within the
    last L); ``recent_median``: the median of those among the ``recent`` newest slots (None when
    there are none); ``outlier_ratio``: ``history_max / recent_median``; ``outlier``: that ratio
    above the threshold; ``calls_until_max_leaves``: how many more calls are quantized with a
    scale the history max is part of (``amax_compute_algo=max``), counting the next call.
    """

    key: str
    history_len: int
    recorded: int
    non_finite: int
    negative: int
    scale: float
    scale_status: ScaleStatus
    history_max: float
    recent_median: float | None
    outlier_ratio: float | None
    outlier: bool
    calls_until_max_leaves: int | None
    verdict: str

    @property
    def healthy(self) -> bool:
        return (
            self.non_finite == 0
            and self.negative == 0
            and self.scale_status is ScaleStatus.OK
            and not self.outlier
        )

    def __str__(self) -> str:
        return self.verdict


def scaling_health(
    state: Mapping[str, Mapping[str, Any]],
    *,
    recent: int = 16,
    outlier_ratio: float = 100.0,
) -> list[ScalingHealth]:
    """Each activation's health, in the state's order.

    ``state`` is :meth:`CompiledModule.scaling_state`'s ``{key: {"amax_history": f32[L],
    "scale": f32 0-d}}``. ``recent``: how many of the newest slots the median is taken over;
    ``outlier_ratio``: above this ``history_max / recent_median`` the max is an outlier.
    """
    if recent < 1:
        raise QmlirError(f"scaling_health: recent must be >= 1, not {recent}")
    if not outlier_ratio > 1.0:
        raise QmlirError(f"scaling_health: outlier_ratio must be > 1, not {outlier_ratio}")
    return [
        _judge(key, *_arrays(key, entry), recent, outlier_ratio) for key, entry in state.items()
    ]


def broken_scales(entries: list[ScalingHealth]) -> list[ScalingHealth]:
    """The entries whose scale breaks the next call (zero, tiny for their inputs, inf, NaN,
    negative): what :class:`ScalingHealthWarning` reports."""
    return [e for e in entries if e.scale_status is not ScaleStatus.OK]


def summary_lines(entries: list[ScalingHealth], limit: int = 4) -> list[str]:
    """Short text for a report: one line when all is well, else the first ``limit`` unhealthy
    verdicts and how many more there are."""
    bad = [e for e in entries if not e.healthy]
    if not bad:
        return [f"scaling state: {len(entries)} of {len(entries)} healthy"]
    lines = [f"scaling state: {len(bad)} of {len(entries)} unhealthy"]
    lines += [f"  {e.verdict}" for e in bad[:limit]]
    if len(bad) > limit:
        lines.append(f"  ... and {len(bad) - limit} more")
    return lines


def _arrays(key: str, entry: Mapping[str, Any]) -> tuple[np.ndarray, float]:
    try:
        history = np.asarray(entry["amax_history"], dtype=np.float32)
        scale = np.asarray(entry["scale"], dtype=np.float32)
    except (KeyError, TypeError, ValueError):
        raise QmlirError(
            f"scaling_health: state {key!r} needs 'amax_history' and 'scale' arrays"
        ) from None
    if history.ndim != 1 or history.size == 0 or scale.size != 1:
        raise QmlirError(
            f"scaling_health: state {key!r} has history shape {list(history.shape)} and scale "
            f"shape {list(scale.shape)}, expected [L] (L >= 1) and []"
        )
    return history, float(scale.reshape(()))


def _judge(
    key: str, history: np.ndarray, scale: float, recent: int, outlier_ratio: float
) -> ScalingHealth:
    finite = np.isfinite(history)
    non_finite = int((~finite).sum())
    negative = int((finite & (history < 0)).sum())
    valid = finite & (history > 0)
    recorded = int(valid.sum())
    history_max = float(history[valid].max()) if recorded else 0.0
    newest = history[-recent:]
    newest_valid = newest[np.isfinite(newest) & (newest > 0)]
    median = float(np.median(newest_valid.astype(np.float64))) if newest_valid.size else None
    ratio = history_max / median if median else None
    outlier = ratio is not None and ratio > outlier_ratio
    calls_left = None
    if recorded:
        slot = int(np.flatnonzero(valid & (history == np.float32(history_max)))[-1])
        calls_left = slot + 1
    status = _scale_status(scale, median)

    problems = []
    if scale_text := _scale_problem(status, scale, median):
        problems.append(scale_text)
    if non_finite:
        problems.append(
            f"{non_finite} non-finite amax in the history (the scale is frozen while it is there)"
        )
    if negative:
        problems.append(f"{negative} negative amax in the history (not a state a call writes)")
    if outlier:
        assert ratio is not None and median is not None and calls_left is not None
        problems.append(
            f"history max {history_max:.3g} is {ratio:.3g}x the recent median {median:.3g} "
            f"(an outlier; with amax_compute_algo=max it sets the scale for {calls_left} more "
            "calls)"
        )
    if problems:
        verdict = (
            f"{key}: UNHEALTHY: "
            + "; ".join(problems)
            + ": reset_scaling_state() or load a calibrated state"
        )
    elif not recorded:
        verdict = f"{key}: ok: no amax recorded yet, scale {scale:.6g}"
    else:
        verdict = (
            f"{key}: ok: scale {scale:.6g}, history max {history_max:.6g}, "
            f"{recorded} of {len(history)} slots recorded"
        )
    return ScalingHealth(
        key=key,
        history_len=len(history),
        recorded=recorded,
        non_finite=non_finite,
        negative=negative,
        scale=scale,
        scale_status=status,
        history_max=history_max,
        recent_median=median,
        outlier_ratio=ratio,
        outlier=outlier,
        calls_until_max_leaves=calls_left,
        verdict=verdict,
    )


def _scale_status(scale: float, median: float | None) -> ScaleStatus:
    if np.isnan(scale):
        return ScaleStatus.NAN
    if np.isinf(scale):
        return ScaleStatus.INF if scale > 0 else ScaleStatus.NEGATIVE
    if scale == 0:
        return ScaleStatus.ZERO
    if scale < 0:
        return ScaleStatus.NEGATIVE
    if scale < F32_MIN_NORMAL:
        return ScaleStatus.TINY
    if median is not None and median * scale <= E4M3_ROUNDS_TO_ZERO:
        return ScaleStatus.TINY
    return ScaleStatus.OK


def _scale_problem(status: ScaleStatus, scale: float, median: float | None) -> str | None:
    if status is ScaleStatus.OK:
        return None
    if status is ScaleStatus.TINY:
        if median is not None and median * scale <= E4M3_ROUNDS_TO_ZERO:
            return f"scale {scale:.3g} quantizes a typical input (amax {median:.3g}) to all zeros"
        return f"scale {scale:.3g} is an f32 subnormal (flushed to 0: inputs quantize to zeros)"
    return {
        ScaleStatus.ZERO: "scale 0 quantizes every input to zeros",
        ScaleStatus.NEGATIVE: f"scale {scale:.3g} is negative (not a state a call writes)",
        ScaleStatus.INF: "scale inf saturates every non-zero value",
        ScaleStatus.NAN: "scale NaN makes every output NaN",
    }[status]
