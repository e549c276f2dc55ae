"""One quantized operand's error: its SQNR after quantize → dequantize by the recipe's compiled
core, the share of values that underflowed to zero or were clipped, and where the scales put
each block's range."""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import torch

from compiler.analysis.metrics import signal_and_noise, sqnr_db
from compiler.pipeline.quantize import QuantizedTensor, quantize, quantize_steady_state
from compiler.runtime.dequantize import decode_elements
from passes.recipes import Role, ScalingRecipe

_MAX_CODE = {"e4m3": 448.0, "e5m2": 57344.0, "e2m1": 6.0}
# Half the step below the largest value, relative to it: a value up to this far past the largest
# value rounds to it even in a format with more range, so it is rounded, not clipped.
_HALF_STEP_AT_MAX = {"e4m3": 16.0 / 448.0, "e5m2": 4096.0 / 57344.0, "e2m1": 1.0 / 6.0}


@dataclass
class OperandStats:
    """One quantized operand: SQNR of its dequantized values, the share of its nonzero finite
    elements that became 0 (underflow) and that were clipped to the format's largest value
    (saturated), and the base-2 exponents of its scales (one per block). It keeps the sums and
    counts these come from, so the operand's figures over several calibration batches are
    those of all their elements together (``merged``)."""

    role: str
    signal: float  # sum of the squared values (float64)
    noise: float  # sum of the squared quantize → dequantize errors
    nonzero: int  # nonzero elements: the shares' denominator
    underflowed: int
    clipped: int
    scale_exponents: np.ndarray

    @property
    def sqnr_db(self) -> float:
        return sqnr_db(self.signal, self.noise)

    @property
    def underflow(self) -> float:
        return self.underflowed / self.nonzero if self.nonzero else 0.0

    @property
    def saturated(self) -> float:
        return self.clipped / self.nonzero if self.nonzero else 0.0

    def merged(self, other: OperandStats) -> OperandStats:
        """The figures over this operand's elements and ``other``'s (another batch's)."""
        return OperandStats(
            role=self.role,
            signal=self.signal + other.signal,
            noise=self.noise + other.noise,
            nonzero=self.nonzero + other.nonzero,
            underflowed=self.underflowed + other.underflowed,
            clipped=self.clipped + other.clipped,
            scale_exponents=np.concatenate([self.scale_exponents, other.scale_exponents]),
        )


def quantize_operand(
    x: torch.Tensor, recipe: ScalingRecipe, role: Role
) -> tuple[torch.Tensor, OperandStats]:
    """Quantize → dequantize ``x`` (contraction along its last axis) as ``recipe`` does, with
    its compiled core. An operand with scaling state (fp8-delayed's activations) is taken in the
    steady state on these inputs: the amax history holds this input's amax."""
    values = x.detach().float().contiguous().numpy()
    if recipe.has_scaling_state(role):
        q = quantize_steady_state(values, recipe)
    else:
        q = quantize(values, recipe, role=role.value)
    deq = q.dequantize().reshape(values.shape)
    codes_max = _at_max_code(q).reshape(values.shape)
    finite = np.isfinite(values)
    signal, noise = signal_and_noise(values, deq)
    stats = OperandStats(
        role=role.value,
        signal=signal,
        noise=noise,
        nonzero=int(np.count_nonzero(values)),
        underflowed=int(np.count_nonzero((values != 0) & finite & (deq == 0))),
        clipped=int(np.count_nonzero(codes_max & finite & _clipped(values, deq, q.element_format))),
        scale_exponents=_scale_exponents(q),
    )
    return torch.from_numpy(deq), stats


def _clipped(values: np.ndarray, deq: np.ndarray, fmt: str) -> np.ndarray:
    """At the max code, ``|x|`` beyond it by more than half a step: clipped, not rounded."""
    limit = np.abs(deq).astype(np.float64) * (1.0 + _HALF_STEP_AT_MAX[fmt])
    return np.abs(values).astype(np.float64) > limit


def _at_max_code(q: QuantizedTensor) -> np.ndarray:
    """Elements whose code is ± the format's largest finite value, ``[rows, K]``."""
    rows, columns = q.quantized_shape
    values = decode_elements(q.data.reshape(rows, -1), q.element_format, columns)
    return np.abs(values) == _MAX_CODE[q.element_format]


def _scale_exponents(q: QuantizedTensor) -> np.ndarray:
    """log2 of each (decode) scale, rounded down: where the recipe put each block's range."""
    if q.scale_format == "e8m0":
        codes = q.scale.astype(np.int32).ravel()
        return (codes[codes != 0xFF] - 127).astype(np.int32)
    if q.scale_format == "e4m3":
        scales = q.scale.view(ml_dtypes.float8_e4m3fn).astype(np.float64).ravel()
        if q.global_scale is not None:
            scales = scales * float(q.global_scale.reshape(()))
    else:
        scales = q.scale.astype(np.float64).ravel()
    scales = scales[np.isfinite(scales) & (scales > 0)]
    return np.floor(np.log2(scales)).astype(np.int32)
