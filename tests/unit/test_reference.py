"""The test reference itself, checked against ml_dtypes (a peer cast) where both apply."""

import ml_dtypes
import numpy as np

from tests.reference import fp8


def _ml_dtypes_saturating(v: np.ndarray) -> np.ndarray:
    sat = np.clip(v, -448.0, 448.0)  # ml_dtypes does not saturate: clamp first (inf -> 448)
    with np.errstate(invalid="ignore"):  # NaN inputs: replaced below
        codes = sat.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).copy()
    codes[np.isnan(v)] = fp8.NAN_CODE
    return codes


def test_every_code_decodes_like_ml_dtypes() -> None:
    codes = np.arange(256, dtype=np.uint8)
    ours = fp8.decode_e4m3(codes)
    peer = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    np.testing.assert_array_equal(ours, peer)


def test_encoder_matches_ml_dtypes_on_ties_and_random_bits() -> None:
    rng = np.random.default_rng(1)
    random = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    specials = np.float32([0.0, -0.0, 448, 464, 465, np.inf, -np.inf])
    values = np.concatenate([fp8.e4m3_ties(), random, specials])
    np.testing.assert_array_equal(fp8.encode_e4m3(values), _ml_dtypes_saturating(values))


def test_ties_round_to_even_codes() -> None:
    # 0.5*(1 + 1.125) sits between codes 0x38 (1.0) and 0x39 (1.125): even 0x38 wins.
    assert fp8.encode_e4m3(np.array([1.0625], np.float32))[0] == 0x38
    # 1.1875 sits between 0x39 (1.125) and 0x3A (1.25): even 0x3A wins.
    assert fp8.encode_e4m3(np.array([1.1875], np.float32))[0] == 0x3A
    # Half the smallest subnormal (2^-10) ties to zero; just above rounds up to 2^-9.
    assert fp8.encode_e4m3(np.array([2.0**-10], np.float32))[0] == 0x00
    assert fp8.encode_e4m3(np.array([np.nextafter(np.float32(2**-10), 1)], np.float32))[0] == 1


def test_subnormal_to_normal_boundary_rounds_up() -> None:
    # Largest subnormal 7*2^-9; halfway to the smallest normal (2^-6) ties to the even code 0x08.
    v = np.float32((7 * 2.0**-9 + 2.0**-6) / 2)
    assert fp8.encode_e4m3(np.array([v]))[0] == 0x08


def test_compute_scale_rules() -> None:
    assert fp8.compute_scale(0.0) == 1.0
    assert fp8.compute_scale(np.inf) == 1.0
    assert fp8.compute_scale(448.0) == 1.0
    assert fp8.compute_scale(1e-45) == fp8.FLT_MAX
    assert fp8.compute_scale(3.0, pow2=True) == 128.0  # 149.33 rounded down to 2^7
    assert fp8.compute_scale(0.0, epsilon=1.0) == 448.0
