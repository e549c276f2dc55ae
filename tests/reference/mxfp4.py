"""Independent reference for MXFP4 (OCP MX, recipe ``mxfp4``), from the rules below (tests only).

Blocks of 32 along the last dimension (1x32 rowwise only; a partial last block is zero-padded),
E2M1 data packed two per byte, one E8M0 scale byte per block. There is no Transformer Engine
MXFP4 recipe; the rules below are qmlir's, each named after the peer it matches.

Block amax: max |x| over the block's 32 elements with NaN **propagating** (unlike
tests/reference/mxfp8.py, which skips NaN as TE does): a block holding any NaN has amax NaN and
scale 0xFF (E8M0 NaN), whatever the rounding.

Scale rules (``rounding``), element max 6 (E2M1), emax_elem = floor(log2 6) = 2:

- ``"ceil"`` (default; cuBLAS/TE-style, torchao RCEIL): ``v = amax * fp32(1/6)`` rounded once to
  float32 (the exact product, computed in float64, rounded to float32 with subnormals kept), then
  mxfp8's ``float_to_e8m0``: the smallest power of two >= v, saturated to [2^-127, 2^127];
  inf -> 0xFE, 0 -> 0x00, NaN -> 0xFF.
- ``"floor"`` (OCP MX spec, torchao FLOOR): ``e = max(E - 2, 0)`` where E is amax's biased
  float32 exponent field (0 for zero and subnormals); inf (E = 255) -> 253, NaN -> 0xFF. FLT_MAX
  gives 252.
- ``"rne"``: mxfp8's rne rule (PyTorch's ``.to(torch.float8_e8m0fnu)``: round the float32
  mantissa at its top bit, 1.5 * 2^k ties up, a subnormal rounds up to 0x01 only above 2^-127,
  exponent overflow, inf and NaN -> 0xFF) of ``fp32(amax / 6)`` (float32 division).
- ``"even"`` (compressed-tensors ``generate_mx_scales``, vLLM's tests/quantization/
  reference_mxfp4.py, torchao EVEN): ``r = (bits(amax) + (1 << 21)) & 0x7F800000``, i.e. amax
  rounded half-up to one mantissa bit; ``e = max(exponent(r) - 2, 0)``. So 1.75 * 2^k rounds up
  to 2^(k+1) and 1.75 * 2^127 <= amax <= FLT_MAX and inf give exponent(r) = 255 -> 253; amax
  below 1.75 * 2^-125 (zero and subnormals included) -> 0; NaN -> 0xFF.

Data (all rules): each element x of a block with scale e becomes ``encode_e2m1(y)`` with ``y``
computed in float32: ``y = x * 2^(127-e)`` for 1 <= e <= 253; ``y = x`` (multiplier 1) for e == 0;
``y = (x * 0.5) * 2^-126`` for e == 254 (= x * 2^-127 rounded once for normal x); for e == 255
every code of the block is 0 (the scale alone marks the block NaN).

E2M1 (``encode_e2m1``, tests/reference/nvfp4.py's encoder, TE's ``cast_to_fp4x2``): magnitudes
0, 0.5, 1, 1.5, 2, 3, 4, 6 are codes 0..7, sign bit 0x8. Round to nearest, ties to the even code
(0.25 -> 0, 0.75 -> 1.0, 1.25 -> 1.0, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4); |y| > 6 (inf
included) saturates to 6 with y's sign; a negative y that rounds to zero keeps its sign (code
0x8), but y == -0.0 exactly encodes as +0 (code 0); NaN y -> code 0.

Packing: byte j of a row = ``code[2j] | (code[2j+1] << 4)`` (low nibble = even element); the
padding of a partial last block encodes 0. ``quantize`` returns (packed uint8
[M, ceil(K/32) * 16], scales uint8 [M, ceil(K/32)]).

Dequantize: ``e2m1_value(code) * 2^(e-127)`` in float32 (e = 0 -> 2^-127, a float32 subnormal;
e = 255 -> NaN for the whole block).

Known disagreements with peers (each pinned by a test in tests/unit/test_reference_mxfp4.py).
torchao 0.18.0 ``to_mx(x, torch.float4_e2m1fn_x2, 32, scaling_mode=...)`` returns
(scales float8_e8m0fnu [M, K/32], packed data plain uint8 [M, K/2], low nibble = even element);
FLOOR, EVEN and RCEIL agree with floor, even and ceil here on finite data except:

- torchao encodes a y that is exactly -0.0 as code 0x8 (its encoder keeps the float32 sign bit):
  an input -0.0, or a negative x that underflows to -0.0 when scaled (x = -1e-30 in a block
  with an inf); here those are code 0x0.
- torchao FLOOR / EVEN divide by max(2^(e-127), 2^-126) rather than multiplying by 1 when e == 0
  (amax < 2^-124 for floor, < 1.75 * 2^-125 for even), so such blocks keep non-zero data there
  (amax 2^-125: torchao 2 = code 0x4, here 0x0).
- NaN blocks: the scale is 0xFF in both, but torchao's data is not zero. RCEIL multiplies by NaN,
  and its encoder (no NaN case) gives a NaN code 0x3, so every byte is 0x33; FLOOR / EVEN divide
  by the float32 bits 0xFF << 23 = inf, so finite elements become +-0 (0x0 / 0x8) and NaN 0x3.
- torchao RCEIL computes ``ceil(log2(amax / 6))`` in float32 (eager CPU), which loses the last
  ulp above a power of two: for amax = nextafter(6 * 2^k) upwards with k <= -5 or k >= 4 it
  gives a scale one lower (amax = nextafter(96): torchao 131 and code 0x7, here 132 and 0x5).
  Its ``amax / 6`` (division) instead of ``amax * fp32(1/6)`` makes no difference to the scale.
- compressed-tensors 0.20.0 ``generate_mx_scales(amax, num_bits=4)`` returns the unclamped
  float ``127 + floor(log2(r)) - 2``: -inf where r == 0 (amax < 0.75 * 2^-126), -1 where
  r == 2^-126 (amax < 1.75 * 2^-126), inf where r overflows (amax >= 1.75 * 2^127, inf) and for
  NaN; here 0, 0, 253 and 0xFF. Its finite values in [0, 253] agree with "even".
"""

from __future__ import annotations

import numpy as np

from tests.reference.mxfp8 import (
    E8M0_NAN,
    _rne_e8m0,
    _rowwise_blocks,
    decode_e8m0,
    float_to_e8m0,
)
from tests.reference.nvfp4 import decode_e2m1, encode_e2m1, pack
from tests.reference.nvfp4 import unpack as _unpack_all

BLOCK = 32
E2M1_MAX = np.float32(6.0)
RCP_E2M1_MAX = np.float32(1.0 / 6.0)  # fp32(1/6) = 0.16666667163...
EMAX_ELEM = 2  # floor(log2 6)


def nan_propagating_amax(blocks: np.ndarray, axis: int = -1) -> np.ndarray:
    """max |x| along ``axis`` as float32; any NaN in a block makes its amax NaN."""
    with np.errstate(invalid="ignore"):
        return np.abs(np.asarray(blocks, dtype=np.float32)).max(axis=axis).astype(np.float32)


def _exponent_field(a: np.ndarray) -> np.ndarray:
    """Biased float32 exponent field (0..255) of |a| as int64."""
    bits = np.abs(np.asarray(a, dtype=np.float32)).view(np.uint32)
    return ((bits >> 23) & 0xFF).astype(np.int64)


def _floor_e8m0(amax: np.ndarray) -> np.ndarray:
    a = np.abs(np.asarray(amax, dtype=np.float32))
    out = np.maximum(_exponent_field(a) - EMAX_ELEM, 0).astype(np.uint8)
    out[np.isnan(a)] = E8M0_NAN
    return out


def _even_e8m0(amax: np.ndarray) -> np.ndarray:
    a = np.abs(np.asarray(amax, dtype=np.float32))
    bits = a.view(np.uint32).astype(np.int64)
    r = (bits + (1 << 21)) & 0x7F800000
    out = np.maximum((r >> 23) - EMAX_ELEM, 0).astype(np.uint8)
    out[np.isnan(a)] = E8M0_NAN
    return out


def e8m0_from_amax(amax: np.ndarray, rounding: str = "ceil") -> np.ndarray:
    """Biased E8M0 scale byte(s) of block amax values under ``rounding`` (see module docstring)."""
    a = np.abs(np.asarray(amax, dtype=np.float32))
    with np.errstate(over="ignore", invalid="ignore"):
        if rounding == "ceil":
            # exact in float64 (24 x 24 bits), then one rounding to float32 (subnormals kept)
            v = (a.astype(np.float64) * np.float64(RCP_E2M1_MAX)).astype(np.float32)
            return float_to_e8m0(v)
        if rounding == "floor":
            return _floor_e8m0(a)
        if rounding == "rne":
            return _rne_e8m0((a / E2M1_MAX).astype(np.float32))
        if rounding == "even":
            return _even_e8m0(a)
    raise ValueError(f"unknown E8M0 rounding {rounding!r}; expected ceil, floor, rne or even")


def scale_data(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """float32 ``y`` of elements x under their block scale byte e (broadcast); NaN where e == 255.

    1 <= e <= 253: x * 2^(127-e); e == 0: x; e == 254: (x * 0.5) * 2^-126 (two float32 products).
    """
    x = np.asarray(x, dtype=np.float32)
    e = np.broadcast_to(np.asarray(e, dtype=np.uint8), x.shape)
    m = np.ldexp(np.float32(1.0), (127 - e.astype(np.int32)).clip(-126, 126)).astype(np.float32)
    m = np.where(e == 0, np.float32(1.0), m).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        y = (x * m).astype(np.float32)
        y254 = ((x * np.float32(0.5)).astype(np.float32) * np.float32(2.0**-126)).astype(np.float32)
    y = np.where(e == 254, y254, y)
    return np.where(e == E8M0_NAN, np.float32(np.nan), y).astype(np.float32)


def quantize(x: np.ndarray, rounding: str = "ceil") -> tuple[np.ndarray, np.ndarray]:
    """MXFP4 quantize of x [M, K] (1x32 blocks along K): (packed uint8 [M, ceil(K/32) * 16],
    E8M0 scales uint8 [M, ceil(K/32)])."""
    blocks, _ = _rowwise_blocks(x, BLOCK)
    scales = e8m0_from_amax(nan_propagating_amax(blocks, axis=-1), rounding)
    y = scale_data(blocks, scales[..., None])
    codes = encode_e2m1(y)  # NaN y (only in 0xFF blocks) -> code 0
    codes[scales == E8M0_NAN] = 0
    return pack(codes.reshape(blocks.shape[0], -1)), scales


def unpack(packed: np.ndarray, k: int) -> np.ndarray:
    """E2M1 nibble codes uint8 [M, k] of packed rows [M, n] (low nibble = even element)."""
    codes = _unpack_all(packed)
    if k > codes.shape[1]:
        raise ValueError(f"k = {k} exceeds the {codes.shape[1]} packed elements per row")
    return np.ascontiguousarray(codes[:, :k])


def e2m1_value(codes: np.ndarray) -> np.ndarray:
    """float32 value of E2M1 nibble codes 0..15 (code 8 is -0.0)."""
    return decode_e2m1(codes)


def dequantize(packed: np.ndarray, scales: np.ndarray, k: int) -> np.ndarray:
    """float32 [M, k]: ``e2m1_value(code) * 2^(e-127)`` (e = 0 -> 2^-127, e = 255 -> NaN)."""
    codes = unpack(packed, k)
    s = np.repeat(decode_e8m0(scales), BLOCK, axis=1)[:, :k]
    return (e2m1_value(codes) * s).astype(np.float32)
