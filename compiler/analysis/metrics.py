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
    top1: float | None = None  # see top1_agreement; None for outputs of fewer than 2 dims

    def rows(self) -> list[tuple[str, str]]:
        rows = [
            ("max abs error", f"{self.max_abs_error:.4g}"),
            ("relative L2 error", f"{self.rel_l2_error:.4g}"),
            ("SQNR (dB)", f"{self.sqnr_db:.2f}"),
            ("cosine similarity", f"{self.cosine:.6f}"),
        ]
        if self.top1 is not None:
            rows.append(("top-1 agreement (last axis)", f"{self.top1:.4f}"))
        return rows


def top1_agreement(reference: np.ndarray, actual: np.ndarray) -> float:
    """The share of rows (every index but the last axis) whose argmax over the last axis is the
    same in both: for logits ``[batch, vocab]``, how often the predicted token is unchanged."""
    ref, out = np.asarray(reference), np.asarray(actual)
    if ref.shape != out.shape or ref.ndim < 1 or ref.size == 0:
        raise ValueError(f"top-1 agreement needs equal non-empty shapes: {ref.shape}, {out.shape}")
    return float(np.mean(np.argmax(ref, axis=-1) == np.argmax(out, axis=-1)))


def signal_and_noise(reference: np.ndarray, actual: np.ndarray) -> tuple[float, float]:
    """``(sum ref², sum (ref - out)²)`` in float64: SQNR's terms, which add up over batches."""
    ref = np.asarray(reference, dtype=np.float64).ravel()
    err = ref - np.asarray(actual, dtype=np.float64).ravel()
    return float(np.dot(ref, ref)), float(np.dot(err, err))


def sqnr_db(signal: float, noise: float) -> float:
    """``10 log10(signal / noise)``; inf without noise, -inf without signal."""
    if noise == 0:
        return math.inf
    return 10 * math.log10(signal / noise) if signal else -math.inf


def compare(reference: np.ndarray, actual: np.ndarray) -> Comparison:
    """Metrics in float64; SQNR = 10 log10(sum ref² / sum (ref - out)²); top-1 agreement for
    outputs of 2 or more dimensions."""
    ref = np.asarray(reference, dtype=np.float64)
    out = np.asarray(actual, dtype=np.float64)
    rows = ref.ndim >= 2 and ref.shape == out.shape and ref.size > 0
    top1 = top1_agreement(ref, out) if rows else None
    ref, out = ref.ravel(), out.ravel()
    err = ref - out
    signal, noise = float(np.dot(ref, ref)), float(np.dot(err, err))
    norms = float(np.linalg.norm(ref) * np.linalg.norm(out))
    cosine = float(np.dot(ref, out) / norms) if norms else (1.0 if noise == 0 else 0.0)
    return Comparison(
        max_abs_error=float(np.max(np.abs(err))) if err.size else 0.0,
        rel_l2_error=math.sqrt(noise / signal) if signal else math.sqrt(noise),
        sqnr_db=sqnr_db(signal, noise),
        cosine=cosine,
        top1=top1,
    )
