"""The MXFP4 test reference (tests/reference/mxfp4.py), checked by hand-computed bytes, an
independent exact (``fractions`` / ``math.frexp``) computation of every scale rule, and peers:
torchao 0.18.0 ``to_mx`` (FLOOR, EVEN, RCEIL) and compressed-tensors 0.20.0
``generate_mx_scales``, with every known disagreement pinned by an explicit case.

The peer comparisons skip when torchao or compressed-tensors is not installed.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
import torch

from tests.reference import mxfp4, mxfp8

F32 = np.float32
FLT_MAX = F32(np.finfo(np.float32).max)
ROUNDINGS = ["ceil", "floor", "rne", "even"]


def bits(u: int) -> np.float32:
    """The float32 whose bit pattern is ``u``."""
    return np.array([u], dtype=np.uint32).view(np.float32)[0]


def random_bits(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)


def block32(*head: float) -> np.ndarray:
    """A [1, 32] float32 block: ``head`` followed by zeros."""
    x = np.zeros((1, 32), dtype=np.float32)
    x[0, : len(head)] = head
    return x


# --------------------------------------------------------------------------- exact E8M0 oracle


def _round_to_f32(q: Fraction) -> float:
    """The float32 nearest to the exact rational q >= 0 (ties to even), subnormals kept."""
    if q == 0:
        return 0.0
    guess = np.float32(float(q))  # within an ulp; the exact comparison below decides
    cands = [guess, np.nextafter(guess, F32(0)), np.nextafter(guess, F32(np.inf))]
    cands = [c for c in cands if np.isfinite(c)]

    def key(c: np.float32) -> tuple[Fraction, int]:
        return abs(Fraction(float(c)) - q), int(np.array([c]).view(np.uint32)[0] & 1)

    return float(min(cands, key=key))


def _pow2_ceil_exp(v: float) -> int:
    """The smallest k with 2^k >= v > 0."""
    m, ex = math.frexp(v)  # v = m * 2^ex, 0.5 <= m < 1
    return ex - 1 if m == 0.5 else ex


RCP6 = Fraction(float(F32(1.0 / 6.0)))


def oracle_e8m0(a: float, rounding: str) -> int:
    """Each rule of the module docstring from its value definition, with exact arithmetic."""
    if math.isnan(a):
        return 0xFF
    a = abs(a)
    if rounding == "ceil":
        if math.isinf(a):
            return 0xFE
        v = _round_to_f32(Fraction(a) * RCP6)
        return 0 if v == 0 else min(max(_pow2_ceil_exp(v) + 127, 0), 254)
    if rounding == "rne":
        if math.isinf(a):
            return 0xFF
        v = _round_to_f32(Fraction(a) / 6)
        if v < 2.0**-126:  # subnormal: up to 2^-126 (byte 1) only above 2^-127
            return 1 if v > 2.0**-127 else 0
        m, ex = math.frexp(v)
        e = (ex if m >= 0.75 else ex - 1) + 127  # 1.5 * 2^k ties up
        return 0xFF if e > 254 else e
    if rounding == "floor":
        if math.isinf(a):
            return 253
        if a < 2.0**-126:  # zero and subnormals: exponent field 0
            return 0
        _, ex = math.frexp(a)
        return max(ex - 1 + 127 - 2, 0)
    if rounding == "even":
        if math.isinf(a):
            return 253
        if a < 2.0**-126:  # exponent(r) <= 1
            return 0
        m, ex = math.frexp(a)
        k = ex if m >= 0.875 else ex - 1  # half-up to one mantissa bit: 1.75 * 2^k -> 2^(k+1)
        return max(k + 127 - 2, 0)
    raise AssertionError(rounding)


def adversarial_amax() -> np.ndarray:
    vals: list[np.float32] = [F32(0), F32(-0.0), FLT_MAX, F32(np.inf), F32(np.nan)]
    vals += [bits(b) for b in (1, 2, 0x3FFFFF, 0x400000, 0x400001, 0x5FFFFF, 0x600000, 0x7FFFFF)]
    for k in range(-149, 128):
        for base in (1.0, 1.5, 1.75, 3.0, 6.0, 0.75 * 6):
            v = F32(np.ldexp(base, k)) if np.ldexp(base, k) <= FLT_MAX else None
            if v is None or v == 0:
                continue
            vals += [v, np.nextafter(v, F32(0)), np.nextafter(v, F32(np.inf))]
    return np.array(vals, dtype=np.float32)


def amax_sample() -> np.ndarray:
    r = np.abs(random_bits(3000, 1))
    r = r[np.isfinite(r)]
    normal = np.abs(np.random.default_rng(2).standard_normal(1000)).astype(np.float32)
    return np.concatenate([adversarial_amax(), r, normal])


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_e8m0_rules_match_exact_oracle(rounding: str) -> None:
    a = amax_sample()
    expected = np.array([oracle_e8m0(float(v), rounding) for v in a], dtype=np.uint8)
    np.testing.assert_array_equal(mxfp4.e8m0_from_amax(a, rounding), expected)


def test_e8m0_hand_computed() -> None:
    a = F32([0, 6, 7, 1, 1.5, 1.75, 3, 96, 2.0**-125, 2.0**-126, 1e-40, FLT_MAX, np.inf, np.nan])
    a = np.concatenate([a, [np.nextafter(F32(6), F32(7)), np.nextafter(F32(1.75), F32(0))]])
    expected = {
        # 6 * fp32(1/6) rounds to exactly 1.0 -> 127; 1 -> 0.1667 -> 2^-2; 2^-125 / 6 <= 2^-127;
        # FLT_MAX / 6 = 1.42 * 2^125 -> 2^126 (253); inf -> 0xFE; 6 + ulp -> just above 1 -> 128
        "ceil": [0, 127, 128, 125, 125, 126, 126, 131, 0, 0, 0, 253, 0xFE, 0xFF, 128, 126],
        # exponent field minus 2: 6 = 1.5 * 2^2 -> 127; 96 = 1.5 * 2^6 -> 131;
        # 2^-125 -> field 2 -> 0; FLT_MAX -> 252
        "floor": [0, 127, 127, 125, 125, 125, 126, 131, 0, 0, 0, 252, 253, 0xFF, 127, 125],
        # 7/6 -> 2^0; 1/6 = 1.33 * 2^-3 -> 2^-3; 1.5/6 = 0.25; 1.75/6 = 1.17 * 2^-2; 3/6 = 0.5;
        # 96/6 = 16; FLT_MAX/6 = 1.33 * 2^125 -> 2^125 (252); inf -> 0xFF
        "rne": [0, 127, 127, 124, 125, 125, 126, 131, 0, 0, 0, 252, 0xFF, 0xFF, 127, 125],
        # 7 = 1.75 * 4 and 1.75 round up (128, 126); just below 1.75 stays 125; FLT_MAX -> r = inf
        "even": [0, 127, 128, 125, 125, 126, 126, 131, 0, 0, 0, 253, 253, 0xFF, 127, 125],
    }
    for rounding, exp in expected.items():
        np.testing.assert_array_equal(mxfp4.e8m0_from_amax(a, rounding), exp, err_msg=rounding)
    with pytest.raises(ValueError):
        mxfp4.e8m0_from_amax(a, "nearest")


def test_ceil_multiply_equals_division_by_six() -> None:
    """amax * fp32(1/6) (ours, TE-style) and fp32(amax / 6) (torchao RCEIL) never give different
    E8M0 ceilings: checked on random bits and on the 16 neighbours of every 6 * 2^k."""
    a = np.abs(random_bits(200000, 3))
    near = [F32(np.ldexp(6.0, k)) for k in range(-149, 125)]
    for v in list(near):
        lo = hi = v
        for _ in range(8):
            lo, hi = np.nextafter(lo, F32(0)), np.nextafter(hi, F32(np.inf))
            near += [lo, hi]
    a = np.concatenate([a[np.isfinite(a)], np.array(near, dtype=np.float32)])
    div = mxfp8.float_to_e8m0((a / F32(6)).astype(np.float32))
    np.testing.assert_array_equal(mxfp4.e8m0_from_amax(a, "ceil"), div)


def test_decode_e8m0_and_scale_data() -> None:
    e = np.array([0, 1, 125, 127, 253, 254, 255], dtype=np.uint8)
    x = np.full(7, 3.0, dtype=np.float32)
    y = mxfp4.scale_data(x, e)
    np.testing.assert_array_equal(
        y[:6], F32([3.0, 3 * 2.0**126, 12.0, 3.0, 3 * 2.0**-126, 3 * 2.0**-127])
    )
    assert np.isnan(y[6])
    # e == 254: (x * 0.5) * 2^-126, e.g. FLT_MAX -> 2 - 2^-23 (a single product would overflow)
    assert mxfp4.scale_data(F32([FLT_MAX]), np.uint8(254))[0] == F32(2 - 2.0**-23)
    assert mxfp4.scale_data(F32([-np.inf]), np.uint8(254))[0] == -np.inf


# --------------------------------------------------------------------------- compressed-tensors


def _generate_mx_scales(a: np.ndarray) -> np.ndarray:
    pytest.importorskip("compressed_tensors")
    from compressed_tensors.quantization.utils.mxfp_utils import generate_mx_scales

    return generate_mx_scales(torch.from_numpy(a.astype(np.float32)), num_bits=4).numpy()


def test_even_matches_compressed_tensors_generate_mx_scales() -> None:
    a = np.concatenate([np.abs(random_bits(200000, 4)), adversarial_amax()])
    a = a[np.isfinite(a)]
    peer = _generate_mx_scales(a)
    ours = mxfp4.e8m0_from_amax(a, "even")
    in_range = np.isfinite(peer) & (peer >= 0)
    assert in_range.mean() > 0.99  # everything but the two ends of the float32 range
    np.testing.assert_array_equal(ours[in_range], peer[in_range])
    # outside [0, 253] compressed-tensors returns the unclamped float (below)
    assert np.all((ours[~in_range] == 0) | (ours[~in_range] == 253))


def test_even_known_disagreements_with_compressed_tensors() -> None:
    a = F32([0, 1e-45, bits(0x5FFFFF), bits(0x600000), 2.0**-126, 2.0**-125, 1.75 * 2.0**-125])
    a = np.concatenate([a, [bits(0x7F5FFFFF), bits(0x7F600000), FLT_MAX, np.inf, np.nan]])
    peer = _generate_mx_scales(a)
    # r = 0 (amax < 0.75 * 2^-126) -> log2(0) = -inf; r = 2^-126 -> -1; r overflowing to inf
    # (amax >= 1.75 * 2^127), inf and NaN (r = inf: NaN bits + 2^21 masked) -> inf.
    np.testing.assert_array_equal(
        peer, [-np.inf, -np.inf, -np.inf, -1, -1, 0, 1, 252, np.inf, np.inf, np.inf, np.inf]
    )
    np.testing.assert_array_equal(
        mxfp4.e8m0_from_amax(a, "even"), [0, 0, 0, 0, 0, 0, 1, 252, 253, 253, 253, 0xFF]
    )


# --------------------------------------------------------------------------- E2M1


E2M1_CASES = [
    (0.0, 0x0), (0.5, 0x1), (1.0, 0x2), (1.5, 0x3), (2.0, 0x4), (3.0, 0x5), (4.0, 0x6), (6.0, 0x7),
    (-0.5, 0x9), (-1.0, 0xA), (-1.5, 0xB), (-2.0, 0xC), (-3.0, 0xD), (-4.0, 0xE), (-6.0, 0xF),
    # every tie goes to the even code
    (0.25, 0x0), (0.75, 0x2), (1.25, 0x2), (1.75, 0x4), (2.5, 0x4), (3.5, 0x6), (5.0, 0x6),
    (-0.25, 0x8), (-0.75, 0xA), (-1.25, 0xA), (-1.75, 0xC), (-2.5, 0xC), (-3.5, 0xE), (-5.0, 0xE),
    # just off the ties
    (0.2500001, 0x1), (0.7499999, 0x1), (1.2500001, 0x3), (2.4999998, 0x4), (2.5000002, 0x5),
    (4.9999995, 0x6), (5.0000005, 0x7), (-5.0000005, 0xF),
    # saturation: 6 and just past it, inf
    (6.0000005, 0x7), (-6.0000005, 0xF), (6.5, 0x7), (-100.0, 0xF), (float(FLT_MAX), 0x7),
    (np.inf, 0x7), (-np.inf, 0xF),
    # zeros and tiny values: -0.0 is +0, a negative that rounds to zero keeps its sign
    (-0.0, 0x0), (-0.1, 0x8), (-1e-45, 0x8), (1e-45, 0x0), (-0.24999999, 0x8), (np.nan, 0x0),
]  # fmt: skip


def test_e2m1_encode_every_code_tie_and_special() -> None:
    v = F32([c[0] for c in E2M1_CASES])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(mxfp4.encode_e2m1(v), [c[1] for c in E2M1_CASES])


def test_e2m1_encode_matches_ml_dtypes_and_values_decode() -> None:
    rng = np.random.default_rng(5)
    v = np.concatenate([rng.uniform(-7, 7, 20000), np.arange(-6.5, 6.75, 0.25)]).astype(np.float32)
    v = v[~((v == 0) & np.signbit(v))]  # ml_dtypes keeps -0.0 as code 8; here it is +0
    peer = np.clip(v, -6, 6).astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    np.testing.assert_array_equal(mxfp4.encode_e2m1(v), peer)
    codes = np.arange(16, dtype=np.uint8)
    values = mxfp4.e2m1_value(codes)
    np.testing.assert_array_equal(values, codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32))
    np.testing.assert_array_equal(values[:8], F32([0, 0.5, 1, 1.5, 2, 3, 4, 6]))
    assert np.signbit(values[8]) and values.dtype == np.float32
    # every value encodes back to its code, except -0.0 (code 8), which encodes as +0
    np.testing.assert_array_equal(mxfp4.encode_e2m1(values), np.where(codes == 8, 0, codes))


# --------------------------------------------------------------------------- quantize


def test_quantize_hand_computed_block_ties_at_scale_one() -> None:
    # amax 6 -> e = 127 under every rule: y = x, so the data bytes are the E2M1 codes directly
    head = [6.0, -0.5, 0.25, 0.75, 1.25, -1.75, 2.5, 3.5, 5.0, -5.0, -0.0, -0.1, 1e-45, 4.0]
    x = block32(*head)
    for rounding in ROUNDINGS:
        packed, scales = mxfp4.quantize(x, rounding)
        assert packed.shape == (1, 16) and scales.shape == (1, 1) and scales[0, 0] == 127
        expected = [0x97, 0x20, 0xC2, 0x64, 0xE6, 0x80, 0x60] + [0] * 9
        np.testing.assert_array_equal(packed[0], expected, err_msg=rounding)
    packed, scales = mxfp4.quantize(x)
    deq = mxfp4.dequantize(packed, scales, 32)
    np.testing.assert_array_equal(deq[0, :10], F32([6, -0.5, 0, 1, 1, -2, 2, 4, 4, -4]))
    assert np.signbit(deq[0, 11]) and not np.signbit(deq[0, 10])


def test_quantize_scales_per_rounding() -> None:
    # amax 3: ceil 3/6 = 0.5 -> 126, y = 2x: 3 -> 6, 1 -> 2, -0.3 -> -0.6 -> -0.5 (0x9)
    x = block32(3.0, 1.0, -0.3)
    packed, scales = mxfp4.quantize(x, "ceil")
    assert scales[0, 0] == 126
    np.testing.assert_array_equal(packed[0, :2], [0x47, 0x09])
    # floor: exponent 1 -> 126 as well; amax 7: floor 127 (7 saturates to 6), ceil 128 (3.5 -> 4)
    packed, scales = mxfp4.quantize(block32(7.0, 1.0), "floor")
    assert scales[0, 0] == 127 and packed[0, 0] == 0x27
    packed, scales = mxfp4.quantize(block32(7.0, 1.0), "ceil")
    assert scales[0, 0] == 128 and packed[0, 0] == 0x16  # 3.5 -> 4 (tie to even), 0.5
    # even: 7 = 1.75 * 4 rounds up: 128, like ceil; rne: 7/6 = 1.17 -> 127, like floor
    assert mxfp4.quantize(block32(7.0), "even")[1][0, 0] == 128
    assert mxfp4.quantize(block32(7.0), "rne")[1][0, 0] == 127


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_nan_block_propagates_to_scale_and_zero_data(rounding: str) -> None:
    x = np.zeros((2, 64), dtype=np.float32)
    x[0, :3] = [1.0, np.nan, -3.0]  # NaN with finite neighbours
    x[0, 32:34] = [1.0, -0.5]  # the next block of the row is unaffected
    x[1, :] = np.nan
    packed, scales = mxfp4.quantize(x, rounding)
    second = mxfp4.e8m0_from_amax(F32([1.0]), rounding)[0]  # 125 under every rule
    np.testing.assert_array_equal(scales, [[0xFF, second], [0xFF, 0xFF]])
    assert np.all(packed[0, :16] == 0) and np.all(packed[1] == 0)
    assert packed[0, 16] != 0
    deq = mxfp4.dequantize(packed, scales, 64)
    assert np.all(np.isnan(deq[0, :32])) and np.all(np.isfinite(deq[0, 32:]))
    # mxfp8's reference skips NaN instead (TE): the difference is deliberate
    assert mxfp8.quantize(x[:1, :32])[1][0, 0] != 0xFF


def test_inf_blocks_per_rounding() -> None:
    x = block32(np.inf, 2.0**127, -3 * 2.0**125, 3.0, -(2.0**100), -1e-30)
    x = np.concatenate([x, block32(-np.inf, FLT_MAX)])
    packed, scales = mxfp4.quantize(x, "ceil")
    # 0xFE: y = (x * 0.5) * 2^-126: inf -> 6, 2^127 -> 1, -1.5 * 2^126 -> -0.75 -> -1 (tie),
    # 3 -> 0, -2^100 -> -2^-27 -> -0 (0x8), but -1e-30 underflows to y = -0.0 exactly -> +0;
    # FLT_MAX -> 2 - 2^-23 -> 2
    np.testing.assert_array_equal(scales[:, 0], [0xFE, 0xFE])
    np.testing.assert_array_equal(mxfp4.unpack(packed, 6)[0], [0x7, 0x2, 0xA, 0x0, 0x8, 0x0])
    np.testing.assert_array_equal(mxfp4.unpack(packed, 2)[1], [0xF, 0x4])
    for rounding in ("floor", "even"):  # 253: multiplier 2^-126, 2^127 -> 2, -0.75 * 2 -> -1.5
        packed, scales = mxfp4.quantize(x, rounding)
        np.testing.assert_array_equal(scales[:, 0], [253, 253])
        np.testing.assert_array_equal(mxfp4.unpack(packed, 6)[0], [0x7, 0x4, 0xB, 0x0, 0x8, 0x0])
    packed, scales = mxfp4.quantize(x, "rne")  # inf / 6 -> 0xFF: the blocks are NaN
    np.testing.assert_array_equal(scales[:, 0], [0xFF, 0xFF])
    assert np.all(packed == 0)


def test_zero_scale_multiplies_by_one() -> None:
    # e == 0 (amax < 2^-124 for floor/even, v <= 2^-127 for ceil): y = x, so the data flushes
    x = block32(2.0**-125, -(2.0**-126), 1e-40)
    for rounding in ROUNDINGS:
        packed, scales = mxfp4.quantize(x, rounding)
        assert scales[0, 0] == 0, rounding
        np.testing.assert_array_equal(packed[0, :2], [0x80, 0x00], err_msg=rounding)
    deq = mxfp4.dequantize(np.array([[0x07]], np.uint8), np.array([[0]], np.uint8), 2)
    np.testing.assert_array_equal(deq, [[6 * 2.0**-127, 0]])  # decodes with 2^-127 (subnormal)


def test_packing_partial_blocks_and_unpack() -> None:
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((7, 45)) * 4).astype(np.float32)
    packed, scales = mxfp4.quantize(x)
    assert packed.shape == (7, 32) and scales.shape == (7, 2)
    assert packed.dtype == np.uint8 and scales.dtype == np.uint8
    codes = mxfp4.unpack(packed, 64)
    assert np.all(codes[:, 45:] == 0)  # padding encodes 0
    np.testing.assert_array_equal(packed, (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8))
    assert mxfp4.unpack(packed, 45).shape == (7, 45)
    # the padded block's scale comes from its 13 real elements only
    np.testing.assert_array_equal(
        scales[:, 1], mxfp4.e8m0_from_amax(np.abs(x[:, 32:]).max(axis=1), "ceil")
    )
    with pytest.raises(ValueError):
        mxfp4.unpack(packed, 65)
    # byte j = code[2j] | code[2j+1] << 4: 6 -> 7 (low nibble), -1 -> 0xA (high nibble)
    assert mxfp4.quantize(block32(6.0, -1.0))[0][0, 0] == 0xA7
    assert mxfp4.quantize(np.zeros((3, 1), np.float32))[0].shape == (3, 16)


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_round_trip_error_bounded(rounding: str) -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 96)) * np.exp2(rng.integers(-30, 30, (64, 1)))
    x = x.astype(np.float32)
    packed, scales = mxfp4.quantize(x, rounding)
    deq = mxfp4.dequantize(packed, scales, 96)
    step = np.repeat(mxfp8.decode_e8m0(scales), 32, axis=1)
    # E2M1 gaps are 0.5 below 2, 1 below 4, 2 up to 6: |error| <= max(0.25, |y| / 4) in units of
    # the scale; floor lets |y| reach 8 and rne 9 (saturating at 6: 1/4 and 1/3 off)
    rel = 1 / 3 if rounding == "rne" else 1 / 4
    assert np.all(np.abs(deq - x) <= np.maximum(0.25 * step, rel * np.abs(x)))
    if rounding == "ceil":  # no saturation: |y| <= 6
        assert np.all(np.abs(x) <= 6 * step)


# --------------------------------------------------------------------------- torchao peers


def _torchao_to_mx(x: np.ndarray, rounding: str) -> tuple[np.ndarray, np.ndarray]:
    """torchao ``to_mx`` for MXFP4: (packed uint8 [M, K/2], scales uint8 [M, K/32])."""
    pytest.importorskip("torchao")
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.mx_tensor import to_mx

    mode = {
        "floor": ScaleCalculationMode.FLOOR,
        "even": ScaleCalculationMode.EVEN,
        "ceil": ScaleCalculationMode.RCEIL,
    }[rounding]
    scale, data = to_mx(torch.from_numpy(x), torch.float4_e2m1fn_x2, 32, scaling_mode=mode)
    # to_mx returns the packed data as plain uint8 [M, K/2] (low nibble = even element) and
    # the scales as float8_e8m0fnu [M, K/32]
    assert scale.dtype == torch.float8_e8m0fnu and scale.shape == (x.shape[0], x.shape[1] // 32)
    assert data.shape == (x.shape[0], x.shape[1] // 2)
    return data.view(torch.uint8).numpy(), scale.view(torch.uint8).numpy()


@pytest.mark.parametrize("rounding", ["floor", "even", "ceil"])
@pytest.mark.parametrize("magnitude", [1.0, 1e-3, 1e3])
def test_quantize_matches_torchao_to_mx(rounding: str, magnitude: float) -> None:
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((128, 256)) * magnitude).astype(np.float32)
    x[0, :] = 0.0
    x[1, :32] = 6.0 * magnitude
    x[2, :32] = np.linspace(-7, 7, 32, dtype=np.float32) * F32(magnitude)
    x[3, 0], x[4, 0], x[5, 32] = np.inf, -FLT_MAX, -np.inf
    x[6, :14] = [6.0, -0.5, 0.25, 0.75, 1.25, -1.75, 2.5, 3.5, 5.0, -5.0, -0.1, 1e-45, 4.0, 7.0]
    packed, scales = mxfp4.quantize(x, rounding)
    peer_packed, peer_scales = _torchao_to_mx(x, rounding)
    np.testing.assert_array_equal(scales, peer_scales)
    np.testing.assert_array_equal(packed, peer_packed)


def test_torchao_wide_range_agrees_away_from_known_cases() -> None:
    rng = np.random.default_rng(9)
    x = rng.standard_normal((256, 128)) * np.exp2(rng.integers(-100, 100, (256, 1)))
    x = x.astype(np.float32)
    for rounding in ("floor", "even", "ceil"):
        packed, scales = mxfp4.quantize(x, rounding)
        peer_packed, peer_scales = _torchao_to_mx(x, rounding)
        np.testing.assert_array_equal(scales, peer_scales, err_msg=rounding)
        np.testing.assert_array_equal(packed, peer_packed, err_msg=rounding)


def test_known_disagreements_with_torchao() -> None:
    x = np.zeros((7, 32), dtype=np.float32)
    x[0, :2] = [1.0, -0.0]  # torchao: -0.0 -> code 8
    x[1, 0] = 2.0**-125  # e == 0: torchao FLOOR/EVEN divide by 2^-126 (-> 2), here multiply by 1
    x[2, :3] = [-3.0, np.nan, 1.0]  # NaN block: scale 0xFF in both, torchao data not zero
    x[3, 0] = np.nextafter(F32(96), F32(200))  # RCEIL: float32 log2 drops the ulp above 6 * 2^4
    x[4, 0] = np.nextafter(F32(0.1875), F32(1))  # ... and above 6 * 2^-5
    x[5, 0] = np.nextafter(F32(6), F32(7))  # near 1 the float32 log2 keeps it: both agree
    x[6, :2] = [np.inf, -1e-30]  # -1e-30 scales to y = -0.0 exactly: here +0, torchao code 8
    for rounding in ("floor", "even"):
        packed, scales = mxfp4.quantize(x, rounding)
        peer_packed, peer_scales = _torchao_to_mx(x, rounding)
        np.testing.assert_array_equal(scales, peer_scales, err_msg=rounding)
        np.testing.assert_array_equal(scales[:, 0], [125, 0, 0xFF, 131, 122, 127, 253])
        np.testing.assert_array_equal(packed[[0, 1, 2, 6], 0], [0x06, 0x00, 0x00, 0x07])
        # NaN -> garbage code 3 (torchao's encoder has no NaN), -3 / inf -> -0 (code 8)
        np.testing.assert_array_equal(peer_packed[[0, 1, 2, 6], 0], [0x86, 0x04, 0x38, 0x87])
        np.testing.assert_array_equal(packed[3:6], peer_packed[3:6], err_msg=rounding)
        np.testing.assert_array_equal(packed[:, 1:], peer_packed[:, 1:], err_msg=rounding)
    packed, scales = mxfp4.quantize(x, "ceil")
    peer_packed, peer_scales = _torchao_to_mx(x, "ceil")
    np.testing.assert_array_equal(scales[:, 0], [125, 0, 0xFF, 132, 123, 128, 0xFE])
    np.testing.assert_array_equal(peer_scales[:, 0], [125, 0, 0xFF, 131, 122, 128, 0xFE])
    # ours: 96.00001 / 32 -> 3 (code 5); torchao: / 16 = 6.0000005 -> clamp 6 (code 7)
    np.testing.assert_array_equal(packed[:, 0], [0x06, 0x00, 0x00, 0x05, 0x05, 0x05, 0x07])
    np.testing.assert_array_equal(peer_packed[:, 0], [0x86, 0x00, 0x33, 0x07, 0x07, 0x05, 0x87])
    assert np.all(packed[2] == 0) and np.all(peer_packed[2] == 0x33)  # RCEIL multiplies by NaN


def test_torchao_rceil_float32_log2_boundaries() -> None:
    """Where torchao RCEIL's ceil(log2(amax / 6)) in float32 differs from the exact ceiling:
    amax = nextafter(6 * 2^k) for k <= -5 and k >= 4 (one scale lower), nowhere else among the
    powers of two times 6 and their neighbours."""
    ks = np.arange(-126, 125)
    six = np.array([np.ldexp(6.0, int(k)) for k in ks], dtype=np.float32)
    up = np.nextafter(six, F32(np.inf))
    down = np.nextafter(six, F32(0))
    x = np.zeros((3 * len(ks), 32), dtype=np.float32)
    x[:, 0] = np.concatenate([six, up, down])
    _, scales = mxfp4.quantize(x, "ceil")
    _, peer = _torchao_to_mx(x, "ceil")
    differ = (scales[:, 0] != peer[:, 0]).reshape(3, -1)
    assert not differ[0].any() and not differ[2].any()
    np.testing.assert_array_equal(differ[1], (ks <= -5) | (ks >= 4))
    lower = scales[:, 0].astype(int) - peer[:, 0].astype(int)
    assert set(lower[len(ks) : 2 * len(ks)][differ[1]].tolist()) == {1}
