"""mxfp4's compiled quantize core vs the independent reference, bit for bit (packed codes and E8M0
scales), and its GEMM vs the reference's dequantized operands."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compiler
from tests.reference import mxfp4, mxfp8

SHAPES = [(2, 32), (5, 70), (33, 64)]
ROUNDINGS = ["ceil", "floor", "rne", "even"]


def check(x: np.ndarray, rounding: str = "ceil") -> None:
    q = compiler.quantize(x, "mxfp4", e8m0_rounding=rounding)
    packed, scales = mxfp4.quantize(x, rounding=rounding)
    np.testing.assert_array_equal(q.scale, scales, err_msg="E8M0 scales")
    np.testing.assert_array_equal(q.data, packed, err_msg="packed E2M1 codes")


floats = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)


@pytest.mark.parametrize("rounding", ROUNDINGS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_random_tensors_bit_exact(rounding: str, data: st.DataObject) -> None:
    shape = data.draw(st.sampled_from(SHAPES))
    scale = data.draw(st.sampled_from([1.0, 1e-30, 1e30]))
    x = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-1e4, 1e4, width=32)))
    check((x * np.float32(scale)).astype(np.float32), rounding)


@pytest.mark.parametrize("rounding", ROUNDINGS)
@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float32, (5, 70), elements=floats))
def test_arbitrary_bit_patterns_bit_exact(rounding: str, x: np.ndarray) -> None:
    check(x, rounding)


def _blocks(*rows: object) -> np.ndarray:
    return np.stack([np.resize(np.float32(r), 64) for r in rows]).astype(np.float32)


TIES = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, 6.5, 7.0, 12.0], np.float32)
EDGE_CASES = {
    "zero blocks": np.zeros((2, 64), np.float32),
    "signed zeros": _blocks([-0.0, 0.0, -0.0, 1.0], [-0.0]),
    "every E2M1 tie at every scale": _blocks(
        np.concatenate([TIES, -TIES]),
        np.concatenate([TIES, -TIES]) * 2.0**-20,
        np.concatenate([TIES, -TIES]) * 2.0**20,
    ),
    "max and just past it": _blocks([6.0, -6.0, 6.0001, -6.5, 3.0], [5.99, 7.0, -12.0, 1.0]),
    "amax at 1.75 * 2^k (even's boundary)": _blocks([1.75, 1.0], [1.7499999, -0.5], [3.5, 2.5]),
    "nan in a block": _blocks([np.nan, 1.0, -3.0], [np.nan], [1.0, 2.0]),
    "inf in a block": _blocks([np.inf, 1.0, -1e-30], [-np.inf, 5.0], [np.inf, -(2.0**100)]),
    "subnormals and tiny blocks": _blocks(
        [1e-45, -5e-40], [2.0**-125, 1e-38], [3e-36, -2e-36], [2.0**-126, 2.0**-149]
    ),
    "f32 extremes": _blocks([3.4e38, -1e-30], [1.17e-38, 2.0**-149], [2.0**127, 448.0]),
    "huge and tiny mixed": _blocks([1e30, 1e-30, -1.0, 7.0], [6e4, 1e-8, -2.5]),
}


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_cases_bit_exact(rounding: str, name: str) -> None:
    check(EDGE_CASES[name], rounding)


def test_a_nan_marks_its_block_not_its_neighbours() -> None:
    x = np.ones((2, 64), np.float32)
    x[0, 5] = np.nan  # row 0's first block only
    q = compiler.quantize(x, "mxfp4")
    assert q.scale[0, 0] == mxfp8.E8M0_NAN and (q.scale[0, 1] != mxfp8.E8M0_NAN)
    values = q.dequantize()
    assert np.isnan(values[0, :32]).all() and not np.isnan(values[0, 32:]).any()
    assert not np.isnan(values[1]).any()


@pytest.mark.parametrize("shape", [(3, 64), (130, 200), (1, 200), (1, 256)])
def test_swizzled_scales(shape: tuple[int, int]) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    compact = compiler.quantize(x, "mxfp4").scale
    swizzled = compiler.quantize(x, "mxfp4", swizzle=True).scale
    np.testing.assert_array_equal(swizzled, mxfp8.swizzle_rowwise(compact))


def test_columnwise_quantizes_the_transpose() -> None:
    x = np.random.default_rng(1).standard_normal((64, 40)).astype(np.float32)
    q = compiler.quantize(x, "mxfp4", usage="columnwise")
    packed, scales = mxfp4.quantize(x.T.copy())
    np.testing.assert_array_equal(q.data, packed)
    np.testing.assert_array_equal(q.scale, scales)


def test_dequantize_round_trip() -> None:
    x = np.random.default_rng(3).standard_normal((8, 96)).astype(np.float32)
    q = compiler.quantize(x, "mxfp4")
    expected = mxfp4.dequantize(q.data, q.scale, x.shape[1])
    np.testing.assert_array_equal(q.dequantize(), expected)
    amax = np.abs(x).reshape(8, 3, 32).max(-1, keepdims=True)
    error = np.abs(q.dequantize() - x).reshape(8, 3, 32)
    assert (error <= amax / 3).all()  # half a step at the top of E2M1's range, 2 of 6


@pytest.mark.parametrize("m,k,n", [(4, 64, 24), (3, 100, 8)])
def test_the_gemm_multiplies_the_dequantized_operands(m: int, k: int, n: int) -> None:
    """A linear layer under mxfp4: the same output as f32 matmuls of the reference's dequantized
    activation and weight (the products exact, sums in f32)."""
    import torch

    rng = np.random.default_rng(m * k)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    linear = torch.nn.Linear(k, n, bias=False)
    linear.weight.data = torch.from_numpy(w)
    art = compiler.compile(
        linear, (torch.from_numpy(x),), recipe="mxfp4", quantize_all_matmuls=True
    )
    xq = mxfp4.dequantize(*mxfp4.quantize(x), k).astype(np.float64)
    wq = mxfp4.dequantize(*mxfp4.quantize(w), k).astype(np.float64)
    expected = xq @ wq.T
    np.testing.assert_allclose(np.asarray(art(x)), expected, rtol=1e-5, atol=1e-5)


def test_nvfp4_options_are_refused_by_mxfp4() -> None:
    with pytest.raises(compiler.QmlirError, match="has no option 'scale_order'"):
        compiler.quantize(np.ones((1, 32), np.float32), "mxfp4", scale_order="te")


def test_cuda_is_refused_in_one_line() -> None:
    import torch

    linear = torch.nn.Linear(64, 8)
    with pytest.raises(compiler.QmlirError, match="'mxfp4' does not run on --target cuda yet"):
        compiler.compile(linear, (torch.randn(2, 64),), "mxfp4", target="cuda")
