"""Dequantized operands of the block recipes, from the test references (for GEMM emulation)."""

from __future__ import annotations

import numpy as np

from tests.reference import fp8, fp8_block, mxfp4, mxfp8, nvfp4


def operand(
    recipe: str, x: np.ndarray, weight: bool, kn: bool, static: float | None = None
) -> tuple[np.ndarray, float]:
    """(dequantized [rows, K] float64, alpha factor) of x as the GEMM sees it.

    ``kn``: x is a ``[K, N]`` weight; the result is then ``[N, K]``. ``static``: nvfp4's fixed
    global decode scale.
    """
    if recipe == "mxfp8":
        codes, scales = mxfp8.quantize(x, axis=0 if kn else 1)
        values = mxfp8.dequantize(codes, scales, axis=0 if kn else 1)
        return (values.T if kn else values).astype(np.float64), 1.0
    if recipe == "fp8-block":
        if weight:
            codes, s = fp8_block.quantize_2d(x)
            values = fp8_block.dequantize(codes, s, (128, 128))
        else:
            codes, s = fp8_block.quantize_1d(x, axis=1)
            values = fp8_block.dequantize(codes, s, (1, 128))
        return (values.T if kn else values).astype(np.float64), 1.0
    if recipe == "mxfp4":  # a [K, N] weight is quantized as its transpose, as nvfp4's
        source = x.T.copy() if kn else x
        packed, scales = mxfp4.quantize(source)
        return mxfp4.dequantize(packed, scales, source.shape[1]).astype(np.float64), 1.0
    if recipe == "nvfp4":
        source = x.T.copy() if kn else x
        packed, d, s_dec = nvfp4.quantize(source, static_decode=static)
        values = nvfp4.decode_e2m1(nvfp4.unpack(packed)).astype(np.float64)
        scale = np.repeat(fp8.decode_e4m3(d).astype(np.float64), nvfp4.BLOCK, axis=1)
        return (values * scale)[:, : source.shape[1]], float(s_dec)
    raise ValueError(recipe)


def matmul(
    recipe: str, x: np.ndarray, w: np.ndarray, w_is_kn: bool, static: float | None = None
) -> np.ndarray:
    """x [M, K] @ w ([N, K], or [K, N] when ``w_is_kn``) through ``recipe``, in float64
    (``static``: x's fixed nvfp4 global decode scale)."""
    xd, xa = operand(recipe, x, weight=False, kn=False, static=static)
    wd, wa = operand(recipe, w, weight=True, kn=w_is_kn)
    return (xd @ wd.T) * (np.float64(np.float32(np.float32(xa) * np.float32(wa))))
