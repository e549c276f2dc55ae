"""mxfp8's compiled quantize core vs the independent reference, bit for bit (codes and scales)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compiler
from tests.reference import fp8, mxfp8

SHAPES = [(2, 32), (5, 70), (33, 64)]
ROUNDINGS = ["ceil", "floor", "rne", "even"]


def check(x: np.ndarray, rounding: str = "ceil", usage: str = "rowwise") -> None:
    q = compiler.quantize(x, "mxfp8", e8m0_rounding=rounding, usage=usage)
    codes, scales = mxfp8.quantize(x, axis=0 if usage == "columnwise" else 1, rounding=rounding)
    np.testing.assert_array_equal(q.scale, scales, err_msg="E8M0 scales")
    np.testing.assert_array_equal(q.data, codes, err_msg="E4M3 codes")


floats = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("usage", ["rowwise", "columnwise"])
@given(data=st.data())
def test_random_tensors_bit_exact(rounding: str, usage: str, data: st.DataObject) -> None:
    shape = data.draw(st.sampled_from(SHAPES))
    scale = data.draw(st.sampled_from([1.0, 1e-30, 1e30]))
    x = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-1e4, 1e4, width=32)))
    check((x * np.float32(scale)).astype(np.float32), rounding, usage)


@pytest.mark.parametrize("rounding", ROUNDINGS)
@given(x=hnp.arrays(np.float32, (5, 70), elements=floats))
def test_arbitrary_bit_patterns_bit_exact(rounding: str, x: np.ndarray) -> None:
    check(x, rounding)


@pytest.mark.parametrize("rounding", ROUNDINGS)
@given(x=hnp.arrays(np.float32, (5, 64), elements=floats))
def test_arbitrary_bit_patterns_whole_blocks_bit_exact(rounding: str, x: np.ndarray) -> None:
    check(x, rounding)  # K a multiple of 32: the lowering without padding


def _blocks(*rows: np.ndarray) -> np.ndarray:
    return np.stack([np.resize(np.float32(r), 64) for r in rows]).astype(np.float32)


EDGE_CASES = {
    "zero blocks": np.zeros((2, 64), np.float32),
    "ties at every scale": _blocks(
        fp8.e4m3_ties(), fp8.e4m3_ties() * 2.0**-20, fp8.e4m3_ties() * 2.0**20
    ),
    "powers of two (v exact)": _blocks(2.0 ** np.arange(-20, 20), -(2.0 ** np.arange(-9, 30))),
    "nan in a block": _blocks([np.nan, 1.0, -3.0], [np.nan]),
    "inf in a block": _blocks([np.inf, 1.0, 1e-3], [-np.inf, 5.0]),
    "subnormal v (amax near 448 * 2^-127)": _blocks(
        [448 * 2.0**-127, 1e-38], [448 * 2.0**-126 * 0.75], [3e-36, -2e-36], [1e-45, 5e-40]
    ),
    "f32 extremes": _blocks([3.4e38, -1e-30], [1.17e-38, 2.0**-149], [2.0**127, 448.0]),
    "huge and tiny mixed": _blocks([1e30, 1e-30, -1.0, 7.0], [6e4, 1e-8, -2.5]),
}


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_cases_bit_exact(rounding: str, name: str) -> None:
    check(EDGE_CASES[name], rounding)
    check(EDGE_CASES[name].T.copy(), rounding, "columnwise")


# (1, 200): one row (a decode step's activation), 7 scales: a zero fill and a strided insert
@pytest.mark.parametrize("shape", [(3, 64), (130, 200), (1, 200), (1, 256)])
def test_swizzled_scales(shape: tuple[int, int]) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    for usage, swizzle in [("rowwise", mxfp8.swizzle_rowwise), ("columnwise", _swizzle_columnwise)]:
        compact = compiler.quantize(x, "mxfp8", usage=usage).scale
        swizzled = compiler.quantize(x, "mxfp8", usage=usage, swizzle=True).scale
        np.testing.assert_array_equal(swizzled, swizzle(compact), err_msg=usage)


def _swizzle_columnwise(scales: np.ndarray) -> np.ndarray:
    return mxfp8.swizzle_columnwise(scales)


def test_dequantize_round_trip() -> None:
    x = np.random.default_rng(3).standard_normal((8, 96)).astype(np.float32)
    q = compiler.quantize(x, "mxfp8")
    np.testing.assert_array_equal(q.dequantize(), mxfp8.dequantize(q.data, q.scale, axis=1))
    assert np.abs(q.dequantize() - x).max() <= np.abs(x).max() * 2**-3


def test_fp8_block_options_are_refused_by_mxfp8() -> None:
    with pytest.raises(compiler.QmlirError, match="has no option 'pow2_scales'"):
        compiler.quantize(np.ones((1, 32), np.float32), "mxfp8", pow2_scales=True)
