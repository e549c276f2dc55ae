"""Independent reference for NVFP4 (TE ``NVFP4BlockScaling``) from SEMANTICS.md (tests only).

Blocks of 16 along K, E2M1 data packed two per byte (low nibble = even element), one E4M3 decode
scale per block and one float32 per-tensor global scale. Mode ``"te"`` follows SEMANTICS.md, i.e.
TE's transformer_engine/pytorch/custom_recipes/reference_nvfp4.py
(``_quantize_blockwise_reference``, non-pow2, 1x16 tiles, no RHT), all in float32:

    global_amax = max|x| (NaN skipped)
    S     = min(448 * 6 / global_amax, FLT_MAX); S = 1 if S == 0      (global encode scale)
    S_dec = 1 / S                                                      (global decode scale)
    d     = cast_e4m3(clamp(min(block_amax * (S * fp32(1/6)), FLT_MAX), +-448))
    enc   = min(1 / (float(d) * S_dec), FLT_MAX)
    data  = encode_e2m1(clamp(x * enc, +-6))

``quantize`` returns **S_dec** (``global_decode_scale``) as its third output; dequantize is
``e2m1 * float(d) * S_dec`` (float32, in that order).

Choices where SEMANTICS.md is silent, following TE's CUDA kernels rather than the Python reference:
the block amax skips NaN (``fmaxf`` in cast/nvfp4/quantize_transpose_nvfp4.cuh and TE's C++ test
reference), like the global amax; TE's Python reference uses ``torch.amax``, which would give a
block holding a NaN the scale 0x7F and all-zero data. Here the block is scaled by its other
elements and the NaN element alone encodes as 0 (as ``cast_to_fp4x2`` maps NaN).

E2M1 encoding (``encode_e2m1``), TE's ``cast_to_fp4x2``: nearest of the magnitudes
0, .5, 1, 1.5, 2, 3, 4, 6, ties to the even code (0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2,
2.5 -> 2, 3.5 -> 4, 5 -> 4), |v| > 6 and inf saturate to 6, NaN -> code 0 (+0), exactly -0.0 ->
code 0 (+0), while a negative value that rounds to zero (-0.25 <= v < 0) -> code 8 (-0), exactly
as TE's interval table does. ``signed_zero=True`` keeps -0.0 as code 8 (torchao's encoder).

Mode ``"torchao"`` reproduces torchao 0.18.0 ``nvfp4_quantize(x, 16, per_tensor_scale)`` with
``per_tensor_scale = per_tensor_amax_to_scale(max|x|)`` (torchao's two-level NVFP4), in float32:

    g     = global_amax / 2688                                (returned as the global scale)
    d     = cast_e4m3(clamp((block_amax / 6) / g, 2^-6, 448))
    data  = encode_e2m1(clamp(x * ((1 / g) / float(d)), +-6), signed_zero=True)

It disagrees with TE (tested): the block scale is rounded from amax/6/g instead of
amax*(S*(1/6)); block scales are clamped below at 2^-6 (E4M3 ``finfo.tiny``), so zero or small
blocks get 0x08 where TE keeps 0x00 or an E4M3 subnormal; the element multiplier is
(1/g)/d rather than 1/(d*S_dec); -0.0 encodes as 8. Consequently many block scale bytes differ on
random data. The mode is defined for finite input with a non-zero amax (torchao itself produces
NaN scales otherwise) and raises ValueError elsewhere.
"""

from __future__ import annotations

import numpy as np

from tests.reference import fp8
from tests.reference.mxfp8 import cast_e4m3, nan_ignoring_amax, swizzle_rowwise

BLOCK = 16
E2M1_MAX = np.float32(6.0)
E4M3_MAX = np.float32(448.0)
FLT_MAX = np.float32(np.finfo(np.float32).max)
TORCHAO_E4M3_EPS = np.float32(2.0**-6)  # torch.finfo(torch.float8_e4m3fn).tiny

E2M1_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float64)


def encode_e2m1(v: np.ndarray, signed_zero: bool = False) -> np.ndarray:
    """E2M1 nibble codes (uint8 0..15) of float32 values: RNE ties to even, saturating.

    Sign bit 0x8; NaN -> 0; -0.0 -> 0 unless ``signed_zero`` (see module docstring).
    """
    with np.errstate(invalid="ignore"):
        v64 = np.asarray(v, dtype=np.float32).astype(np.float64)
    nan = np.isnan(v64)
    a = np.minimum(np.abs(np.where(nan, 0.0, v64)), 6.0)
    hi = np.searchsorted(E2M1_VALUES, a, side="left")
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = a - E2M1_VALUES[lo], E2M1_VALUES[hi] - a
    tie = np.where(lo % 2 == 0, lo, hi)
    code = np.where(d_hi == 0, hi, np.where(d_lo < d_hi, lo, np.where(d_hi < d_lo, hi, tie)))
    negative = np.signbit(v64) if signed_zero else (v64 < 0)
    code = code.astype(np.uint8) | np.where(negative, 0x8, 0).astype(np.uint8)
    code[nan] = 0
    return code


def decode_e2m1(codes: np.ndarray) -> np.ndarray:
    """float32 value of E2M1 nibble codes (code 8 decodes to -0.0)."""
    c = np.asarray(codes, dtype=np.uint8)
    mag = E2M1_VALUES[c & 0x7].astype(np.float32)
    return np.where(c & 0x8, -mag, mag).astype(np.float32)


def pack(codes: np.ndarray) -> np.ndarray:
    """Pack nibble codes [M, 2n] into bytes [M, n]: low nibble = even element."""
    c = np.asarray(codes, dtype=np.uint8)
    return (c[:, 0::2] | (c[:, 1::2] << 4)).astype(np.uint8)


def unpack(packed: np.ndarray) -> np.ndarray:
    """Inverse of ``pack``: bytes [M, n] -> nibble codes [M, 2n]."""
    p = np.asarray(packed, dtype=np.uint8)
    out = np.empty((p.shape[0], 2 * p.shape[1]), dtype=np.uint8)
    out[:, 0::2], out[:, 1::2] = p & 0xF, p >> 4
    return out


def global_encode_scale(global_amax: float) -> np.float32:
    """TE's ``compute_global_encode_scaling_factor_FP4``: S = min(2688 / amax, FLT_MAX), 0 -> 1."""
    a = np.float32(global_amax)
    with np.errstate(divide="ignore", over="ignore"):
        s = np.float32(np.float32(448.0 * 6.0) / a)
    s = np.minimum(s, FLT_MAX)
    return np.float32(1.0) if s == 0 else np.float32(s)


def _blocks(x: np.ndarray) -> tuple[np.ndarray, int]:
    """x [M, K] zero-padded to [M, nb*16], viewed as [M, nb, 16]; returns (blocks, K)."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {x.shape}")
    m, k = x.shape
    nb = -(-k // BLOCK)
    padded = np.zeros((m, nb * BLOCK), dtype=np.float32)
    padded[:, :k] = x
    return padded.reshape(m, nb, BLOCK), k


def _quantize_te(
    blocks: np.ndarray, s_dec: np.float32 | None = None
) -> tuple[np.ndarray, np.ndarray, np.float32]:
    if s_dec is None:
        s_enc = global_encode_scale(nan_ignoring_amax(blocks, axis=None))
        s_dec = np.float32(np.float32(1.0) / s_enc)
    else:  # a static global decode scale: S = 1 / S_dec
        s_enc = np.float32(np.float32(1.0) / s_dec)
    multiplier = np.float32(s_enc * np.float32(1.0 / 6.0))  # fp32(1/6): TE folds 1/6 into S
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        d = (nan_ignoring_amax(blocks, axis=-1) * multiplier).astype(np.float32)
        d = np.clip(np.minimum(d, FLT_MAX), -E4M3_MAX, E4M3_MAX)
        d_codes = cast_e4m3(d)
        enc = np.float32(1.0) / (fp8.decode_e4m3(d_codes) * s_dec).astype(np.float32)
        enc = np.minimum(enc.astype(np.float32), FLT_MAX)
        scaled = (blocks * enc[..., None]).astype(np.float32)
    data = encode_e2m1(np.clip(scaled, -E2M1_MAX, E2M1_MAX))
    return data, d_codes, s_dec


def _quantize_torchao(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.float32]:
    if not np.all(np.isfinite(blocks)):
        raise ValueError("torchao mode is defined for finite input only")
    amax = nan_ignoring_amax(blocks, axis=None)
    if amax == 0:
        raise ValueError("torchao mode needs a non-zero amax (torchao divides by it)")
    g = np.float32(amax / np.float32(448.0 * 6.0))  # per_tensor_amax_to_scale
    block_scale = (nan_ignoring_amax(blocks, axis=-1) / E2M1_MAX).astype(np.float32)
    scaled_scale = (block_scale / g).astype(np.float32)
    d_codes = cast_e4m3(np.clip(scaled_scale, TORCHAO_E4M3_EPS, E4M3_MAX))
    reciprocal = ((np.float32(1.0) / g) / fp8.decode_e4m3(d_codes)).astype(np.float32)
    scaled = (blocks * reciprocal[..., None]).astype(np.float32)
    data = encode_e2m1(np.clip(scaled, -E2M1_MAX, E2M1_MAX), signed_zero=True)
    return data, d_codes, g


def quantize(
    x: np.ndarray, mode: str = "te", static_decode: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.float32]:
    """NVFP4 quantize of x [M, K] (blocks of 16 along K, zero-padded).

    Returns (packed uint8 [M, ceil(K/16)*8], block scale E4M3 codes uint8 [M, ceil(K/16)],
    global decode scale float32: S_dec = 1/S for mode "te", amax/2688 for mode "torchao").
    ``static_decode``: a fixed S_dec (mode "te"), S = 1 / S_dec, instead of the amax's.
    """
    blocks, _ = _blocks(x)
    if static_decode is not None:
        assert mode == "te", mode
        data, d_codes, g = _quantize_te(blocks, np.float32(static_decode))
    elif mode == "te":
        data, d_codes, g = _quantize_te(blocks)
    elif mode == "torchao":
        data, d_codes, g = _quantize_torchao(blocks)
    else:
        raise ValueError(f"unknown NVFP4 mode {mode!r}; expected te or torchao")
    return pack(data.reshape(blocks.shape[0], -1)), d_codes, np.float32(g)


def dequantize(
    packed: np.ndarray, block_scales: np.ndarray, global_scale: float, k: int
) -> np.ndarray:
    """float32 [M, K]: ``(e2m1 * float(d)) * global_scale``, d broadcast over each block of 16."""
    values = decode_e2m1(unpack(packed))
    d = np.repeat(fp8.decode_e4m3(block_scales), BLOCK, axis=1)
    return ((values * d) * np.float32(global_scale)).astype(np.float32)[:, :k]


def swizzle(block_scales: np.ndarray) -> np.ndarray:
    """GEMM layout of the block scales [M, ceil(K/16)]: the MXFP8 128x4 tile swizzle."""
    return swizzle_rowwise(block_scales)
