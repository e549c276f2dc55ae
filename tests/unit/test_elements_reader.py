"""Reading weight literals back from IR (bf16 needs the printed form: the bindings cannot)."""

import ml_dtypes
import numpy as np
from iree.compiler import ir

from passes.ir.elements import elements_to_numpy


def _bf16_attr(values: np.ndarray) -> ir.Attribute:
    return ir.DenseElementsAttr.get(
        values.view(np.int16), type=ir.BF16Type.get(), shape=list(values.shape)
    )


def test_bf16_small_list_form_with_specials() -> None:
    values = np.array([1.0, -2.0, np.inf, -np.inf, np.nan, 1e-39, 0.1], np.float32)
    bf16 = values.astype(ml_dtypes.bfloat16)
    with ir.Context():
        got = elements_to_numpy(_bf16_attr(bf16))
    np.testing.assert_array_equal(got.view(np.uint16), bf16.view(np.uint16))


def test_bf16_hex_blob_form() -> None:
    bf16 = np.random.default_rng(0).standard_normal((40, 30)).astype(ml_dtypes.bfloat16)
    with ir.Context():
        attr = _bf16_attr(bf16)
        assert '"0x' in str(attr)
        got = elements_to_numpy(attr)
    np.testing.assert_array_equal(got.view(np.uint16), bf16.view(np.uint16))


def test_splats_and_f32() -> None:
    with ir.Context():
        splat = elements_to_numpy(ir.Attribute.parse("dense<1.5> : tensor<2x3xbf16>"))
        f32 = elements_to_numpy(ir.Attribute.parse("dense<[[1.0, 2.0]]> : tensor<1x2xf32>"))
        f32_splat = elements_to_numpy(ir.Attribute.parse("dense<-0.5> : tensor<4xf32>"))
    assert splat.shape == (2, 3) and (splat.astype(np.float32) == 1.5).all()
    np.testing.assert_array_equal(f32, np.float32([[1.0, 2.0]]))
    np.testing.assert_array_equal(f32_splat, np.full(4, -0.5, np.float32))
