"""nvfp4's compiled quantize core vs the independent reference (TE's order), bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compiler
from tests.reference import nvfp4

SHAPES = [(2, 16), (5, 70), (33, 48)]


def check(x: np.ndarray, usage: str = "rowwise") -> None:
    q = compiler.quantize(x, "nvfp4", usage=usage)
    source = x.T.copy() if usage == "columnwise" else x
    packed, scales, s_dec = nvfp4.quantize(source)
    assert q.global_scale is not None
    assert q.global_scale.tobytes() == np.float32(s_dec).tobytes()
    np.testing.assert_array_equal(q.scale, scales, err_msg="E4M3 block scales")
    np.testing.assert_array_equal(q.data, packed, err_msg="packed E2M1 data")


@pytest.mark.parametrize("usage", ["rowwise", "columnwise"])
@given(data=st.data())
def test_random_tensors_bit_exact(usage: str, data: st.DataObject) -> None:
    shape = data.draw(st.sampled_from(SHAPES))
    scale = data.draw(st.sampled_from([1.0, 1e-30, 1e30]))
    x = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-1e4, 1e4, width=32)))
    check((x * np.float32(scale)).astype(np.float32), usage)


@given(
    x=hnp.arrays(
        np.float32, (5, 70), elements=st.floats(width=32, allow_nan=True, allow_infinity=True)
    )
)
def test_arbitrary_bit_patterns_bit_exact(x: np.ndarray) -> None:
    check(x)


@given(
    x=hnp.arrays(
        np.float32, (5, 64), elements=st.floats(width=32, allow_nan=True, allow_infinity=True)
    )
)
def test_arbitrary_bit_patterns_whole_blocks_bit_exact(x: np.ndarray) -> None:
    check(x)  # K a multiple of 16: the gather-free lowering


def _rows(*rows: list[float]) -> np.ndarray:
    return np.stack([np.resize(np.float32(r), 32) for r in rows]).astype(np.float32)


EDGE_CASES = {
    "zeros": np.zeros((2, 32), np.float32),
    "every e2m1 tie": _rows([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0], [-0.25, -2.5, -5, 6]),
    "negative zero and tiny negatives": _rows([-0.0, 0.0, 6.0, -1e-3], [-0.0, -1e-30, 1.0]),
    "nan and inf": _rows([np.nan, 1.0, -2.0, 6.0], [np.inf, 1.0, -3.0], [-np.inf, 0.5]),
    "f32 subnormal tensor": _rows([1e-40, -3e-39, 1e-45, 0.0], [2e-38, -1e-44]),
    "tiny global amax": _rows([1e-36, -2e-36, 5e-37], [3e-37, 1e-38]),
    "huge": _rows([3e38, -1e38, 1.0], [1e30, 6.0]),
    "mixed block scales": _rows([1e4, 1e-4, 1.0, -7.0], [1e-4, 2e-4, -3e-4]),
    # enc about 2^-125.2 (a 3e38 block): |x * enc| <= 2^-150 (an IEEE zero, code 0) up to about
    # 3.5e-8, a negative subnormal product (code 8) above; the CPU flushes both to zero
    "products around 2^-150": _rows(
        [3e38, -1e-8, -3.4e-8, -3.5e-8, -3.6e-8, -4e-8, -1e-7, 2e-7, -1.0, -5e-39]
    ),
    # a block of subnormals with a huge enc: products well inside E2M1's range, every tie
    "subnormal x, huge enc": np.float32(
        [[2**-126, -(2**-127), 3 * 2**-130, 2**-128 * 1.5, -(2**-129), 2**-149, -(2**-148), 0.0]]
        * 4
    ).reshape(2, 16),
}


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_cases_bit_exact(name: str) -> None:
    check(EDGE_CASES[name])


def _last_zero_product(enc: np.float32) -> np.float32:
    """The largest f32 t with t * enc an IEEE zero (numpy multiplies with subnormals)."""
    t = np.float32(2.0**-150 / float(enc))
    while t > 0 and t * enc != 0:
        t = np.nextafter(t, np.float32(0))
    while np.nextafter(t, np.float32(1)) * enc == 0:
        t = np.nextafter(t, np.float32(1))
    return t


# one block of amax A: enc = 6 / A, give or take the scales' rounding; the last x with a zero
# product is a normal f32 (A = 3e38), 2^-149 * 2^19 (A = 6 * 2^20) or below every subnormal
@pytest.mark.parametrize("amax", [3e38, 1e30, 6.0 * 2**20, 6.0, 6.0 * 2**-100])
def test_negative_sign_at_the_zero_product_threshold(amax: float) -> None:
    """x just at and just past the largest |x| whose product rounds to zero: -0 becomes code 0,
    a negative subnormal product code 8 (TE), decided exactly on either side."""
    from tests.reference import fp8

    probe = compiler.quantize(np.float32([[amax] + [0.0] * 15]), "nvfp4")
    assert probe.global_scale is not None
    enc = np.float32(1.0) / (fp8.decode_e4m3(probe.scale) * probe.global_scale).astype(np.float32)
    enc = np.minimum(enc, np.finfo(np.float32).max).astype(np.float32)[0, 0]
    t = _last_zero_product(enc)
    up = np.nextafter(t, np.float32(1))
    near = [t, up, np.nextafter(up, np.float32(1)), np.nextafter(t, np.float32(0))]
    x = np.float32([[amax] + [-v for v in near] + [v for v in near] + [-0.0] * 7])
    check(x)
    codes = nvfp4.unpack(compiler.quantize(x, "nvfp4").data)[0]
    assert codes[1] == 0 and codes[2] == 8  # the threshold itself: the test reaches both sides


def test_swizzled_block_scales_and_nd_input() -> None:
    x = np.random.default_rng(1).standard_normal((2, 65, 48)).astype(np.float32)
    q = compiler.quantize(x, "nvfp4")
    assert q.data.shape == (2, 65, 24)
    flat = x.reshape(130, 48)
    packed, scales, _ = nvfp4.quantize(flat)
    np.testing.assert_array_equal(q.data.reshape(130, 24), packed)
    swizzled = compiler.quantize(x, "nvfp4", swizzle=True).scale
    np.testing.assert_array_equal(swizzled, nvfp4.swizzle(scales))
    row = x[0, :1]  # one row (a decode step's activation): 3 scales, one tile's padding
    swizzled = compiler.quantize(row, "nvfp4", swizzle=True).scale
    np.testing.assert_array_equal(swizzled, nvfp4.swizzle(nvfp4.quantize(row)[1]))


@given(
    x=hnp.arrays(np.float32, (5, 70), elements=st.floats(-1e6, 1e6, width=32)).filter(
        lambda a: bool(np.abs(a).max() > 0)
    )
)
def test_torchao_order_bit_exact(x: np.ndarray) -> None:
    q = compiler.quantize(x, "nvfp4", scale_order="torchao")
    packed, scales, g = nvfp4.quantize(x, "torchao")
    assert q.global_scale is not None and q.global_scale.tobytes() == np.float32(g).tobytes()
    np.testing.assert_array_equal(q.scale, scales)
    np.testing.assert_array_equal(q.data, packed)


@pytest.mark.models
def test_torchao_order_compiles_a_model() -> None:
    import torch

    from compiler.analysis.metrics import compare
    from tests.e2e.models import tiny

    model, inputs = tiny.variants()
    art = compiler.compile(model, inputs, "nvfp4", scale_order="torchao")
    with torch.no_grad():
        ref = model(*inputs).numpy()
    assert compare(ref, art(*inputs).numpy()).sqnr_db >= 20.0
    assert art.metadata["recipe"]["options"] == {"scale_order": "torchao"}
