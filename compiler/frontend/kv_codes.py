"""An FP8 KV cache's two ops, as torch custom ops a generator's decoder calls
(``compiler/frontend/cached_decoder.py``) and pass ``kv-cache-codes`` compiles:

- ``qmlir::kv_quantize(x [..., D] f32) -> (codes [..., D] u8, scales [..., ceil(D/32)] u8)``:
  E4M3 codes with one E8M0 (power-of-two) scale per 32 values of the last dim, by MXFP8's
  rule (the ``mxfp8`` recipe's ``ceil``: the scale is the smallest power of two at or above
  ``amax / 448``; NaN ignored; docs/numerics.md);
- ``qmlir::kv_dequantize(codes, scales) -> f32``: each code's value times its block's scale.

The compiled module runs them as the ``mxfp8`` recipe's quantize and cuDNN's
``block_scale_dequantize`` named ops (bit-exact against their references, tests/e2e). The torch
implementations here are for eager runs of the decoder and follow the same rule; a test checks
them against the compiled ops, bit for bit.
"""

from __future__ import annotations

import torch
from torch import Tensor

from passes.base.numbers import ceil_div

BLOCK = 32  # values per E8M0 scale, along the head dim
E4M3_MAX = 448.0
QUANTIZE = "qmlir::kv_quantize"
DEQUANTIZE = "qmlir::kv_dequantize"


def scale_columns(head_dim: int) -> int:
    return ceil_div(head_dim, BLOCK)


def _blocks(x: Tensor) -> Tensor:
    """``x [..., D]`` as ``[..., ceil(D/32), 32]``, the last block zero-padded."""
    pad = scale_columns(x.shape[-1]) * BLOCK - x.shape[-1]
    if pad:
        x = torch.nn.functional.pad(x, (0, pad))
    return x.reshape(*x.shape[:-1], -1, BLOCK)


@torch.library.custom_op(QUANTIZE, mutates_args=())
def kv_quantize(x: Tensor) -> tuple[Tensor, Tensor]:
    blocks = _blocks(x.float())
    amax = torch.where(blocks.isnan(), 0.0, blocks.abs()).amax(-1).double()
    v = amax / E4M3_MAX
    mantissa, exponent = torch.frexp(v)
    unbiased = torch.where(mantissa == 0.5, exponent - 1, exponent)  # ceil(log2 v)
    code = torch.where(v <= 2.0**-127, 0, (unbiased + 127).clamp(0, 254))
    code = torch.where(v.isinf(), 254, code)
    multiplier = torch.where(code == 0, 1.0, torch.pow(2.0, (127 - code).double()))
    scaled = (blocks.double() * multiplier[..., None]).clamp(-E4M3_MAX, E4M3_MAX)
    data = scaled.float().to(torch.float8_e4m3fn).view(torch.uint8)  # RNE; NaN → 0x7F
    codes = data.reshape(*x.shape[:-1], -1)[..., : x.shape[-1]]
    return codes.contiguous(), code.to(torch.uint8)


@kv_quantize.register_fake
def _(x: Tensor) -> tuple[Tensor, Tensor]:
    scales = (*x.shape[:-1], scale_columns(x.shape[-1]))
    return x.new_empty(x.shape, dtype=torch.uint8), x.new_empty(scales, dtype=torch.uint8)


@torch.library.custom_op(DEQUANTIZE, mutates_args=())
def kv_dequantize(codes: Tensor, scales: Tensor) -> Tensor:
    values = _blocks(codes.view(torch.float8_e4m3fn).float())
    scale = torch.pow(2.0, scales.double() - 127).float()
    out = (values * scale[..., None]).reshape(*codes.shape[:-1], -1)
    return out[..., : codes.shape[-1]].contiguous()


@kv_dequantize.register_fake
def _(codes: Tensor, scales: Tensor) -> Tensor:
    return codes.new_empty(codes.shape, dtype=torch.float32)
