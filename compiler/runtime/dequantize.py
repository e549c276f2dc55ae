"""Dequantize what a compiled quantize core wrote: element codes × their scales, in numpy.

The inverse direction of SEMANTICS.md's casts, for every recipe: FP8 codes decode through
ml_dtypes, E2M1 through its eight magnitudes, E8M0 scales are ``2^(e-127)`` (0xFF: NaN), NVFP4's
E4M3 block scales decode like FP8 and multiply the per-tensor ``S_dec``. Scales are the compact
grid (one per ``block`` of the quantized 2-D array); per-tensor recipes have one scale.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from passes.base.errors import QmlirError

_FP8 = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)


def decode_elements(codes: np.ndarray, fmt: str, columns: int | None = None) -> np.ndarray:
    """Element codes → float32. ``e2m1`` codes are packed two per byte (low nibble = even
    element) along the last axis; ``columns`` trims the padding of the unpacked axis."""
    if fmt in _FP8:
        return codes.view(_FP8[fmt]).astype(np.float32)
    if fmt != "e2m1":
        raise QmlirError(f"no decoder for element format '{fmt}'")
    nibbles = np.stack([codes & 0x0F, codes >> 4], axis=-1).reshape(*codes.shape[:-1], -1)
    values = _E2M1[nibbles & 0x7]
    values = np.where(nibbles & 0x8, -values, values).astype(np.float32)
    return values if columns is None else values[..., :columns]


def decode_e8m0(codes: np.ndarray) -> np.ndarray:
    """``2^(e - 127)`` as float32 (0x00: the subnormal 2^-127), 0xFF: NaN (no overflow warning)."""
    exponents = np.minimum(codes.astype(np.int32), 0xFE) - 127
    values = np.ldexp(np.float32(1.0), exponents).astype(np.float32)
    return np.where(codes == 0xFF, np.float32(np.nan), values)


def expand_blocks(scale: np.ndarray, block: tuple[int, int], shape: tuple[int, int]) -> np.ndarray:
    """A compact ``[ceil(R/br), ceil(C/bc)]`` scale grid broadcast over an ``[R, C]`` array."""
    rows, cols = shape
    out = np.repeat(np.repeat(scale, block[0], axis=0), block[1], axis=1)
    return out[:rows, :cols]


def dequantize_2d(
    codes: np.ndarray,
    scale: np.ndarray,
    fmt: str,
    scale_format: str,
    block: tuple[int, int] | None,
    shape: tuple[int, int],
    global_scale: np.ndarray | None = None,
) -> np.ndarray:
    """``[R, C]`` values from codes and a compact scale grid (``block`` None: one per tensor).

    ``scale_format``: ``fp32`` (a stored ``scale_inv``), ``e8m0`` or ``e4m3`` (block scale codes).
    """
    if shape[0] * shape[1] == 0:  # an empty tensor: no codes, maybe no scales
        return np.zeros(shape, np.float32)
    values = decode_elements(codes.reshape(shape[0], -1), fmt, shape[1])
    if scale_format == "fp32":
        factors = scale.astype(np.float32)
    elif scale_format == "e8m0":
        factors = decode_e8m0(scale)
    elif scale_format == "e4m3":
        factors = scale.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    else:
        raise QmlirError(f"no decoder for scale format '{scale_format}'")
    # a value times a large block scale may overflow to inf: that inf is the dequantized value
    # (an input of inf or beyond the format's range), not something to warn about
    with np.errstate(over="ignore"):
        if global_scale is not None:
            factors = factors * np.float32(global_scale.reshape(()))
        if block is None:
            return (values * factors.reshape(())).astype(np.float32)
        expanded = expand_blocks(factors.reshape(scale.shape), block, shape)
        return (values * expanded).astype(np.float32)
