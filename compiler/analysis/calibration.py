"""Calibration of static activation scales: each ``nn.Linear``'s input over a set of batches, run
in torch (``compiler.calibrate``), as the recipe's decode scale: ``range / 448`` for fp8-current
(compressed-tensors' and ModelOpt's FP8 ``input_scale``), ``range / (448 * 6)`` for nvfp4's
global scale (ModelOpt's NVFP4 ``input_scale``; compressed-tensors stores its inverse as
``input_global_scale``).

The range is chosen by ``method``:

- ``max``: the amax over every batch (what compressed-tensors' min-max observer and ModelOpt's
  max calibration store); nothing saturates on the calibration data.
- ``percentile``: the ``percentile``-th percentile of ``|x|`` (ModelOpt's histogram
  calibrator's rule): the largest values saturate, the rest gain resolution.
- ``mse`` (fp8-current): the range whose E4M3 cast (RNE, saturating) of the calibration data
  has the least squared error, searched over the histogram's bin edges from 1/8 of the amax up
  (ModelOpt's ``mse`` rule, on E4M3).

Histogram methods run the batches twice: once for each layer's amax, once to fill its
:data:`BINS` equal bins over ``[0, amax]``; NaN elements are left out everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import torch

from passes.base.errors import QmlirError

FP8_MAX = 448.0
# what a static scale divides the range by, per recipe that takes one
DIVISORS = {"fp8-current": np.float32(FP8_MAX), "nvfp4": np.float32(FP8_MAX * 6.0)}
METHODS = ("max", "percentile", "mse")
BINS = 2048


@dataclass(frozen=True)
class LayerCalibration:
    """One layer's calibration: its input's amax, the range chosen, the scale (``range /
    divisor``) and the share of its calibration elements past the range (they saturate)."""

    amax: float
    range: float
    scale: float
    clipped: float


def calibrate_linear_inputs(
    model: torch.nn.Module,
    batches: Any,
    recipe: str = "fp8-current",
    method: str = "max",
    percentile: float = 99.99,
) -> dict[str, float]:
    """The static activation scale of every ``nn.Linear``'s input over ``batches``, by module
    path (:func:`calibrate_layers`' scales)."""
    layers = calibrate_layers(model, batches, recipe, method, percentile)
    return {name: layer.scale for name, layer in layers.items()}


def calibrate_layers(
    model: torch.nn.Module,
    batches: Any,
    recipe: str = "fp8-current",
    method: str = "max",
    percentile: float = 99.99,
) -> dict[str, LayerCalibration]:
    """Every ``nn.Linear``'s calibration by module path: see the module's docstring."""
    divisor = DIVISORS.get(recipe)
    if divisor is None:
        raise QmlirError(
            f"recipe '{recipe}' takes no static activation scale; calibrate for "
            f"{' or '.join(DIVISORS)}"
        )
    if method not in METHODS:
        raise QmlirError(f"calibration method '{method}' is not one of {', '.join(METHODS)}")
    if method == "mse" and recipe != "fp8-current":
        raise QmlirError(
            "the mse method searches an E4M3 cast's range (fp8-current); nvfp4's global scale "
            "takes max or percentile"
        )
    if method == "percentile" and not 0 < percentile <= 100:
        raise QmlirError(f"percentile must be in (0, 100], not {percentile}")
    batches = list(batches)  # histogram methods read them twice
    amax: dict[str, float] = {}

    def record_amax(name: str, x: torch.Tensor) -> None:
        value = float(x.max()) if x.numel() else 0.0
        amax[name] = max(amax.get(name, 0.0), value)

    _run(model, batches, record_amax)
    for name, value in amax.items():
        if not np.isfinite(value):
            raise QmlirError(f"layer '{name}' saw an infinite input: no finite static scale")
    histograms: dict[str, torch.Tensor] = {}
    if method != "max":

        def record_histogram(name: str, x: torch.Tensor) -> None:
            top = amax[name]
            if top <= 0 or not x.numel():
                return
            counts = torch.histc(x.double(), bins=BINS, min=0.0, max=top)
            histograms[name] = histograms.get(name, torch.zeros(BINS, dtype=torch.float64)) + counts

        _run(model, batches, record_histogram)
    out = {}
    for name, value in amax.items():
        a = np.float32(value) if value > 0 else np.float32(1)  # all zeros: any scale will do
        counts = histograms.get(name)
        if counts is None:  # max, or an all-zero input
            out[name] = LayerCalibration(float(a), float(a), float(a / divisor), 0.0)
            continue
        hist = counts.numpy()
        chosen = _percentile(hist, a, percentile) if method == "percentile" else _mse(hist, a)
        chosen = np.float32(min(chosen, a))
        edges = np.arange(1, BINS + 1) * (float(a) / BINS)
        clipped = float(hist[edges > chosen * (1 + 1e-7)].sum() / max(hist.sum(), 1.0))
        out[name] = LayerCalibration(float(a), float(chosen), float(chosen / divisor), clipped)
    return out


def _run(
    model: torch.nn.Module, batches: list[Any], record: Callable[[str, torch.Tensor], None]
) -> None:
    """Runs ``model`` on each batch, giving ``record`` every linear's input ``|x|`` (f32, NaN
    as 0)."""

    def hook(name: str) -> Any:
        def pre(module: torch.nn.Module, args: tuple[Any, ...]) -> None:
            x = args[0].detach().float().abs()
            record(name, torch.nan_to_num(x, nan=0.0, posinf=float("inf")))

        return pre

    linears = [(n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    if not linears:
        raise QmlirError("the model has no nn.Linear to calibrate")
    handles = [m.register_forward_pre_hook(hook(n)) for n, m in linears]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for batch in batches:
                args = batch if isinstance(batch, (tuple, list)) else (batch,)
                model(*[torch.as_tensor(a) for a in args])
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    if not batches:
        raise QmlirError("calibrate() needs at least one batch")


def _percentile(hist: np.ndarray, amax: np.float32, percentile: float) -> float:
    """The upper edge of the first bin where the share of elements at or below reaches
    ``percentile`` %."""
    cdf = np.cumsum(hist) / max(hist.sum(), 1.0)
    index = int(np.searchsorted(cdf, percentile / 100.0 - 1e-12))
    return float(amax) * (min(index, BINS - 1) + 1) / BINS


def _mse(hist: np.ndarray, amax: np.float32) -> float:
    """The range among the bin edges from ``amax / 8`` up whose E4M3 cast of the bin centres,
    weighted by their counts, has the least squared error."""
    width = float(amax) / BINS
    centres = (np.arange(BINS) + 0.5) * width
    candidates = np.arange(BINS // 8, BINS + 1, 4) * width
    best, best_error = float(amax), np.inf
    for c in candidates:
        scale = np.float32(FP8_MAX) / np.float32(c)
        scaled = np.clip(centres.astype(np.float32) * scale, -FP8_MAX, FP8_MAX)
        back = scaled.astype(ml_dtypes.float8_e4m3fn).astype(np.float32) / scale
        error = float(np.dot(hist, (back - centres) ** 2))
        if error < best_error:
            best, best_error = float(c), error
    return best
