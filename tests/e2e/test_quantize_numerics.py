"""fp8-current's compiled quantize core (compiler.quantize) vs the test reference, bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compiler
from tests.reference import fp8

SHAPES = [(1,), (7,), (64,), (3, 100)]


def check(x: np.ndarray, **options: object) -> None:
    q = compiler.quantize(x, "fp8-current", **options)
    codes, scale_inv = fp8.quantize_per_tensor(
        x,
        pow2=bool(options.get("force_pow2_scales", False)),
        epsilon=float(options.get("amax_epsilon", 0.0)),  # type: ignore[arg-type]
    )
    assert q.data.dtype == np.uint8 and q.data.shape == x.shape
    assert q.scale.dtype == np.float32
    np.testing.assert_array_equal(q.data, codes)
    assert q.scale.tobytes() == np.float32(scale_inv).tobytes()


floats = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)


@given(st.sampled_from(SHAPES).flatmap(lambda s: hnp.arrays(np.float32, s, elements=floats)))
def test_random_tensors_bit_exact(x: np.ndarray) -> None:
    check(x)


@given(
    st.sampled_from(SHAPES).flatmap(
        lambda s: hnp.arrays(np.float32, s, elements=st.floats(-1e6, 1e6, width=32))
    ),
    st.booleans(),
    st.sampled_from([0.0, 1e-3, 1.0, 100.0]),
)
def test_options_bit_exact(x: np.ndarray, pow2: bool, eps: float) -> None:
    check(x, force_pow2_scales=pow2, amax_epsilon=eps)


def _with_unit_scale(values: np.ndarray) -> np.ndarray:
    """Pads with 448 so amax = 448 and scale = 1: values reach the cast unscaled."""
    return np.concatenate([values.astype(np.float32), np.float32([448.0])])


EDGE_CASES = {
    "zeros": np.zeros(64, np.float32),
    "negative zeros": np.full(64, -0.0, np.float32),
    "every e4m3 tie": _with_unit_scale(fp8.e4m3_ties()),
    "subnormals": _with_unit_scale(np.arange(-40, 41, dtype=np.float32) * 2.0**-12),
    "f32 subnormal inputs": np.float32([1e-45, -1e-45, 1e-40, 3e-39, 0.0, 1e-44]),
    "max and just past it": np.float32([448, -448, 448.00003, 464, -464, 465, 479.9]),
    "infinities": np.float32([np.inf, -np.inf, 1.0, -2.0, 0.0]),
    "nan": np.float32([np.nan, 1.0, -3.0, np.nan, 0.25]),
    "all nan": np.full(8, np.nan, np.float32),
    "huge and tiny mixed": np.float32([3e38, -1e-30, 1e-38, 2.5, -1e20, 7e-45]),
    "tiny amax (scale overflows to FLT_MAX)": np.float32([1e-45, -1e-45, 0.0]),
}


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_cases_bit_exact(name: str) -> None:
    check(EDGE_CASES[name])


@pytest.mark.parametrize("name", ["every e4m3 tie", "max and just past it", "nan"])
def test_edge_cases_pow2_bit_exact(name: str) -> None:
    check(EDGE_CASES[name], force_pow2_scales=True)


def test_hybrid_quantizes_forward_tensors_as_e4m3() -> None:
    x = np.random.default_rng(0).standard_normal((3, 100)).astype(np.float32)
    a = compiler.quantize(x, "fp8-current", fp8_format="hybrid")
    b = compiler.quantize(x, "fp8-current", fp8_format="e4m3")
    np.testing.assert_array_equal(a.data, b.data)


def test_bf16_input_is_quantized_from_its_exact_f32_value() -> None:
    x = np.random.default_rng(1).standard_normal(64).astype(ml_dtypes.bfloat16)
    q = compiler.quantize(x, "fp8-current")
    codes, _ = fp8.quantize_per_tensor(x.astype(np.float32))
    np.testing.assert_array_equal(q.data, codes)


def test_dequantize_round_trip_is_close() -> None:
    x = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    q = compiler.quantize(x)
    np.testing.assert_allclose(q.dequantize(), x, rtol=2**-4, atol=1e-6)


def test_nan_propagates_and_does_not_raise_amax() -> None:
    q = compiler.quantize(np.float32([np.nan, 2.0]))
    assert q.data[0] == fp8.NAN_CODE
    assert q.scale == np.float32(2.0 / 448.0)


def test_non_float_input_is_refused() -> None:
    with pytest.raises(compiler.QmlirError, match="float32"):
        compiler.quantize(np.arange(4))


@pytest.mark.parametrize("offset", [0, 1])  # 64-byte aligned (read in place), or not (copied)
def test_the_input_is_read_in_place_or_copied_never_changed_or_kept(offset: int) -> None:
    """An aligned f32 input is handed to IREE as it is (no copy), a misaligned one copied first;
    either way the input is not written and the result does not share its memory."""
    raw = np.empty(64 * 256 + 64 + 4 * offset, np.uint8)
    start = -raw.ctypes.data % 64 + 4 * offset
    x = raw[start : start + 64 * 256].view(np.float32).reshape(64, 64)
    x[...] = np.random.default_rng(5).standard_normal((64, 64), dtype=np.float32)
    before = x.copy()
    q = compiler.quantize(x, "fp8-current")
    np.testing.assert_array_equal(x, before)
    codes = q.data.copy()
    x[...] = 0.0  # the caller's array changes after the call: the result keeps its own bytes
    np.testing.assert_array_equal(q.data, codes)
    np.testing.assert_array_equal(codes, fp8.quantize_per_tensor(before)[0])
