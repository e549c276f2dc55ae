"""How close a low-precision output is to the f32 reference."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Comparison:
    max_abs_error: float
    rel_l2_error: float
    sqnr_db: float
    cosine: float

    def rows(self) -> list[tuple[str, str]]:
        return [
            ("max abs error", f"{self.max_abs_error:.4g}"),
            ("relative L2 error", f"{self.rel_l2_error:.4g}"),
            ("SQNR (dB)", f"{self.sqnr_db:.2f}"),
            ("cosine similarity", f"{self.cosine:.6f}"),
        ]


def compare(reference: np.ndarray, actual: np.ndarray) -> Comparison:
    """Metrics in float64; SQNR = 10 log10(sum ref² / sum (ref - out)²)."""
    ref = np.asarray(reference, dtype=np.float64).ravel()
    out = np.asarray(actual, dtype=np.float64).ravel()
    err = ref - out
    signal, noise = float(np.dot(ref, ref)), float(np.dot(err, err))
    sqnr = math.inf if noise == 0 else (10 * math.log10(signal / noise) if signal else -math.inf)
    norms = float(np.linalg.norm(ref) * np.linalg.norm(out))
    cosine = float(np.dot(ref, out) / norms) if norms else (1.0 if noise == 0 else 0.0)
    return Comparison(
        max_abs_error=float(np.max(np.abs(err))) if err.size else 0.0,
        rel_l2_error=math.sqrt(noise / signal) if signal else math.sqrt(noise),
        sqnr_db=sqnr,
        cosine=cosine,
    )
