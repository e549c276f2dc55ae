"""The compiled quantize cores against a peer library that runs on the CPU (torchao 0.18.0).

Where the peers disagree with TE (qmlir's default), the difference is asserted, not hidden:
docs/numerics.md lists each one.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import compiler

torchao = pytest.importorskip("torchao")


def _wide(shape: tuple[int, int], seed: int, lo: int, hi: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    magnitude = 2.0 ** rng.uniform(lo, hi, shape)
    return (rng.choice([-1.0, 1.0], shape) * magnitude).astype(np.float32)


def _to_mx(
    x: np.ndarray, rounding: str, elem: torch.dtype = torch.float8_e4m3fn
) -> tuple[np.ndarray, np.ndarray]:
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.mx_tensor import to_mx

    mode = {
        "ceil": ScaleCalculationMode.RCEIL,
        "floor": ScaleCalculationMode.FLOOR,
        "even": ScaleCalculationMode.EVEN,
    }[rounding]
    scale, data = to_mx(torch.from_numpy(x), elem, 32, mode)
    return data.view(torch.uint8).numpy(), scale.view(torch.uint8).numpy().reshape(x.shape[0], -1)


@pytest.mark.parametrize("rounding", ["ceil", "floor", "even"])
def test_mxfp4_matches_torchao_to_mx(rounding: str) -> None:
    """mxfp4's ceil = torchao RCEIL, floor = FLOOR, even = EVEN, packed codes and scales, on
    data without NaN, -0.0 or e = 0 blocks (tests/reference/mxfp4.py lists those)."""
    x = _wide((64, 128), 2, -40, 40)
    x[1, :32] = 6.0
    x[2, :32] = np.linspace(-7, 7, 32, dtype=np.float32)
    x[3, :32] = 1.75 * 2.0 ** np.arange(-8, 24)  # even's boundary, block by block
    q = compiler.quantize(x, "mxfp4", e8m0_rounding=rounding)
    peer_codes, peer_scales = _to_mx(x, rounding, torch.float4_e2m1fn_x2)
    np.testing.assert_array_equal(q.scale, peer_scales)
    np.testing.assert_array_equal(q.data, peer_codes)


@pytest.mark.parametrize("rounding", ["ceil", "floor", "even"])
def test_mxfp8_matches_torchao_to_mx(rounding: str) -> None:
    """ceil = torchao RCEIL, floor = torchao FLOOR, even = torchao EVEN (on data without NaN or
    e = 0 blocks)."""
    x = _wide((128, 128), 1, -40, 40)
    x[0] = 0.0
    x[1, :32] = 448.0
    x[2, :32] = np.linspace(-480, 480, 32, dtype=np.float32)
    x[3, 0] = np.inf
    q = compiler.quantize(x, "mxfp8", e8m0_rounding=rounding)
    peer_codes, peer_scales = _to_mx(x, rounding)
    np.testing.assert_array_equal(q.scale, peer_scales)
    np.testing.assert_array_equal(q.data, peer_codes)


def test_mxfp8_nan_blocks_differ_from_torchao() -> None:
    """TE skips NaN in a block's amax; torchao lets it poison the block (scale 0xFF, all NaN)."""
    x = np.ones((1, 32), np.float32)
    x[0, 0] = np.nan
    q = compiler.quantize(x, "mxfp8")
    peer_codes, peer_scales = _to_mx(x, "ceil")
    assert q.scale[0, 0] == 119 and peer_scales[0, 0] == 0xFF  # 1/448 rounds up to 2^-8
    assert q.data[0, 0] == 0x7F and q.data[0, 1] == 0x78 and (peer_codes == 0x7F).all()


@pytest.mark.parametrize("shape", [(5, 64), (130, 160), (300, 96)])
def test_swizzle_matches_torchao_to_blocked(shape: tuple[int, int]) -> None:
    from torchao.prototype.mx_formats.utils import to_blocked

    x = _wide(shape, 2, -20, 20)
    compact = compiler.quantize(x, "mxfp8").scale
    swizzled = compiler.quantize(x, "mxfp8", swizzle=True).scale
    np.testing.assert_array_equal(swizzled, to_blocked(torch.from_numpy(compact)).numpy())


def _torchao_nvfp4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize, per_tensor_amax_to_scale

    t = torch.from_numpy(x)
    scales, data = nvfp4_quantize(t, 16, per_tensor_amax_to_scale(torch.max(torch.abs(t))))
    return data.view(torch.uint8).numpy(), scales.view(torch.uint8).numpy()


def test_nvfp4_agrees_with_torchao_except_its_small_block_clamp() -> None:
    """Same bytes wherever torchao's lower clamp of block scales (2^-6, 0x08) does not act."""
    x = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    x[1, :16] *= np.float32(2.0**-12)  # blocks far below the global amax: TE gives an E4M3
    x[2, 16:32] *= np.float32(2.0**-20)  # subnormal or zero scale, torchao clamps to 2^-6
    x[3, :16] = 0.0
    q = compiler.quantize(x, "nvfp4")
    peer_packed, peer_scales = _torchao_nvfp4(x)
    differ = q.scale != peer_scales
    assert differ.any()
    assert (peer_scales[differ] == 0x08).all() and (q.scale[differ] < 0x08).all()
    agree = np.repeat(~differ, 8, axis=1)
    np.testing.assert_array_equal(q.data[agree], peer_packed[agree])


def test_nvfp4_matches_torchao_on_ordinary_data() -> None:
    x = np.random.default_rng(4).standard_normal((64, 128)).astype(np.float32)
    q = compiler.quantize(x, "nvfp4")
    peer_packed, peer_scales = _torchao_nvfp4(x)
    np.testing.assert_array_equal(q.scale, peer_scales)
    np.testing.assert_array_equal(q.data, peer_packed)


def test_nvfp4_torchao_order_matches_torchao_everywhere() -> None:
    """scale_order=torchao reproduces nvfp4_quantize, small blocks and -0.0 included."""
    x = np.random.default_rng(5).standard_normal((8, 64)).astype(np.float32)
    x[1, :16] *= np.float32(2.0**-12)
    x[2, 16:32] *= np.float32(2.0**-20)
    x[3, :16] = 0.0
    x[4, :4] = -0.0
    q = compiler.quantize(x, "nvfp4", scale_order="torchao")
    peer_packed, peer_scales = _torchao_nvfp4(x)
    np.testing.assert_array_equal(q.scale, peer_scales)
    np.testing.assert_array_equal(q.data, peer_packed)
