"""The block-scaled test references (mxfp8, fp8_block, nvfp4, cudnn_block), checked by hand-computed
bytes, edge cases, cross-checks between the references, and peers (torch, ml_dtypes, torchao).

The torchao comparisons skip when torchao is not installed (torchao 0.18.0 is the tested version).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

from tests.reference import cudnn_block, fp8, fp8_block, mxfp8, nvfp4

F32 = np.float32
FLT_MAX = F32(np.finfo(np.float32).max)


def bits(u: int) -> np.float32:
    """The float32 whose bit pattern is ``u``."""
    return np.array([u], dtype=np.uint32).view(np.float32)[0]


def row32(fill: float, first: float | None = None) -> np.ndarray:
    """A 32-element float32 block of ``fill``, optionally with a different first element."""
    r = np.full(32, fill, dtype=np.float32)
    if first is not None:
        r[0] = first
    return r


def random_bits(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)


def wide_random(shape: tuple[int, int], seed: int, lo: int = -20, hi: int = 20) -> np.ndarray:
    """Normal values with a random power-of-two magnitude per row."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * np.exp2(rng.integers(lo, hi, (shape[0], 1)))
    return x.astype(np.float32)


# --------------------------------------------------------------------------- E4M3 / E8M0


def test_vectorized_e4m3_cast_equals_loop_reference() -> None:
    specials = F32([0.0, -0.0, 448, 464, 465, -500, np.inf, -np.inf, np.nan, 2.0**-10, 2.0**-149])
    values = np.concatenate([fp8.e4m3_ties(), random_bits(20000, 2), specials])
    np.testing.assert_array_equal(mxfp8.cast_e4m3(values), fp8.encode_e4m3(values))


# (input bits, TE float_to_e8m0): the boundaries listed in torchao's _mxfp8_test_utils.py RCEIL
# cases. TE saturates at 0xFE where newer torchao expects 0xFF (last three finite/inf rows).
FLOAT_TO_E8M0 = [
    (0x00000000, 0x00),
    (0x80000000, 0x00),  # -0
    (0x00000001, 0x00),  # smallest subnormal
    (0x00400000, 0x00),  # 2^-127, exactly byte 0
    (0x00400001, 0x01),  # just above 2^-127
    (0x007FFFFF, 0x01),  # largest subnormal
    (0x00800000, 0x01),  # 2^-126
    (0x1F800000, 63),  # 2^-64
    (0x1F800001, 64),
    (0x3F7FFFFF, 127),
    (0x3F800000, 127),  # 1.0
    (0x3F800001, 128),
    (0x5F800000, 191),  # 2^64
    (0x5F800001, 192),
    (0x7F000000, 0xFE),  # 2^127
    (0x7F000001, 0xFE),  # satfinite (newer torchao: 0xFF)
    (0x7F7FFFFF, 0xFE),  # FLT_MAX (newer torchao: 0xFF)
    (0x7F800000, 0xFE),  # inf (newer torchao: 0xFF)
    (0x7FC00000, 0xFF),  # NaN
]


def test_float_to_e8m0_boundaries() -> None:
    v = np.array([b for b, _ in FLOAT_TO_E8M0], dtype=np.uint32).view(np.float32)
    expected = np.array([e for _, e in FLOAT_TO_E8M0], dtype=np.uint8)
    np.testing.assert_array_equal(mxfp8.float_to_e8m0(v), expected)


def test_float_to_e8m0_is_the_power_of_two_ceiling() -> None:
    v = np.abs(random_bits(50000, 3))
    v = v[np.isfinite(v)]
    np.testing.assert_array_equal(mxfp8.float_to_e8m0(v), cudnn_block.round_up_e8m0(v))


def test_e8m0_from_amax_ceil() -> None:
    amax = F32([0, 448, 449, 1.0, 3.0, 2.0**-118, 2.0**-119, FLT_MAX, np.inf, np.nan])
    # 1/448 = 1.14 * 2^-9: amax 1 -> biased 118, mantissa != 0 -> 119. amax 2^-118 -> v just
    # above 2^-127 (subnormal) -> 1; 2^-119 -> v below 2^-127 -> 0.
    expected = [0, 127, 128, 119, 120, 1, 0, 247, 0xFE, 0xFF]
    np.testing.assert_array_equal(mxfp8.e8m0_from_amax(amax, "ceil"), expected)


def test_e8m0_from_amax_floor() -> None:
    amax = F32([0, 1.0, 448, bits(0x43FFFFFF), 512, 2.0**-126, 2.0**-118, 1e-40])
    amax = np.concatenate([amax, F32([FLT_MAX, np.inf, np.nan])])
    expected = [0, 119, 127, 127, 128, 0, 1, 0, 246, 247, 0xFF]
    np.testing.assert_array_equal(mxfp8.e8m0_from_amax(amax, "floor"), expected)


def test_e8m0_from_amax_rne() -> None:
    amax = F32([0, 448, 448 * 1.5, 448 * 1.25, 448 * 1.75, np.inf, np.nan])
    amax = np.concatenate([amax, [np.nextafter(F32(672), F32(0))]])
    # v = 1, 1.5 (tie: up), 1.25 (down), 1.75 (up), inf/NaN -> 0xFF, just below 1.5 -> down
    expected = [0, 127, 128, 127, 128, 0xFF, 0xFF, 127]
    np.testing.assert_array_equal(mxfp8.e8m0_from_amax(amax, "rne"), expected)


def test_e8m0_rne_matches_torch_cast() -> None:
    a = np.abs(random_bits(50000, 4))
    edges = F32([0, 2.0**-118, 448 * 2.0**-127, 448 * 1.5 * 2.0**-127, 448 * 2.0**-128, np.inf])
    a = np.concatenate([a, edges, [FLT_MAX, F32(np.nan)]])
    with np.errstate(invalid="ignore"):
        v = (a / F32(448)).astype(np.float32)
    peer = torch.from_numpy(v).to(torch.float8_e8m0fnu).view(torch.uint8).numpy()
    np.testing.assert_array_equal(mxfp8.e8m0_from_amax(a, "rne"), peer)


def test_e8m0_decode_and_multiplier() -> None:
    e = np.array([0, 1, 127, 135, 254, 255], dtype=np.uint8)
    np.testing.assert_array_equal(
        mxfp8.decode_e8m0(e)[:5], F32([2.0**-127, 2.0**-126, 1, 256, 2.0**127])
    )
    assert np.isnan(mxfp8.decode_e8m0(e)[5])
    m = mxfp8.data_multiplier(e)
    np.testing.assert_array_equal(m[:5], F32([1, 2.0**126, 1, 2.0**-8, 2.0**-127]))
    assert np.isnan(m[5])


# --------------------------------------------------------------------------- MXFP8


def test_mxfp8_hand_computed_blocks() -> None:
    x = np.zeros((2, 32), dtype=np.float32)
    # amax 3: v = 3/448 = 1.71 * 2^-8 -> e = 120, multiplier 2^7.
    # 1 -> 128 = 0x70, -0.5 -> -64 = 0xE8, 3 -> 384 = 1.5 * 2^8 = 0x7C.
    x[0, :3] = [1.0, -0.5, 3.0]
    # amax 448 -> e = 127, multiplier 1: E4M3 ties go to the even code, 2^-10 ties to zero.
    x[1, :6] = [448, 1.0625, 1.1875, 2.0**-10, -(2.0**-10), 7 * 2.0**-9]
    codes, scales = mxfp8.quantize(x)
    np.testing.assert_array_equal(scales, [[120], [127]])
    np.testing.assert_array_equal(codes[0, :4], [0x70, 0xE8, 0x7C, 0x00])
    np.testing.assert_array_equal(codes[1, :7], [0x7E, 0x38, 0x3A, 0x00, 0x80, 0x07, 0x00])
    np.testing.assert_array_equal(mxfp8.dequantize(codes, scales)[0, :3], [1.0, -0.5, 3.0])


# torchao's MXFP8 semantic cases (torchao/testing/_mxfp8_test_utils.py, fp32 input), with the bytes
# TE's rules give: (name, block, ceil scale, ceil data, floor scale, floor data). Where newer
# torchao expects otherwise, the comment says so.
_NAN, _INF = float("nan"), float("inf")
_TINY = float(bits(0x00000001))
_FMAX = float(FLT_MAX)


def _d(fill: int, first: int | None = None) -> list[int]:
    d = [fill] * 32
    if first is not None:
        d[0] = first
    return d


MXFP8_CASES = [
    ("zero", row32(0.0), 0, _d(0), 0, _d(0)),
    # 2^-126: v is subnormal <= 2^-127 -> e = 0, multiplier 1 -> 0 (newer torchao: 0x40)
    ("smallest_normal", row32(2.0**-126), 0, _d(0), 0, _d(0)),
    # inf amax -> 0xFE (ceil) / 247 (floor); inf saturates, 1.0 underflows (newer torchao: NaN)
    ("mixed_inf", row32(1.0, _INF), 0xFE, _d(0, 0x7E), 247, _d(0, 0x7E)),
    # NaN skipped by the amax: scale from the 1.0s (torchao: 0xFF and all NaN)
    ("mixed_nan", row32(1.0, _NAN), 119, _d(0x78, 0x7F), 119, _d(0x78, 0x7F)),
    ("positive_fp8_max", row32(448.0), 127, _d(0x7E), 127, _d(0x7E)),
    ("negative_fp8_max", row32(-448.0), 127, _d(0xFE), 127, _d(0xFE)),
    # FLT_MAX: ceil 2^120 -> 256; floor 2^119 -> 512 saturates to 448
    ("positive_dtype_max", row32(_FMAX), 247, _d(0x78), 246, _d(0x7E)),
    ("negative_dtype_max", row32(-_FMAX), 247, _d(0xF8), 246, _d(0xFE)),
    ("positive_smallest_subnormal", row32(_TINY), 0, _d(0x00), 0, _d(0x00)),
    ("negative_smallest_subnormal", row32(-_TINY), 0, _d(0x80), 0, _d(0x80)),
    ("mixed_positive_underflow", row32(1.0, _TINY), 119, _d(0x78, 0x00), 119, _d(0x78, 0x00)),
    ("mixed_negative_underflow", row32(1.0, -_TINY), 119, _d(0x78, 0x80), 119, _d(0x78, 0x80)),
    ("mixed_saturation_and_underflow", row32(1.0, _FMAX), 247, _d(0, 0x78), 246, _d(0, 0x7E)),
    ("rceil_boundary_3.5+ulp", row32(float(bits(0x40600001))), 121, _d(0x76), 120, _d(0x7E)),
    ("floor_boundary_512-ulp", row32(float(bits(0x43FFFFFF))), 128, _d(0x78), 127, _d(0x7E)),
    # all NaN: amax 0 -> scale 0x00, NaN * 1 stays NaN (torchao: scale 0xFF)
    ("all_nan", row32(_NAN), 0, _d(0x7F), 0, _d(0x7F)),
    ("positive_satfinite", row32(480.0), 128, _d(0x77), 127, _d(0x7E)),
    ("negative_satfinite", row32(-480.0), 128, _d(0xF7), 127, _d(0xFE)),
]


@pytest.mark.parametrize("rounding", ["ceil", "floor"])
def test_mxfp8_semantic_cases(rounding: str) -> None:
    x = np.stack([case[1] for case in MXFP8_CASES])
    codes, scales = mxfp8.quantize(x, rounding=rounding)
    col = 2 if rounding == "ceil" else 4
    for i, case in enumerate(MXFP8_CASES):
        assert scales[i, 0] == case[col], f"scale of {case[0]}"
        np.testing.assert_array_equal(codes[i], case[col + 1], err_msg=f"data of {case[0]}")


def test_mxfp8_inf_blocks_per_rounding() -> None:
    x = np.zeros((2, 32), dtype=np.float32)
    x[0, :3] = [np.inf, -3.0, 2.0**125]
    x[1, 0] = -np.inf
    codes, scales = mxfp8.quantize(x, rounding="ceil")
    # multiplier 2^-127 (not 0): inf -> 448, -3 -> -0, 2^125 -> 0.25 = 0x28
    np.testing.assert_array_equal(scales[:, 0], [0xFE, 0xFE])
    np.testing.assert_array_equal(codes[0, :3], [0x7E, 0x80, 0x28])
    assert codes[1, 0] == 0xFE
    codes, scales = mxfp8.quantize(x, rounding="floor")  # 247: multiplier 2^-120, 2^125 -> 32
    np.testing.assert_array_equal(codes[0, :3], [0x7E, 0x80, 0x60])
    codes, scales = mxfp8.quantize(x, rounding="rne")  # inf/448 -> 0xFF: every element NaN
    np.testing.assert_array_equal(scales[:, 0], [0xFF, 0xFF])
    assert np.all(codes == 0x7F)


def test_mxfp8_subnormal_range_and_huge_tiny_mix() -> None:
    x = np.zeros((3, 32), dtype=np.float32)
    x[0, :2] = [1e-40, -1e-40]  # e = 0: multiplier 1, so the data flushes to +-0
    x[1, 0] = 2.0**-118  # v just above 2^-127: e = 1, multiplier 2^126 -> 256
    x[2, :3] = [448 * 2.0**20, 1.0, 2.0**12]  # e = 147: 448, 2^-20 -> 0, 2^-8 -> subnormal 0x02
    codes, scales = mxfp8.quantize(x)
    np.testing.assert_array_equal(scales[:, 0], [0, 1, 147])
    np.testing.assert_array_equal(codes[0, :2], [0x00, 0x80])
    assert codes[1, 0] == 0x78
    np.testing.assert_array_equal(codes[2, :3], [0x7E, 0x00, 0x02])


def test_mxfp8_shapes_partial_blocks_and_columnwise() -> None:
    x = wide_random((45, 70), 5)
    x[3, 64:] = [0.5, -3.0, 0.25, 0, 0, 1.0]  # last block of row 3: 6 real elements, amax 3
    codes, scales = mxfp8.quantize(x, axis=1)
    assert codes.shape == (45, 70) and scales.shape == (45, 3)
    assert scales[3, 2] == 120
    np.testing.assert_array_equal(codes[3, 64:], [0x68, 0xFC, 0x60, 0, 0, 0x70])  # x * 2^7
    codes0, scales0 = mxfp8.quantize(x, axis=0)
    assert codes0.shape == (45, 70) and scales0.shape == (2, 70)
    codes_t, scales_t = mxfp8.quantize(np.ascontiguousarray(x.T), axis=1)
    np.testing.assert_array_equal(codes0, codes_t.T)
    np.testing.assert_array_equal(scales0, scales_t.T)
    col = np.zeros((40, 1), dtype=np.float32)
    col[35, 0] = 3.0  # partial columnwise block (rows 32..39) with amax 3
    np.testing.assert_array_equal(mxfp8.quantize(col, axis=0)[1], [[0], [120]])


@pytest.mark.parametrize("rounding", ["ceil", "floor", "rne"])
@pytest.mark.parametrize("axis", [0, 1])
def test_mxfp8_round_trip(rounding: str, axis: int) -> None:
    x = wide_random((64, 96), 6)
    codes, scales = mxfp8.quantize(x, axis=axis, rounding=rounding)
    deq = mxfp8.dequantize(codes, scales, axis=axis)
    step = np.repeat(mxfp8.decode_e8m0(scales), 32, axis=axis)[:64, :96]
    # 3 mantissa bits: relative error <= 2^-4 for normal E4M3 values, else half a subnormal step;
    # floor lets x * 2^(127-e) reach 512 and rne 672, which saturate at 448 (1/8 and 1/3 off).
    rel = {"ceil": 2.0**-4, "floor": 1 / 8, "rne": 1 / 3}[rounding]
    assert np.all(np.abs(deq - x) <= np.maximum(rel * np.abs(x), 2.0**-10 * step))


def _marker_position(shape: tuple[int, int], r: int, c: int, columnwise: bool = False) -> int:
    s = np.zeros(shape, dtype=np.uint8)
    s[r, c] = 1
    out = mxfp8.swizzle_columnwise(s) if columnwise else mxfp8.swizzle_rowwise(s)
    assert out.sum() == 1
    return int(np.argmax(out))


def test_swizzle_rowwise_hand_positions() -> None:
    shape = (130, 5)  # padded to 256 x 8: 2 x 2 tiles of 512 bytes
    assert mxfp8.swizzle_rowwise(np.ones(shape, np.uint8)).shape == (2048,)
    cases = {
        (0, 0): 0,
        (0, 3): 3,
        (1, 0): 16,  # row 1 sits in slot 4
        (32, 0): 4,  # row 32 in slot 1
        (33, 1): 21,  # slot 5
        (31, 2): 498,  # slot 124
        (127, 3): 511,  # slot 127
        (0, 4): 512,  # second tile of the first tile row
        (128, 0): 1024,  # first tile of the second tile row
        (129, 4): 1552,  # tile 3, slot 4
    }
    for (r, c), pos in cases.items():
        assert _marker_position(shape, r, c) == pos, (r, c)


def test_swizzle_columnwise_is_rowwise_of_transpose() -> None:
    s = np.random.default_rng(7).integers(0, 256, (5, 130), dtype=np.uint8)
    np.testing.assert_array_equal(mxfp8.swizzle_columnwise(s), mxfp8.swizzle_rowwise(s.T))
    # scale of M-block 1, column 0 -> (0, 1) of the transposed layout -> byte 1
    assert _marker_position((5, 130), 1, 0, columnwise=True) == 1
    assert _marker_position((5, 130), 0, 32, columnwise=True) == 4


# --------------------------------------------------------------------------- FP8 blockwise


def test_fp8_block_hand_computed_rowwise() -> None:
    x = np.zeros((2, 128), dtype=np.float32)
    x[0, :4] = [3.0, -1.0, 0.5, 2.0**-20]
    codes, scale_inv = fp8_block.quantize_1d(x)  # pow2: 448/3 = 149.3 -> 128
    np.testing.assert_array_equal(scale_inv, [[2.0**-7], [1.0]])  # zero row: scale 1
    np.testing.assert_array_equal(codes[0, :5], [0x7C, 0xF0, 0x68, 0x00, 0x00])
    assert np.all(codes[1] == 0)
    codes, scale_inv = fp8_block.quantize_1d(x, pow2=False)
    # scale 149.333: 3 -> 448 (0x7E), -1 -> -149.3 -> -144 (0xF1), 0.5 -> 74.7 -> 72 (0x69)
    np.testing.assert_array_equal(codes[0, :3], [0x7E, 0xF1, 0x69])
    assert scale_inv[0, 0] == F32(1) / (F32(448) / F32(3))


def test_fp8_block_specials() -> None:
    x = np.zeros((4, 128), dtype=np.float32)
    x[0, :3] = [np.inf, 500.0, -3.0]  # inf amax -> scale 1: inf and 500 saturate
    x[1, :2] = [np.nan, 2.0]  # NaN skipped: amax 2, pow2 scale 128
    x[2, 0] = 2.0**-130  # 448 / 2^-130 overflows -> FLT_MAX -> pow2 2^127
    x[3, :] = 1e-6  # with eps below
    codes, scale_inv = fp8_block.quantize_1d(x)
    np.testing.assert_array_equal(scale_inv[:3, 0], [1.0, 2.0**-7, 2.0**-127])
    np.testing.assert_array_equal(codes[0, :3], [0x7E, 0x7E, 0xC4])
    np.testing.assert_array_equal(codes[1, :2], [0x7F, 0x78])
    assert codes[2, 0] == 0x20  # 2^-130 * 2^127 = 0.125
    codes, scale_inv = fp8_block.quantize_1d(x[3:], eps=1e-3)  # 448000 -> 2^18
    assert scale_inv[0, 0] == 2.0**-18
    assert np.all(codes == 0x28)  # 0.262 -> 0.25
    _, scale_inv = fp8_block.quantize_1d(x[2:3], pow2=False)
    assert scale_inv[0, 0] == F32(1) / FLT_MAX


def test_fp8_block_shapes_and_partial_blocks() -> None:
    x = wide_random((130, 200), 8)
    x[128:, 128:] = 0.0
    x[129, 150] = 3.0  # the only value of the partial 2D tile (1, 1) and 1D block (129, 1)
    codes, s1 = fp8_block.quantize_1d(x, axis=1)
    assert codes.shape == (130, 200) and s1.shape == (130, 2) and s1[129, 1] == 2.0**-7
    codes0, s0 = fp8_block.quantize_1d(x, axis=0)
    assert codes0.shape == (130, 200) and s0.shape == (2, 200) and s0[1, 150] == 2.0**-7
    codes_t, s_t = fp8_block.quantize_1d(np.ascontiguousarray(x.T), axis=1)
    np.testing.assert_array_equal(codes0, codes_t.T)
    np.testing.assert_array_equal(s0, s_t.T)
    codes2, s2 = fp8_block.quantize_2d(x)
    assert codes2.shape == (130, 200) and s2.shape == (2, 2) and s2[1, 1] == 2.0**-7
    assert codes2[129, 150] == 0x7C


def test_fp8_block_2d_tiles_equal_per_tensor_quantization() -> None:
    w = wide_random((256, 256), 9, lo=-8, hi=8)
    w[5, 7], w[200, 3] = np.nan, np.inf
    codes, scale_inv = fp8_block.quantize_2d(w)
    for i in range(2):
        for j in range(2):
            tile = w[128 * i : 128 * (i + 1), 128 * j : 128 * (j + 1)]
            ref_codes, ref_scale_inv = fp8.quantize_per_tensor(tile, pow2=True)
            np.testing.assert_array_equal(
                codes[128 * i : 128 * (i + 1), 128 * j : 128 * (j + 1)], ref_codes
            )
            assert scale_inv[i, j] == ref_scale_inv


def test_fp8_block_gemm_ready_layouts() -> None:
    s = np.arange(1, 16, dtype=np.float32).reshape(5, 3)
    g = fp8_block.gemm_ready_1d(s)
    assert g.shape == (3, 8)
    np.testing.assert_array_equal(g[:, :5], s.T)
    assert np.all(g[:, 5:] == 0)
    g0 = fp8_block.gemm_ready_1d(s, axis=0)
    assert g0.shape == (5, 4)
    np.testing.assert_array_equal(g0[:, :3], s)
    np.testing.assert_array_equal(fp8_block.gemm_ready_2d(s), g0)
    assert fp8_block.gemm_ready_2d(np.ones((2, 4), np.float32)).shape == (2, 4)


@pytest.mark.parametrize("pow2", [True, False])
def test_fp8_block_round_trip(pow2: bool) -> None:
    x = wide_random((130, 260), 10)
    for codes, s, block in [
        (*fp8_block.quantize_1d(x, axis=1, pow2=pow2), (1, 128)),
        (*fp8_block.quantize_1d(x, axis=0, pow2=pow2), (128, 1)),
        (*fp8_block.quantize_2d(x, pow2=pow2), (128, 128)),
    ]:
        deq = fp8_block.dequantize(codes, s, block)
        step = np.repeat(np.repeat(s, block[0], axis=0), block[1], axis=1)[:130, :260]
        assert np.all(np.abs(deq - x) <= np.maximum(2.0**-4 * np.abs(x), 2.0**-10 * step))


# --------------------------------------------------------------------------- NVFP4 / E2M1


E2M1_CASES = [
    (0.0, 0x0), (0.5, 0x1), (1.0, 0x2), (1.5, 0x3), (2.0, 0x4), (3.0, 0x5), (4.0, 0x6), (6.0, 0x7),
    # every tie goes to the even code
    (0.25, 0x0), (0.75, 0x2), (1.25, 0x2), (1.75, 0x4), (2.5, 0x4), (3.5, 0x6), (5.0, 0x6),
    (-0.25, 0x8), (-0.75, 0xA), (-1.25, 0xA), (-1.75, 0xC), (-2.5, 0xC), (-3.5, 0xE), (-5.0, 0xE),
    # just off the ties
    (0.2500001, 0x1), (4.9999995, 0x6), (5.0000005, 0x7),
    # saturation, zeros, NaN
    (6.5, 0x7), (-100.0, 0xF), (np.inf, 0x7), (-np.inf, 0xF), (-0.0, 0x0), (-0.1, 0x8),
    (np.nan, 0x0), (1e-45, 0x0),
]  # fmt: skip


def test_e2m1_values_ties_and_specials() -> None:
    v = F32([c[0] for c in E2M1_CASES])
    np.testing.assert_array_equal(nvfp4.encode_e2m1(v), [c[1] for c in E2M1_CASES])
    assert nvfp4.encode_e2m1(F32([-0.0]), signed_zero=True)[0] == 0x8


def _te_cast_to_fp4(x: np.ndarray) -> np.ndarray:
    """TE's cast_to_fp4x2 interval table (reference_nvfp4.py), unpacked, as a second oracle."""
    r = np.zeros(x.shape, dtype=np.uint8)
    rules = [
        ((x >= 0.0) & (x <= 0.25), 0), ((x > 0.25) & (x < 0.75), 1), ((x >= 0.75) & (x <= 1.25), 2),
        ((x > 1.25) & (x < 1.75), 3), ((x >= 1.75) & (x <= 2.5), 4), ((x > 2.5) & (x < 3.5), 5),
        ((x >= 3.5) & (x <= 5.0), 6), (x > 5.0, 7), ((x >= -0.25) & (x < -0.0), 8),
        ((x < -0.25) & (x > -0.75), 9), ((x <= -0.75) & (x >= -1.25), 10),
        ((x < -1.25) & (x > -1.75), 11), ((x <= -1.75) & (x >= -2.5), 12),
        ((x < -2.5) & (x > -3.5), 13), ((x <= -3.5) & (x >= -5.0), 14), (x < -5.0, 15),
    ]  # fmt: skip
    for mask, code in rules:
        r[mask] = code
    return r


def test_e2m1_matches_te_table_and_ml_dtypes() -> None:
    rng = np.random.default_rng(11)
    v = np.concatenate([rng.uniform(-7, 7, 20000), np.arange(-6.5, 6.75, 0.25)]).astype(np.float32)
    v = np.concatenate([v, F32([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45])])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(nvfp4.encode_e2m1(v), _te_cast_to_fp4(v))
    finite = np.clip(v[np.isfinite(v)], -6, 6)
    peer = finite.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    np.testing.assert_array_equal(nvfp4.encode_e2m1(finite, signed_zero=True), peer)
    codes = np.arange(16, dtype=np.uint8)
    np.testing.assert_array_equal(
        nvfp4.decode_e2m1(codes), codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    )


def test_nvfp4_hand_computed() -> None:
    x = np.zeros((1, 32), dtype=np.float32)
    x[0, :5] = [6.0, 3.0, -1.5, 0.5, -0.0]
    x[0, 16:24] = [1.5, -0.75, 0.25, -0.25, 1.25, 0.375, -0.0625, 0.125]
    packed, scales, s_dec = nvfp4.quantize(x)
    # global amax 6: S = 448, S_dec = fp32(1/448). Block 0: d = 6 * (448 * fp32(1/6)) = 448.00003
    # -> clamp -> 448 (0x7E), enc = 1/(448 * S_dec) = 1. Block 1: d = 112.0000076 -> 112 (0x6E),
    # enc = 1/(112 * S_dec) = 4: codes 7, D, 2, A, 6 (tie 5 -> 4), 3, 8 (-0.25 -> -0), 1.
    assert s_dec == F32(1) / F32(448)
    np.testing.assert_array_equal(scales, [[0x7E, 0x6E]])
    expected = [0x57, 0x1B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xD7, 0xA2, 0x36, 0x18, 0, 0, 0, 0]
    np.testing.assert_array_equal(packed[0], expected)
    deq = nvfp4.dequantize(packed, scales, s_dec, 32)
    np.testing.assert_array_equal(deq[0, :4], (F32([6.0, 3.0, -1.5, 0.5]) * F32(448)) * s_dec)
    np.testing.assert_allclose(deq[0, 16:24], x[0, 16:24] * F32([1, 1, 1, 1, 0.8, 1, 0, 1]), 1e-6)


def test_nvfp4_te_order_of_operations() -> None:
    x = np.zeros((1, 48), dtype=np.float32)
    x[0, 0] = 6.0  # S = 448, S_dec = fp32(1/448), S * fp32(1/6) = 74.66667175
    x[0, 16] = 1.125 * 2.0**-12  # d = 0.0205078140 = 10.5000029 * 2^-9 -> 11 * 2^-9 (0x0B);
    # (amax / 6) * S would give exactly 10.5 * 2^-9, a tie, -> 0x0A.
    x[0, 32:34] = [0.0134, 2.0**-8]  # d = 1.0005 -> 1.0 (0x38); enc = 1 / (1 * S_dec) = 447.99997
    # so 2^-8 -> 1.7499999 -> 1.5 (code 3), where S / d = 448 would give the tie 1.75 -> 2 (code 4)
    packed, scales, _ = nvfp4.quantize(x)
    np.testing.assert_array_equal(scales, [[0x7E, 0x0B, 0x38]])
    assert packed[0, 16] == 0x37


def test_nvfp4_zero_tensor() -> None:
    packed, scales, s_dec = nvfp4.quantize(np.zeros((3, 20), dtype=np.float32))
    assert packed.shape == (3, 16) and scales.shape == (3, 2)
    assert np.all(packed == 0) and np.all(scales == 0)
    assert s_dec == F32(1) / FLT_MAX  # S = FLT_MAX for an all-zero tensor


def test_nvfp4_inf_and_nan() -> None:
    x = np.zeros((1, 32), dtype=np.float32)
    x[0, :2] = [np.inf, 3.0]
    x[0, 16:19] = [2.0, np.nan, -1.0]
    packed, scales, s_dec = nvfp4.quantize(x)
    # global amax inf -> S = 1. Block 0: d = inf -> 448, inf -> 6, 3/448 -> 0.
    # Block 1 (NaN skipped): d = 2/6 -> 0.34375 (0x2B), enc = 2.909: 2 -> 6, NaN -> 0, -1 -> -3.
    assert s_dec == 1.0
    np.testing.assert_array_equal(scales, [[0x7E, 0x2B]])
    np.testing.assert_array_equal(packed[0, [0, 8, 9]], [0x07, 0x07, 0x0D])


def test_nvfp4_subnormal_and_zero_block_scales() -> None:
    x = np.zeros((1, 48), dtype=np.float32)
    x[0, 0] = 2688.0  # S = 1
    x[0, 16:18] = [0.01, -0.005]  # d = 0.01/6 -> E4M3 subnormal 2^-9 (0x01), enc 512
    x[0, 32:34] = [0.005, -0.001]  # d = 0.005/6 rounds to 0: enc = FLT_MAX, data saturates
    packed, scales, s_dec = nvfp4.quantize(x)
    assert s_dec == 1.0
    np.testing.assert_array_equal(scales, [[0x7E, 0x01, 0x00]])
    np.testing.assert_array_equal(packed[0, [8, 16]], [0xD7, 0xF7])
    assert np.all(nvfp4.dequantize(packed, scales, s_dec, 48)[0, 32:] == 0)


def test_nvfp4_shapes_and_round_trip() -> None:
    x = wide_random((40, 70), 12)
    packed, scales, s_dec = nvfp4.quantize(x)
    assert packed.shape == (40, 40) and scales.shape == (40, 5)
    assert np.all(nvfp4.unpack(packed)[:, 70:] == 0)
    np.testing.assert_array_equal(nvfp4.pack(nvfp4.unpack(packed)), packed)
    deq = nvfp4.dequantize(packed, scales, s_dec, 70)
    assert deq.shape == (40, 70)
    step = np.repeat(fp8.decode_e4m3(scales), 16, axis=1)[:, :70] * s_dec
    normal = step >= 2.0**-6 * s_dec  # blocks whose E4M3 scale is normal
    assert np.all(np.abs(deq - x)[normal] <= 1.01 * step[normal])
    np.testing.assert_array_equal(nvfp4.swizzle(scales), mxfp8.swizzle_rowwise(scales))


def test_nvfp4_modes_differ_on_zero_blocks_and_signed_zero() -> None:
    x = np.zeros((1, 32), dtype=np.float32)
    x[0, :2] = [1.0, -0.0]
    _, te_scales, _ = nvfp4.quantize(x, "te")
    ao_packed, ao_scales, g = nvfp4.quantize(x, "torchao")
    np.testing.assert_array_equal(te_scales, [[0x7E, 0x00]])
    np.testing.assert_array_equal(ao_scales, [[0x7E, 0x08]])  # clamped below at 2^-6
    assert g == F32(1) / F32(2688)
    assert ao_packed[0, 0] == 0x87  # 1 -> 6 (code 7) and -0.0 -> code 8
    with pytest.raises(ValueError):
        nvfp4.quantize(np.zeros((1, 16), np.float32), "torchao")


# --------------------------------------------------------------------------- cuDNN


def test_round_up_e4m3() -> None:
    v = F32([0, 2.0**-10, 2.0**-9, 1.0, 1.0000001, 1.1666666, 448, 449, np.inf, np.nan])
    expected = [0x00, 0x01, 0x01, 0x38, 0x39, 0x3A, 0x7E, 0x7E, 0x7E, 0x7F]
    np.testing.assert_array_equal(cudnn_block.round_up_e4m3(v), expected)


def test_cudnn_nvfp4_like_hand_computed() -> None:
    x = np.zeros((5, 16), dtype=np.float32)
    x[0, :4] = [7.0, 1.0, -3.5, 0.6]  # 7/6 -> up to 1.25 (0x3A): 5.6 -> 6, 0.8 -> 1, -2.8 -> -3
    x[1, :2] = [6.0, 0.25]  # scale 1.0 (0x38): 0.25 ties to 0
    x[3, :2] = [3000.0, 1000.0]  # 500 -> saturates at 448: 6.7 -> 6, 2.23 -> 2
    x[4, 0] = 1e-5  # 1.7e-6 -> up to 2^-9 (0x01): 0.00512 -> 0
    y, s = cudnn_block.block_scale_quantize(x, 16, 1, "e2m1", "e4m3")
    np.testing.assert_array_equal(s[:, 0], [0x3A, 0x38, 0x00, 0x7E, 0x01])
    np.testing.assert_array_equal(y[0, :4], [0x7, 0x2, 0xD, 0x1])
    np.testing.assert_array_equal(y[1, :2], [0x7, 0x0])
    assert np.all(y[2] == 0) and y[4, 0] == 0
    np.testing.assert_array_equal(y[3, :2], [0x7, 0x4])
    deq = cudnn_block.block_scale_dequantize(y, s, 16, 1, "e2m1", "e4m3")
    np.testing.assert_array_equal(deq[0, :4], [7.5, 1.25, -3.75, 0.625])


def test_cudnn_mxfp8_like_hand_computed() -> None:
    x = np.zeros((4, 32), dtype=np.float32)
    x[0, 0] = 3.0  # 3/448 -> 2^-7 (120): 384 = 0x7C
    x[2, 0] = 1e-40  # v <= 2^-127 -> 0x00; 1e-40 / 2^-127 = 0.0170 -> 9 * 2^-9 (0x09)
    x[3, :2] = [np.inf, 3.0]  # inf -> 0xFE; inf saturates, 3 / 2^127 -> 0
    y, s = cudnn_block.block_scale_quantize(x, 32, 1, "e4m3", "e8m0")
    np.testing.assert_array_equal(s[:, 0], [120, 0, 0, 0xFE])
    np.testing.assert_array_equal(y[:, 0], [0x7C, 0x00, 0x09, 0x7E])
    assert y[3, 1] == 0
    # MXFP8 differs only where e == 0 (its multiplier is 1 there, so 1e-40 flushes to zero)
    codes, scales = mxfp8.quantize(x)
    np.testing.assert_array_equal(scales, s)
    np.testing.assert_array_equal(codes[[0, 1, 3]], y[[0, 1, 3]])
    assert codes[2, 0] == 0x00


@pytest.mark.parametrize("axis", [0, 1])
def test_cudnn_e4m3_e8m0_equals_mxfp8_on_normal_d(axis: int) -> None:
    x = wide_random((70, 90), 13)
    y, s = cudnn_block.block_scale_quantize(x, 32, axis, "e4m3", "e8m0")
    codes, scales = mxfp8.quantize(x, axis=axis)
    np.testing.assert_array_equal(y, codes)
    np.testing.assert_array_equal(s, scales)
    np.testing.assert_array_equal(
        cudnn_block.block_scale_dequantize(y, s, 32, axis, "e4m3", "e8m0"),
        mxfp8.dequantize(codes, scales, axis=axis),
    )


def test_cudnn_axis_zero_is_the_transpose() -> None:
    x = wide_random((40, 33), 14, lo=-8, hi=8)  # amax < 2688: the E4M3 scale does not saturate
    y0, s0 = cudnn_block.block_scale_quantize(x, 16, 0, "e2m1", "e4m3")
    y1, s1 = cudnn_block.block_scale_quantize(np.ascontiguousarray(x.T), 16, -1, "e2m1", "e4m3")
    assert y0.shape == (40, 33) and s0.shape == (3, 33)
    np.testing.assert_array_equal(y0, y1.T)
    np.testing.assert_array_equal(s0, s1.T)
    deq = cudnn_block.block_scale_dequantize(y0, s0, 16, 0, "e2m1", "e4m3")
    step = np.repeat(fp8.decode_e4m3(s0), 16, axis=0)[:40]
    assert np.all(np.abs(deq - x) <= step)  # half of the largest E2M1 gap (2) times the scale


# --------------------------------------------------------------------------- torchao peers


def _torchao_to_mx(x: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    pytest.importorskip("torchao")
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.mx_tensor import to_mx

    scaling = {"ceil": ScaleCalculationMode.RCEIL, "floor": ScaleCalculationMode.FLOOR}[mode]
    scale, data = to_mx(torch.from_numpy(x), torch.float8_e4m3fn, 32, scaling)
    return data.view(torch.uint8).numpy(), scale.view(torch.uint8).numpy().reshape(x.shape[0], -1)


@pytest.mark.parametrize("rounding", ["ceil", "floor"])
def test_mxfp8_matches_torchao_to_mx(rounding: str) -> None:
    x = wide_random((256, 128), 15, lo=-60, hi=60)
    x[0, :] = 0.0
    x[1, :32] = 448.0
    x[2, :32] = np.linspace(-480, 480, 32, dtype=np.float32)
    x[3, 0], x[4, 0] = np.inf, -FLT_MAX
    codes, scales = mxfp8.quantize(x, rounding=rounding)
    peer_codes, peer_scales = _torchao_to_mx(x, rounding)
    np.testing.assert_array_equal(scales, peer_scales)
    np.testing.assert_array_equal(codes, peer_codes)


def test_mxfp8_known_disagreements_with_torchao() -> None:
    x = np.zeros((3, 32), dtype=np.float32)
    x[0, :2] = [np.nan, 1.0]  # torchao propagates NaN into the amax
    x[1, 0] = np.nextafter(F32(1.75), F32(2))  # RCEIL via float32 log2 loses the last ulp
    x[2, 0] = 1e-40  # FLOOR e == 0: torchao divides by 2^-126, TE multiplies by 1
    codes, scales = mxfp8.quantize(x, rounding="ceil")
    peer_codes, peer_scales = _torchao_to_mx(x, "ceil")
    np.testing.assert_array_equal(scales[:2, 0], [119, 120])
    np.testing.assert_array_equal(peer_scales[:2, 0], [0xFF, 119])
    np.testing.assert_array_equal(codes[:2, :2], [[0x7F, 0x78], [0x76, 0x00]])
    np.testing.assert_array_equal(peer_codes[:2, :2], [[0x7F, 0x7F], [0x7E, 0x00]])
    codes, scales = mxfp8.quantize(x, rounding="floor")
    peer_codes, peer_scales = _torchao_to_mx(x, "floor")
    assert scales[2, 0] == peer_scales[2, 0] == 0
    assert codes[2, 0] == 0x00 and peer_codes[2, 0] == 0x04


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (128, 4), (130, 5), (257, 9), (300, 17)])
def test_swizzle_matches_torchao_to_blocked(shape: tuple[int, int]) -> None:
    pytest.importorskip("torchao")
    from torchao.prototype.mx_formats.utils import to_blocked

    s = np.random.default_rng(16).integers(0, 256, shape, dtype=np.uint8)
    peer = to_blocked(torch.from_numpy(s)).numpy()
    np.testing.assert_array_equal(mxfp8.swizzle_rowwise(s), peer)


def _torchao_nvfp4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pytest.importorskip("torchao")
    from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize, per_tensor_amax_to_scale

    t = torch.from_numpy(x)
    scales, data = nvfp4_quantize(t, 16, per_tensor_amax_to_scale(torch.max(torch.abs(t))))
    return data.view(torch.uint8).numpy(), scales.view(torch.uint8).numpy()


def test_nvfp4_torchao_mode_matches_nvfp4_quantize() -> None:
    x = wide_random((128, 64), 17, lo=-12, hi=12)
    x[0, :16] = 0.0
    x[1, :] = -0.0
    x[2, :16] *= 2.0**-30  # a block far below the global amax: scale clamped at 2^-6
    packed, scales, g = nvfp4.quantize(x, "torchao")
    peer_packed, peer_scales = _torchao_nvfp4(x)
    np.testing.assert_array_equal(scales, peer_scales)
    np.testing.assert_array_equal(packed, peer_packed)
    assert g == F32(np.abs(x).max()) / F32(2688)


def test_nvfp4_te_mode_disagrees_with_torchao_on_small_blocks() -> None:
    x = wide_random((128, 64), 18, lo=-12, hi=12)  # block amax spans 2^24
    te_packed, te_scales, _ = nvfp4.quantize(x, "te")
    peer_packed, peer_scales = _torchao_nvfp4(x)
    differ = te_scales != peer_scales
    assert differ.sum() > 100
    # every disagreement is torchao's lower clamp at 2^-6 (0x08); TE keeps a subnormal or zero
    assert np.all(peer_scales[differ] == 0x08) and np.all(te_scales[differ] < 0x08)
    agree = np.repeat(~differ, 8, axis=1)
    np.testing.assert_array_equal(te_packed[agree], peer_packed[agree])
