"""fp8-block's compiled quantize core vs the independent reference, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compiler
from tests.reference import fp8, fp8_block

SHAPES = [(3, 128), (5, 200), (130, 70), (128, 256)]  # the last: whole 128x128 tiles


def check(
    x: np.ndarray, usage: str = "rowwise", role: str = "activation", **options: object
) -> None:
    q = compiler.quantize(x, "fp8-block", role=role, usage=usage, **options)
    pow2 = bool(options.get("pow2_scales", True))
    eps = float(options.get("amax_epsilon", 0.0))  # type: ignore[arg-type]
    two_d = role == "weight" and options.get("w_block_scaling_dim", 2) == 2
    if two_d:  # 128x128 tiles: the same grid whichever way the weight is used
        codes, scale_inv = fp8_block.quantize_2d(x, pow2=pow2, eps=eps)
    else:
        axis = 0 if usage == "columnwise" else 1
        codes, scale_inv = fp8_block.quantize_1d(x, axis=axis, pow2=pow2, eps=eps)
    np.testing.assert_array_equal(q.scale.view(np.uint32), scale_inv.view(np.uint32))
    np.testing.assert_array_equal(q.data, codes)


@pytest.mark.parametrize(
    ("usage", "role"),
    [("rowwise", "activation"), ("columnwise", "activation"), ("rowwise", "weight")],
)
@given(data=st.data())
def test_random_tensors_bit_exact(usage: str, role: str, data: st.DataObject) -> None:
    shape = data.draw(st.sampled_from(SHAPES))
    scale = data.draw(st.sampled_from([1.0, 1e-30, 1e30]))
    x = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-1e4, 1e4, width=32)))
    check((x * np.float32(scale)).astype(np.float32), usage, role)


@given(
    x=hnp.arrays(
        np.float32, (5, 200), elements=st.floats(width=32, allow_nan=True, allow_infinity=True)
    ),
    pow2=st.booleans(),
    eps=st.sampled_from([0.0, 1e-3, 10.0]),
)
def test_bit_patterns_and_options_bit_exact(x: np.ndarray, pow2: bool, eps: float) -> None:
    check(x, pow2_scales=pow2, amax_epsilon=eps)


EDGE = np.zeros((2, 256), np.float32)
EDGE[0, :128] = np.resize(fp8.e4m3_ties(), 128)
EDGE[0, 127] = 448.0  # amax 448: scale 1, ties reach the cast unscaled
EDGE[1, :4] = [np.nan, np.inf, -1.0, 1e-40]
EDGE[1, 128:132] = [1e-45, -3e-39, 0.0, -0.0]


@pytest.mark.parametrize("pow2", [True, False])
def test_edge_cases_bit_exact(pow2: bool) -> None:
    check(EDGE, pow2_scales=pow2)
    check(EDGE.T.copy(), usage="columnwise", pow2_scales=pow2)
    check(EDGE, role="weight", pow2_scales=pow2)


# a weight of whole 128x128 tiles, read as its tiles (block_quantize_tiles.mlir): every tie in
# one tile, NaN, infinity and subnormals in another, the largest value in the last
TILES = np.random.default_rng(5).standard_normal((256, 384)).astype(np.float32)
TILES[0, :128] = np.resize(fp8.e4m3_ties(), 128)
TILES[130, 200:205] = [np.nan, np.inf, -1e-40, 1e-45, -0.0]
TILES[255, 383] = -1344.0


@pytest.mark.parametrize("pow2", [True, False])
@pytest.mark.parametrize("scale", [1.0, 1e-35, 1e35])
def test_whole_tiles_bit_exact(pow2: bool, scale: float) -> None:
    check((TILES * np.float32(scale)).astype(np.float32), role="weight", pow2_scales=pow2)


@pytest.mark.parametrize(
    ("usage", "role", "expected"),
    [
        ("rowwise", "activation", lambda s: fp8_block.gemm_ready_1d(s, axis=1)),
        ("columnwise", "activation", lambda s: fp8_block.gemm_ready_1d(s, axis=0)),
        ("rowwise", "weight", fp8_block.gemm_ready_2d),
    ],
)
def test_gemm_ready_layouts(usage, role, expected) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(0).standard_normal((130, 300)).astype(np.float32)
    compact = compiler.quantize(x, "fp8-block", role=role, usage=usage).scale
    ready = compiler.quantize(x, "fp8-block", role=role, usage=usage, swizzle=True).scale
    np.testing.assert_array_equal(ready, expected(compact))


def test_two_d_by_two_d_is_refused() -> None:
    with pytest.raises(compiler.QmlirError, match="2D x 2D"):
        compiler.quantize(np.ones((1, 128), np.float32), "fp8-block", x_block_scaling_dim=2)
