"""cuDNN's block_scale_quantize / block_scale_dequantize vs the independent reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compiler
from tests.reference import cudnn_block as ref
from tests.reference import mxfp8

COMBOS = [(32, "e4m3", "e8m0"), (16, "e2m1", "e4m3"), (16, "e4m3", "e4m3"), (32, "e2m1", "e8m0")]


def check(x: np.ndarray, block: int, out: str, scale: str, axis: int = -1) -> None:
    y, s = compiler.block_scale_quantize(x, block, axis, out_dtype=out, scale_dtype=scale)
    ry, rs = ref.block_scale_quantize(x, block, axis, out, scale)
    np.testing.assert_array_equal(s, rs, err_msg="scales")
    np.testing.assert_array_equal(y, ry, err_msg="data")
    back = compiler.block_scale_dequantize(y, s, block, axis, out_dtype=out, scale_dtype=scale)
    expected = ref.block_scale_dequantize(ry, rs, block, axis, out, scale)
    np.testing.assert_array_equal(back.view(np.uint32), expected.view(np.uint32))


@pytest.mark.parametrize(("block", "out", "scale"), COMBOS)
@settings(max_examples=15)
@given(
    x=hnp.arrays(
        np.float32, (5, 70), elements=st.floats(width=32, allow_nan=True, allow_infinity=True)
    ),
    axis=st.sampled_from([-1, 0]),
)
def test_random_bit_patterns(block: int, out: str, scale: str, x: np.ndarray, axis: int) -> None:
    check(x, block, out, scale, axis)


EDGE = np.stack(
    [
        np.resize(np.float32([0.0, -0.0]), 64),
        np.resize(np.float32([1e-40, -3e-39, 1e-45, 2e-38]), 64),
        np.resize(np.float32([448.0, 449.0, -1e30, 3e38]), 64),
        np.resize(np.float32([np.nan, 1.0, np.inf, -2.0]), 64),
        np.resize(np.float32([6.0, 0.25, -0.75, 2.5, 5.0]), 64),
        np.resize(np.float32([1e-36, -5e-37, 3e-36]), 64),
    ]
)


@pytest.mark.parametrize(("block", "out", "scale"), COMBOS)
def test_edge_cases(block: int, out: str, scale: str) -> None:
    check(EDGE, block, out, scale)
    check(EDGE.T.copy(), block, out, scale, axis=0)


def test_dequantize_of_every_e4m3_code_at_every_e8m0_scale() -> None:
    """E4M3 codes with E8M0 scales in 1x32 blocks along whole rows take the elementwise
    lowering (an FP8 KV cache's layout): every code times every scale (subnormal products,
    overflow to inf, 0xFF scales, NaN codes) as the reference computes them."""
    codes = np.tile(np.arange(256, dtype=np.uint8), (256, 1))  # [scale, code]
    scales = np.repeat(np.arange(256, dtype=np.uint8)[:, None], 8, axis=1)
    back = compiler.block_scale_dequantize(codes, scales, 32, out_dtype="e4m3", scale_dtype="e8m0")
    expected = ref.block_scale_dequantize(codes, scales, 32, -1, "e4m3", "e8m0")
    np.testing.assert_array_equal(back.view(np.uint32), expected.view(np.uint32))
    assert (back[1:8, 1:8] != 0).all() and np.isinf(back[254, 0x7E])  # subnormal, overflow


def test_mxfp8_combination_equals_the_mxfp8_recipe_on_ordinary_data() -> None:
    """E4M3/E8M0 in blocks of 32 is MXFP8; cuDNN divides where TE multiplies, same bytes here."""
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    y, s = compiler.block_scale_quantize(x, 32)
    codes, scales = mxfp8.quantize(x)
    np.testing.assert_array_equal(y, codes)
    np.testing.assert_array_equal(s, scales)


def test_transpose_and_defaults() -> None:
    x = np.random.default_rng(1).standard_normal((4, 48)).astype(np.float32)
    y, s = compiler.block_scale_quantize(x, 16)  # 16 -> E2M1 data, E4M3 scales
    yt, st_ = compiler.block_scale_quantize(x, 16, transpose=True)
    np.testing.assert_array_equal(yt, y.T)
    np.testing.assert_array_equal(st_, s.T)
    ry, rs = ref.block_scale_quantize(x, 16, -1, "e2m1", "e4m3")
    np.testing.assert_array_equal(y, ry)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"block_size": 0}, "block_size must be a positive integer"),
        ({"block_size": 32, "axis": 2}, "axis must be"),
        ({"block_size": 32, "out_dtype": "e5m2"}, "out_dtype must be one of e4m3, e2m1"),
        ({"block_size": 32, "scale_dtype": "float32"}, "scale_dtype must be one of"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(compiler.QmlirError, match=message):
        compiler.block_scale_quantize(np.ones((2, 32), np.float32), **kwargs)  # type: ignore[arg-type]


def test_dequantize_checks_scale_shape() -> None:
    with pytest.raises(compiler.QmlirError, match="scale has shape"):
        compiler.block_scale_dequantize(np.zeros((2, 64), np.uint8), np.zeros((2, 3), np.uint8))


@pytest.mark.parametrize(("block", "out", "scale"), COMBOS)
def test_blocks_of_f32_subnormals(block: int, out: str, scale: str) -> None:
    """A block whose amax is an f32 subnormal: cuDNN's f32 ``amax / vmax`` is a non-zero
    subnormal, rounded up into the smallest scale (E4M3: code 1), not flushed to a zero scale
    (IREE's workers flush subnormal operands of f32 arithmetic)."""
    tiny = np.float32(2.4e-43)
    x = np.full((3, 2 * block), tiny, np.float32)
    x[1] = -x[1]
    x[2, ::3] = np.float32(np.finfo(np.float32).smallest_subnormal)
    check(x, block, out, scale)
