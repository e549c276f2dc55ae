"""fp8-rowwise's compiled quantize core vs the independent reference, bit for bit, and the
recipe on a model: per-token activations and per-channel weights, dynamic rows included."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compiler
from tests.reference import fp8, fp8_block

SHAPES = [(3, 128), (5, 200), (130, 70)]


def check(
    x: np.ndarray, usage: str = "rowwise", role: str = "activation", **options: object
) -> None:
    q = compiler.quantize(x, "fp8-rowwise", role=role, usage=usage, **options)
    pow2 = bool(options.get("pow2_scales", False))
    eps = float(options.get("amax_epsilon", 0.0))  # type: ignore[arg-type]
    axis = 0 if usage == "columnwise" else 1
    codes, scale_inv = fp8_block.quantize_rows(x, axis=axis, pow2=pow2, eps=eps)
    np.testing.assert_array_equal(q.scale.view(np.uint32), scale_inv.view(np.uint32))
    np.testing.assert_array_equal(q.data, codes)
    block = (1, x.shape[1]) if axis == 1 else (x.shape[0], 1)
    want = fp8_block.dequantize(codes, scale_inv, block)
    np.testing.assert_array_equal(q.dequantize().view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize(
    ("usage", "role"),
    [("rowwise", "activation"), ("columnwise", "activation"), ("rowwise", "weight")],
)
@settings(max_examples=25)  # the quantize core is fp8-block's; only the block differs
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
@settings(max_examples=40)
def test_bit_patterns_and_options_bit_exact(x: np.ndarray, pow2: bool, eps: float) -> None:
    check(x, pow2_scales=pow2, amax_epsilon=eps)


EDGE = np.zeros((3, 256), np.float32)
EDGE[0, :255] = np.resize(fp8.e4m3_ties(), 255)
EDGE[0, 255] = 448.0  # amax 448: scale 1, every tie reaches the cast unscaled
EDGE[1, :8] = [np.nan, np.inf, -1.0, 1e-40, 1e-45, -3e-39, 0.0, -0.0]  # amax inf: scale 1
EDGE[2, :3] = [np.nan, 0.0, -0.0]  # amax 0 (NaN ignored): scale 1


@pytest.mark.parametrize("pow2", [True, False])
def test_edge_cases_bit_exact(pow2: bool) -> None:
    check(EDGE, pow2_scales=pow2)
    check(EDGE.T.copy(), usage="columnwise", pow2_scales=pow2)
    check(EDGE, role="weight", pow2_scales=pow2)


def test_a_model_quantized_per_token_and_per_channel() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(300, 256), torch.nn.GELU(), torch.nn.Linear(256, 64)
    )
    x = torch.randn(16, 300)
    batch = torch.export.Dim("batch", min=1, max=64)
    art = compiler.compile(model, (x,), "fp8-rowwise", dynamic_shapes=({0: batch},))
    want = model(x).detach().numpy()
    got = art(x.numpy())
    sqnr = 10 * np.log10((want**2).sum() / ((want - got) ** 2).sum())
    assert sqnr > 24, sqnr
    assert all(layer.recipe == "fp8-rowwise" for layer in art.record.layers)
    # a row's scale is its own: each row's output does not depend on the other rows
    np.testing.assert_array_equal(art(x.numpy()[3:5]), got[3:5])
