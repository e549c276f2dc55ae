"""A peer for training: torchao's ``Float8Linear`` with tensorwise dynamic scaling (E4M3 forward,
E5M2 gradients; ``emulate=True`` runs on the CPU) against qmlir ``fp8-current`` with
``fp8_format=hybrid``, step by step: the loss and every gradient agree to f32 rounding. Where
their semantics differ (docs/numerics.md, "training against torchao"), the difference is
asserted here."""

from __future__ import annotations

import copy
import logging
import math

import numpy as np
import pytest
import torch

import compiler
from tests.e2e.test_training import _setup

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

logging.getLogger("torchao").setLevel(logging.ERROR)  # its CUDA kernels do not load here
float8 = pytest.importorskip("torchao.float8")
float8_utils = pytest.importorskip("torchao.float8.float8_utils")


def test_loss_and_gradients_match_torchao_step_by_step() -> None:
    """Each step from the same parameters (torchao's, loaded into the step first): the loss
    and gradients agree to f32 rounding, except where that rounding moves a value across an
    FP8 rounding boundary (E5M2 has two mantissa bits: one flipped gradient code moves its
    value by up to 25%); the first step here has none."""
    model, x, y = _setup()
    step = compiler.compile_training(
        model, (x, y), "fp8-current", optimizer="sgd", lr=0.1, fp8_format="hybrid"
    )
    peer = copy.deepcopy(model)
    float8.convert_to_float8_training(peer, config=float8.Float8LinearConfig(emulate=True))
    optimizer = torch.optim.SGD(peer.parameters(), lr=0.1)
    for i in range(4):
        xi = x * (1 + 0.5 * i)  # a new amax every step
        step.load_parameters(dict(peer.named_parameters()))
        loss = float(step(xi, y))
        optimizer.zero_grad()
        expected = peer(xi, y)
        expected.backward()
        # torchao's emulated GEMM multiplies dequantized f32 values (code x 1/scale, rounded);
        # qmlir multiplies the codes and scales the f32 sum
        assert math.isclose(loss, expected.item(), rel_tol=1e-4 if i else 1e-6)
        grads = step.gradients()
        for name, p in peer.named_parameters():
            rel = float((grads[name] - p.grad).norm() / p.grad.norm())
            assert rel < (1e-2 if i else 1e-6), (i, name, rel)
        optimizer.step()


@pytest.mark.parametrize(
    ("dtype", "role"), [(torch.float8_e4m3fn, "activation"), (torch.float8_e5m2, "gradient")]
)
def test_casts_are_bit_identical(dtype: torch.dtype, role: str) -> None:
    """On finite tensors, torchao's tensorwise cast (scale in f64, then f32; saturate; RNE)
    writes qmlir's codes, and its scale is the reciprocal of qmlir's scale_inv."""
    rng = np.random.default_rng(4)
    for magnitude in (1e-3, 1.0, 300.0, 1e6):
        x = (rng.standard_normal((16, 64)) * magnitude).astype(np.float32)
        q = compiler.quantize(x, "fp8-current", role=role, fp8_format="hybrid")
        scale = float8_utils.tensor_to_scale(torch.from_numpy(x), dtype)
        codes = float8_utils.to_fp8_saturated(torch.from_numpy(x) * scale, dtype)
        np.testing.assert_array_equal(q.data, codes.view(torch.uint8).numpy())
        assert q.scale == np.float32(1.0) / np.float32(scale.item())


def _torchao_cast(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scale = float8_utils.tensor_to_scale(x, torch.float8_e4m3fn)
    return scale, float8_utils.to_fp8_saturated(x * scale, torch.float8_e4m3fn)


def test_where_their_semantics_differ() -> None:
    # a NaN element: qmlir (TE) leaves it out of the amax, so only that element is NaN;
    # torchao's amax is NaN, and so is its scale and every element
    x = torch.tensor([1.0, float("nan"), 2.0, -4.0])
    q = compiler.quantize(x.numpy(), "fp8-current")
    assert np.isfinite(q.scale) and q.scale == np.float32(4.0 / 448.0)
    assert (q.data == 0x7F).tolist() == [False, True, False, False]
    scale, codes = _torchao_cast(x)
    assert torch.isnan(scale) and torch.isnan(codes.float()).all()
    # an infinite element: TE's rule keeps the scale at 1 (finite values cast as they are, inf
    # saturates to 448); torchao's scale is 448 / inf = 0, which sends inf to NaN and the rest to 0
    x = torch.tensor([1.0, float("inf"), 2.0])
    q = compiler.quantize(x.numpy(), "fp8-current")
    assert q.scale == np.float32(1.0)
    assert q.data.tolist() == [0x38, 0x7E, 0x40]  # 1.0, 448 (saturated), 2.0
    scale, codes = _torchao_cast(x)
    assert scale == 0.0 and torch.isnan(codes.float()[1]) and codes.float()[0] == 0.0
    # an all-zero tensor: TE's scale is 1 (scale_inv 1), torchao clamps the amax to 1e-12
    # (scale 4.48e14); the codes are zeros either way, so are the GEMMs that read them
    x = torch.zeros(4)
    q = compiler.quantize(x.numpy(), "fp8-current")
    assert q.scale == np.float32(1.0) and not q.data.any()
    scale, codes = _torchao_cast(x)
    assert math.isclose(float(scale), 448.0 / 1e-12, rel_tol=1e-6) and not codes.float().any()
