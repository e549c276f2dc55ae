"""Independent reference for cuDNN block_scale_quantize / block_scale_dequantize (tests only).

From spec/block_scale_quantize_cudnn.txt, per block of ``block_size`` elements along ``axis``:

    scale  = quantize_round_up(amax(vals) / vmax_otype)      (rounded *up* into scale_format)
    output = quantize_round_to_even(vals / scale)            (saturating, into out_format)

with vmax_otype = 448 (E4M3) or 6 (E2M1). Deliberately computed another way than the TE-style
references (true division by the decoded scale, an frexp-based power-of-two ceiling, a search for
the E4M3 ceiling); the tests check where the two must agree (e.g. E4M3/E8M0 equals MXFP8).

Choices where the cuDNN page is silent (documented here, tested):

- ``amax`` skips NaN elements (TE's ``fmaxf`` convention); an all-NaN block has amax 0.
- ``amax / vmax`` is one float32 division, then rounded up into the scale format.
- E8M0 round-up: the smallest 2^k >= v, k clamped to [-127, 127]: v <= 2^-127 (including 0)
  -> 0x00 (2^-127), v = inf -> 0xFE (saturate; no power of two is >= inf). It equals TE's
  ``float_to_e8m0`` on non-negative input (tested).
- E4M3 round-up: the smallest E4M3 value >= v, saturating at 448 (0x7E): v = 0 -> 0x00 (a zero
  scale), v > 448 or inf -> 0x7E.
- ``vals / scale`` is a float32 division by the decoded scale. A zero scale (E4M3 only, i.e. a
  block whose amax is 0) divides by 1 instead, so zeros stay zeros (and NaN stays NaN).
- Output casts: E4M3 saturating RNE (NaN -> 0x7F, +-inf -> +-448); E2M1 as in
  ``nvfp4.encode_e2m1`` (RNE, saturate to +-6, NaN -> 0, -0.0 -> 0), one nibble per element,
  unpacked.
- Dequantize: ``decode(y) * decode(scale)`` in float32, the scale broadcast over its block.
"""

from __future__ import annotations

import numpy as np

from tests.reference import fp8, mxfp8, nvfp4

VMAX = {"e4m3": np.float32(448.0), "e2m1": np.float32(6.0)}
_E4M3_POSITIVE = np.array([fp8.e4m3_value(c) for c in range(0x7F)], dtype=np.float64)


def round_up_e8m0(v: np.ndarray) -> np.ndarray:
    """Smallest power of two >= v (float32, v >= 0) as an E8M0 byte, within [2^-127, 2^127]."""
    f = np.asarray(v, dtype=np.float32).astype(np.float64)
    nan, inf = np.isnan(f), np.isinf(f)
    safe = np.where(nan | inf, 1.0, f)
    mant, exp = np.frexp(safe)  # safe = mant * 2^exp, mant in [0.5, 1) (0 for 0)
    k = np.where(mant == 0.5, exp - 1, exp)
    k = np.where(safe == 0, -127, k)
    out = (np.clip(k, -127, 127) + 127).astype(np.uint8)
    out[inf] = 0xFE
    out[nan] = 0xFF
    return out


def round_up_e4m3(v: np.ndarray) -> np.ndarray:
    """Smallest non-negative E4M3 value >= v as a code, saturating at 448 (0x7E); NaN -> 0x7F."""
    f = np.asarray(v, dtype=np.float32).astype(np.float64)
    nan = np.isnan(f)
    idx = np.searchsorted(_E4M3_POSITIVE, np.where(nan, 0.0, f), side="left")
    out = np.minimum(idx, 0x7E).astype(np.uint8)
    out[nan] = fp8.NAN_CODE
    return out


def _decode_scale(codes: np.ndarray, scale_format: str) -> np.ndarray:
    if scale_format == "e8m0":
        return mxfp8.decode_e8m0(codes)
    if scale_format == "e4m3":
        return fp8.decode_e4m3(codes)
    raise ValueError(f"unknown scale format {scale_format!r}; expected e8m0 or e4m3")


def _encode(v: np.ndarray, out_format: str) -> np.ndarray:
    if out_format == "e4m3":
        return mxfp8.cast_e4m3(v)
    if out_format == "e2m1":
        return nvfp4.encode_e2m1(v)
    raise ValueError(f"unknown output format {out_format!r}; expected e4m3 or e2m1")


def _decode(codes: np.ndarray, out_format: str) -> np.ndarray:
    if out_format == "e4m3":
        return fp8.decode_e4m3(codes)
    if out_format == "e2m1":
        return nvfp4.decode_e2m1(codes)
    raise ValueError(f"unknown output format {out_format!r}; expected e4m3 or e2m1")


def _rowwise(
    x: np.ndarray, block_size: int, out_format: str, scale_format: str
) -> tuple[np.ndarray, np.ndarray]:
    m, k = x.shape
    nb = -(-k // block_size)
    padded = np.zeros((m, nb * block_size), dtype=np.float32)
    padded[:, :k] = x
    blocks = padded.reshape(m, nb, block_size)
    v = (mxfp8.nan_ignoring_amax(blocks, axis=-1) / VMAX[out_format]).astype(np.float32)
    if scale_format == "e8m0":
        scale_codes = round_up_e8m0(v)
    elif scale_format == "e4m3":
        scale_codes = round_up_e4m3(v)
    else:
        raise ValueError(f"unknown scale format {scale_format!r}; expected e8m0 or e4m3")
    scale = _decode_scale(scale_codes, scale_format)
    divisor = np.where(scale == 0, np.float32(1.0), scale).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        y = _encode((blocks / divisor[..., None]).astype(np.float32), out_format)
    return y.reshape(m, -1)[:, :k], scale_codes


def block_scale_quantize(
    x: np.ndarray, block_size: int, axis: int, out_format: str, scale_format: str
) -> tuple[np.ndarray, np.ndarray]:
    """cuDNN block_scale_quantize of a 2-D x: (y codes uint8 like x, scale codes uint8).

    axis 1 (or -1): blocks along the last dim, scales [M, ceil(K/bs)]; axis 0: blocks down
    dim 0, scales [ceil(M/bs), K]. E2M1 outputs are unpacked nibbles, one per element.
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {x.shape}")
    if axis in (1, -1):
        return _rowwise(x, block_size, out_format, scale_format)
    if axis in (0, -2):
        y_t, s_t = _rowwise(np.ascontiguousarray(x.T), block_size, out_format, scale_format)
        return np.ascontiguousarray(y_t.T), np.ascontiguousarray(s_t.T)
    raise ValueError(f"axis must be 0 or 1, got {axis}")


def block_scale_dequantize(
    y: np.ndarray,
    scale: np.ndarray,
    block_size: int,
    axis: int,
    out_format: str,
    scale_format: str,
) -> np.ndarray:
    """cuDNN block_scale_dequantize: float32 ``decode(y) * decode(scale)`` broadcast per block."""
    y = np.asarray(y, dtype=np.uint8)
    m, k = y.shape
    rep_axis = 1 if axis in (1, -1) else 0
    s = np.repeat(_decode_scale(scale, scale_format), block_size, axis=rep_axis)[:m, :k]
    with np.errstate(over="ignore"):  # an inf product is the answer for huge scales
        return (_decode(y, out_format) * s).astype(np.float32)
