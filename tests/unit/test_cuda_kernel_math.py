"""The CUDA kernels' element math (runtime_kernels/include/qmlir_numerics.cuh), compiled for the
host, bit for bit against the independent references in tests/reference on the SEMANTICS.md edge
cases (zeros, subnormals, every rounding tie, max and just past it, inf, NaN) and random values.

Skips when no C++ compiler is found ($CXX, c++, g++, clang++).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.reference import fp8, fp8_block, mxfp8, nvfp4
from tests.unit.cuda_host_numerics import HostNumerics, find_cxx

F32 = np.float32
FLT_MAX = F32(np.finfo(np.float32).max)
SPECIALS = F32(
    [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, FLT_MAX, -FLT_MAX, 2.0**-149, 2.0**-126]
)
finite_or_not = st.floats(width=32, allow_nan=True, allow_infinity=True)


@pytest.fixture(scope="session")
def host(tmp_path_factory: pytest.TempPathFactory) -> HostNumerics:
    cxx = find_cxx()
    if cxx is None:
        pytest.skip("no C++ compiler ($CXX, c++, g++ or clang++) to build the kernels' host math")
    return HostNumerics.build(cxx, Path(tmp_path_factory.mktemp("cuda_host")))


def f32_bits(u: np.ndarray) -> np.ndarray:
    return np.asarray(u, dtype=np.uint32).view(np.float32)


def random_bits(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return f32_bits(rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32))


def near(values: np.ndarray) -> np.ndarray:
    """Each value, its float32 neighbours, and their negations."""
    v = np.asarray(values, dtype=np.float32)
    up, down = np.nextafter(v, F32(np.inf)), np.nextafter(v, F32(-np.inf))
    both = np.concatenate([v, up, down])
    return np.concatenate([both, -both]).astype(np.float32)


def format_values(ebits: int, mbits: int, max_finite: float) -> np.ndarray:
    """Every finite non-negative value of a small float format, ascending (from its definition)."""
    bias = (1 << (ebits - 1)) - 1
    out = []
    for e in range(1 << ebits):
        for m in range(1 << mbits):
            v = m * 2.0 ** (1 - bias - mbits) if e == 0 else (1 + m / 2**mbits) * 2.0 ** (e - bias)
            if v <= max_finite:
                out.append(v)
    return np.array(sorted(set(out)), dtype=np.float64)


def nearest_even(v: np.ndarray, table: np.ndarray, nan_code: int, sign_bit: int) -> np.ndarray:
    """Independent oracle: nearest table entry, ties to the even index, saturating, signed."""
    with np.errstate(invalid="ignore"):  # signaling-NaN payloads warn on the widening cast
        v64 = np.asarray(v, dtype=np.float32).astype(np.float64)
    nan = np.isnan(v64)
    a = np.minimum(np.abs(np.where(nan, 0, v64)), table[-1])
    hi = np.searchsorted(table, a, side="left")
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = a - table[lo], table[hi] - a
    tie = np.where(lo % 2 == 0, lo, hi)
    code = np.where(d_hi == 0, hi, np.where(d_lo < d_hi, lo, np.where(d_hi < d_lo, hi, tie)))
    code = code | np.where(np.signbit(v64), sign_bit, 0)
    return np.where(nan, nan_code, code).astype(np.uint8)


def edge_values(table: np.ndarray) -> np.ndarray:
    """Every code's value and midpoint (both signs, with float32 neighbours), plus specials."""
    mids = (table[:-1] + table[1:]) / 2
    past = [table[-1] * 1.0625, table[-1] * 2]
    return np.concatenate([near(table), near(mids), near(past), SPECIALS, random_bits(2000, 7)])


# ------------------------------------------------------------------------------ element encoders


def test_e4m3_encoder_edges(host: HostNumerics) -> None:
    values = np.concatenate([edge_values(format_values(4, 3, 448)), fp8.e4m3_ties()])
    np.testing.assert_array_equal(host.encode(values, "e4m3"), fp8.encode_e4m3(values))


def test_e4m3_encoder_random(host: HostNumerics) -> None:
    rng = np.random.default_rng(1)
    scaled = (rng.standard_normal(100_000) * np.exp2(rng.integers(-14, 10, 100_000))).astype(F32)
    values = np.concatenate([scaled, random_bits(100_000, 2)])
    np.testing.assert_array_equal(host.encode(values, "e4m3"), mxfp8.cast_e4m3(values))


@given(st.lists(finite_or_not, min_size=1, max_size=64))
def test_e4m3_encoder_hypothesis(host: HostNumerics, xs: list[float]) -> None:
    values = np.array(xs, dtype=np.float32)
    np.testing.assert_array_equal(host.encode(values, "e4m3"), fp8.encode_e4m3(values))


def test_e5m2_encoder(host: HostNumerics) -> None:
    table = format_values(5, 2, 57344)
    rng = np.random.default_rng(3)
    scaled = (rng.standard_normal(50_000) * np.exp2(rng.integers(-20, 18, 50_000))).astype(F32)
    values = np.concatenate([edge_values(table), scaled])
    expected = nearest_even(values, table, nan_code=0x7F, sign_bit=0x80)
    np.testing.assert_array_equal(host.encode(values, "e5m2"), expected)
    assert host.encode(F32([np.inf, -np.inf, 61440.0, np.nan]), "e5m2").tolist() == [
        0x7B,
        0xFB,
        0x7B,
        0x7F,
    ]


def test_e2m1_encoder(host: HostNumerics) -> None:
    values = np.concatenate([edge_values(nvfp4.E2M1_VALUES), random_bits(20_000, 4)])
    rng = np.random.default_rng(5)
    values = np.concatenate([values, (rng.standard_normal(50_000) * 3).astype(F32)])
    np.testing.assert_array_equal(host.encode(values, "e2m1"), nvfp4.encode_e2m1(values))
    # TE's cast_to_fp4x2: -0.0 -> +0, NaN -> +0, a negative value rounding to zero keeps its sign
    assert host.encode(F32([-0.0, np.nan, -0.25, -0.2, 0.75, 5.0]), "e2m1").tolist() == [
        0,
        0,
        8,
        8,
        2,
        6,
    ]


def test_e2m1_encoder_dense(host: HostNumerics) -> None:
    """Every float32 within 2048 ulps of each E2M1 value, midpoint, power of two near the grid and
    point past 6, both signs: the encoder rounds by adding and subtracting a binade-dependent
    constant, so its edges are the binades' and the midpoints'."""
    table = nvfp4.E2M1_VALUES.astype(F32)
    anchors = np.concatenate(
        [table, (table[:-1] + table[1:]) / 2, np.exp2(np.arange(-10, 5)), [6.5, 7.0, 12.0]]
    ).astype(F32)
    offsets = np.arange(-2048, 2049, dtype=np.int64)
    bits = (anchors.view(np.uint32).astype(np.int64)[:, None] + offsets[None, :]).ravel()
    positive = bits[(bits >= 0) & (bits < 0x7F800000)].astype(np.uint32).view(F32)
    values = np.concatenate([positive, -positive])
    np.testing.assert_array_equal(host.encode(values, "e2m1"), nvfp4.encode_e2m1(values))


@given(st.lists(finite_or_not, min_size=1, max_size=64))
def test_e2m1_encoder_hypothesis(host: HostNumerics, xs: list[float]) -> None:
    values = np.array(xs, dtype=np.float32)
    np.testing.assert_array_equal(host.encode(values, "e2m1"), nvfp4.encode_e2m1(values))


def test_decoders(host: HostNumerics) -> None:
    codes = np.arange(256, dtype=np.uint8)
    got, want = host.decode(codes, "e4m3"), fp8.decode_e4m3(codes)
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(got.view(np.uint32)[finite], want.view(np.uint32)[finite])
    assert np.array_equal(np.isnan(got), np.isnan(want))
    nibbles = np.arange(16, dtype=np.uint8)
    np.testing.assert_array_equal(
        host.decode(nibbles, "e2m1").view(np.uint32), nvfp4.decode_e2m1(nibbles).view(np.uint32)
    )


# ------------------------------------------------------------------------------ E8M0 scales


def powers_of_two_times(base: float, lo: int, hi: int) -> np.ndarray:
    """base * 2^k for lo <= k < hi, in float32 (overflowing to inf past the range)."""
    with np.errstate(over="ignore"):
        return (base * np.exp2(np.arange(lo, hi, dtype=np.float64))).astype(F32)


E8M0_AMAX = np.concatenate(
    [
        near(powers_of_two_times(448.0, -140, 128)),
        near(powers_of_two_times(672.0, -130, 120)),
        f32_bits(np.arange(0, 0x00800010, 0x10001, dtype=np.uint32)),  # subnormal amax
        np.abs(SPECIALS),
    ]
)


@pytest.mark.parametrize("rule", ["ceil", "floor", "rne", "even"])
def test_e8m0_rules(host: HostNumerics, rule: str) -> None:
    amax = np.concatenate([E8M0_AMAX, np.abs(random_bits(50_000, 6))])
    np.testing.assert_array_equal(host.e8m0_from_amax(amax, rule), mxfp8.e8m0_from_amax(amax, rule))


def test_e8m0_ceil_of_subnormal_and_boundary_v(host: HostNumerics) -> None:
    v = np.concatenate([f32_bits(np.arange(0, 0x01000000, 0x1FFF, dtype=np.uint32)), SPECIALS])
    v = np.concatenate([v, near(f32_bits(np.uint32([0x00400000, 0x00800000, 0x7F000000])))])
    np.testing.assert_array_equal(host.e8m0_ceil(v), mxfp8.float_to_e8m0(v))


def test_e8m0_decode_and_multiplier(host: HostNumerics) -> None:
    e = np.arange(256, dtype=np.uint8)
    decoded, multiplier = host.e8m0_values(e)
    for got, want in ((decoded, mxfp8.decode_e8m0(e)), (multiplier, mxfp8.data_multiplier(e))):
        finite = ~np.isnan(want)
        np.testing.assert_array_equal(got.view(np.uint32)[finite], want.view(np.uint32)[finite])
        assert np.array_equal(np.isnan(got), ~finite)


@pytest.mark.parametrize("rule", ["ceil", "floor", "rne", "even"])
@pytest.mark.parametrize("shape", [(3, 96), (5, 70), (1, 31)])
def test_mxfp8_quantize_composition(host: HostNumerics, rule: str, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[1])
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-30, 30, (shape[0], 1)))).astype(F32)
    x[0, :4] = [np.nan, -np.inf if rule == "ceil" else 0.0, 2.0**-140, -0.0]
    codes, scales = host.mxfp8_rowwise(x, rule)
    want_codes, want_scales = mxfp8.quantize(x, axis=1, rounding=rule)
    np.testing.assert_array_equal(scales, want_scales)
    np.testing.assert_array_equal(codes, want_codes)


# ------------------------------------------------------------------------------ FP8 scales

SCALE_AMAX = np.concatenate(
    [
        np.abs(SPECIALS),
        near(F32([1.0, 448.0, 57344.0, 1e-3, 3.0, 2.0**-126, 1e-38, 1e-30, 3e38])),
        f32_bits(np.uint32([1, 0x00400000, 0x007FFFFF])),
    ]
)


@pytest.mark.parametrize("pow2", [False, True])
@pytest.mark.parametrize("eps", [0.0, 1e-12, 2.0])
@pytest.mark.parametrize("fp8_max", [448.0, 57344.0])
def test_fp8_scale(host: HostNumerics, pow2: bool, eps: float, fp8_max: float) -> None:
    amax = np.concatenate([SCALE_AMAX, np.abs(random_bits(3000, 8))])
    want = np.array([fp8.compute_scale(a, fp8_max, pow2, eps) for a in amax], dtype=F32)
    got = host.fp8_scale(amax, fp8_max, eps, pow2)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_fp8_block_scale_inv_matches_reference(host: HostNumerics) -> None:
    """Block scale_inv = 1 / scale with pow2 on, as fp8_block.quantize_1d stores it."""
    x = np.zeros((2, 256), F32)
    x[0, :128], x[0, 128:], x[1, :128] = 3.5, 1e-20, 7e30
    _, sinv = fp8_block.quantize_1d(x, axis=1)
    amax = np.abs(x).reshape(2, 2, 128).max(axis=-1).ravel()
    scale = host.fp8_scale(amax, 448.0, 0.0, True)
    np.testing.assert_array_equal((F32(1) / scale).reshape(2, 2), sinv)


# ------------------------------------------------------------------------------ NVFP4


def test_nvfp4_global_scale(host: HostNumerics) -> None:
    for amax in [0.0, 1.0, 2688.0, 1e-40, 1e-30, 3e38, float(FLT_MAX), float("inf"), 5.5]:
        s_enc, s_dec = host.nvfp4_global_scales(amax)
        want = nvfp4.global_encode_scale(amax)
        assert s_enc.view(np.uint32) == want.view(np.uint32), amax
        assert s_dec.view(np.uint32) == (F32(1) / want).view(np.uint32), amax


def nvfp4_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    wide = (rng.standard_normal((6, 64)) * np.exp2(rng.integers(-12, 12, (6, 1)))).astype(F32)
    edges = wide.copy()
    edges[0, :16] = 0.0  # a zero block
    edges[1, :8] = [np.nan, -0.0, 1e-30, -1e-30, 6.0, -0.25, 1e4, 2.0**-140]
    edges[2, 16:32] = 1e-7  # a block tiny next to huge ones: an E4M3-subnormal or zero scale
    edges[3, 32:48] = np.float32(2688.0) * np.arange(16, dtype=F32)
    odd = (rng.standard_normal((3, 37)) * 10).astype(F32)
    tiny = np.full((2, 32), 1e-39, F32)
    inf = wide.copy()
    inf[0, 0] = np.inf
    return [wide, edges, odd, tiny, np.zeros((2, 16), F32), inf]


@pytest.mark.parametrize("case", range(6))
def test_nvfp4_quantize_composition(host: HostNumerics, case: int) -> None:
    x = nvfp4_cases()[case]
    packed, scales, s_dec = host.nvfp4(x)
    want_packed, want_scales, want_s_dec = nvfp4.quantize(x, mode="te")
    np.testing.assert_array_equal(scales, want_scales)
    np.testing.assert_array_equal(packed, want_packed)
    assert s_dec.view(np.uint32) == want_s_dec.view(np.uint32)


# ------------------------------------------------------------------------------ layouts


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (128, 4), (130, 9), (257, 5), (64, 17)])
def test_mx_swizzle_offsets(host: HostNumerics, shape: tuple[int, int]) -> None:
    rows, cols = shape
    offsets = host.mx_offsets(rows, cols)
    size = -(-rows // 128) * 128 * (-(-cols // 4) * 4)
    assert len(np.unique(offsets)) == rows * cols and offsets.max() < size
    for seed in range(3):
        s = np.random.default_rng(seed).integers(1, 256, shape).astype(np.uint8)
        out = np.zeros(size, np.uint8)
        out[offsets.ravel()] = s.ravel()
        np.testing.assert_array_equal(out, mxfp8.swizzle_rowwise(s))
        np.testing.assert_array_equal(out, nvfp4.swizzle(s))
    # columnwise scales S [rows/32, cols] go through the transpose (4x128 tiles)
    s = np.random.default_rng(9).integers(1, 256, (cols, rows)).astype(np.uint8)
    out = np.zeros(size, np.uint8)
    out[offsets.ravel()] = s.T.ravel()
    np.testing.assert_array_equal(out, mxfp8.swizzle_columnwise(s))


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (8, 2), (130, 9)])
def test_fp8_block_layout_offsets(host: HostNumerics, shape: tuple[int, int]) -> None:
    rows, kbs = shape
    s = np.arange(1, rows * kbs + 1, dtype=F32).reshape(shape)
    for two_d, want in ((False, fp8_block.gemm_ready_1d(s)), (True, fp8_block.gemm_ready_2d(s))):
        out = np.zeros(want.size, F32)
        out[host.block_offsets(rows, kbs, two_d).ravel()] = s.ravel()
        np.testing.assert_array_equal(out.reshape(want.shape), want)
