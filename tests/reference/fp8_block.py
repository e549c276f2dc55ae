"""Independent reference for FP8 blockwise scaling (TE ``Float8BlockScaling``), tests only.

DeepSeek-V3 style: blocks of 128 (1x128 along the contraction dim, 128x1 for columnwise, 128x128
tiles for weights), E4M3 data, one float32 ``scale_inv`` per block. Written from SEMANTICS.md and
spec/fp8_blockwise_scaling.rst; checked against TE's kernels
(transpose/quantize_transpose_vector_blockwise.cu, quantize_transpose_square_blockwise.cu and
recipe/recipe_common.cuh ``compute_scale_from_amax``):

- Block amax is ``fmaxf``-reduced, so NaN elements are skipped (an all-NaN block has amax 0).
- ``scale`` is ``fp8.compute_scale(amax, pow2=pow2, epsilon=eps)``, which is TE's
  ``compute_scale_from_amax`` for float32 input: amax < eps -> eps; amax 0 or inf -> 1;
  ``448 / amax`` in float32; an inf quotient -> FLT_MAX (``value_for_inf`` = the input type's
  max); pow2 zeroes the mantissa afterwards (so FLT_MAX -> 2^127). A NaN amax cannot occur.
- ``data = cast_e4m3(x * scale)`` (float32 product, saturating RNE: inf -> 448, NaN -> 0x7F),
  ``scale_inv = 1 / scale`` in float32 (TE computes ``1.0 / scale`` in double and stores a float;
  for one division that double rounding is innocuous, so it equals the float32 quotient).
- Shapes not divisible by 128 are zero-padded (SEMANTICS.md): a partial block's amax is over its
  real elements; outputs keep the data shape and the ceil-divided scale shapes.

GEMM-ready layouts (spec "Swizzle of scaling factors", compact -> GEMM-ready), padding with zeros
(TE leaves the padding uninitialised; zeros are this reference's choice):

- 1D rowwise compact ``[A, ceil(B/128)]`` -> ``[ceil(B/128), pad4(A)]`` (transposed, padded);
- 1D columnwise compact ``[ceil(A/128), B]`` -> ``[ceil(A/128), pad4(B)]`` (padded only), which
  is what ``gemm_ready_1d(..., axis=0)`` returns (= ``gemm_ready_1d(compact.T)``);
- 2D ``[ceil(A/128), ceil(B/128)]`` -> ``[ceil(A/128), pad4(ceil(B/128))]``.
"""

from __future__ import annotations

import numpy as np

from tests.reference import fp8
from tests.reference.mxfp8 import cast_e4m3, nan_ignoring_amax

BLOCK = 128


def _pad(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """x [M, K] zero-padded up to multiples of ``rows`` and ``cols``."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {x.shape}")
    m, k = x.shape
    out = np.zeros((-(-m // rows) * rows, -(-k // cols) * cols), dtype=np.float32)
    out[:m, :k] = x
    return out


def _scales(amax: np.ndarray, pow2: bool, eps: float) -> np.ndarray:
    """Per-block float32 scale, one ``fp8.compute_scale`` call per amax."""
    flat = [fp8.compute_scale(a, pow2=pow2, epsilon=eps) for a in amax.ravel()]
    return np.array(flat, dtype=np.float32).reshape(amax.shape)


def _quantize_tiles(
    x: np.ndarray, tile_rows: int, tile_cols: int, pow2: bool, eps: float
) -> tuple[np.ndarray, np.ndarray]:
    """Quantize x with one scale per (tile_rows x tile_cols) tile: (codes, scale_inv grid)."""
    m, k = np.shape(x)
    p = _pad(x, tile_rows, tile_cols)
    gr, gc = p.shape[0] // tile_rows, p.shape[1] // tile_cols
    tiles = p.reshape(gr, tile_rows, gc, tile_cols)
    scale = _scales(nan_ignoring_amax(tiles, axis=(1, 3)), pow2, eps)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = (tiles * scale[:, None, :, None]).astype(np.float32)
    codes = cast_e4m3(scaled).reshape(p.shape)[:m, :k]
    return np.ascontiguousarray(codes), (np.float32(1.0) / scale).astype(np.float32)


def quantize_1d(
    x: np.ndarray, axis: int = 1, pow2: bool = True, eps: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """1D blockwise quantize of x [M, K]: (E4M3 codes [M, K], float32 scale_inv).

    axis=1: 1x128 blocks along K, scale_inv [M, ceil(K/128)] (compact rowwise);
    axis=0: 128x1 blocks down dim 0, scale_inv [ceil(M/128), K] (compact columnwise).
    """
    if axis == 1:
        return _quantize_tiles(x, 1, BLOCK, pow2, eps)
    if axis == 0:
        return _quantize_tiles(x, BLOCK, 1, pow2, eps)
    raise ValueError(f"axis must be 0 or 1, got {axis}")


def quantize_rows(
    x: np.ndarray, axis: int = 1, pow2: bool = False, eps: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """fp8-rowwise (torchao's rowwise, compressed-tensors' FP8_DYNAMIC): the same rule with a
    block spanning the contraction dim. axis=1: one scale per row, scale_inv [M, 1]; axis=0:
    one per column, scale_inv [1, K]."""
    m, k = np.shape(x)
    if axis == 1:
        return _quantize_tiles(x, 1, k, pow2, eps)
    if axis == 0:
        return _quantize_tiles(x, m, 1, pow2, eps)
    raise ValueError(f"axis must be 0 or 1, got {axis}")


def quantize_2d(
    w: np.ndarray, pow2: bool = True, eps: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """2D (128x128 tiles) quantize of w [N, K]: (codes, scale_inv [ceil(N/128), ceil(K/128)])."""
    return _quantize_tiles(w, BLOCK, BLOCK, pow2, eps)


def dequantize(
    codes: np.ndarray, scale_inv: np.ndarray, block_shape: tuple[int, int]
) -> np.ndarray:
    """float32 ``decode_e4m3(codes) * scale_inv`` with each scale_inv broadcast over its block.

    ``block_shape`` is (1, 128) for axis=1, (128, 1) for axis=0 and (128, 128) for 2D.
    """
    codes = np.asarray(codes, dtype=np.uint8)
    m, k = codes.shape
    s = np.asarray(scale_inv, dtype=np.float32)
    full = np.repeat(np.repeat(s, block_shape[0], axis=0), block_shape[1], axis=1)[:m, :k]
    return (fp8.decode_e4m3(codes) * full).astype(np.float32)


def _pad_cols4(s: np.ndarray) -> np.ndarray:
    """Zero-pad the last dim of a 2-D float32 array to a multiple of 4."""
    rows, cols = s.shape
    out = np.zeros((rows, -(-cols // 4) * 4), dtype=np.float32)
    out[:, :cols] = s
    return out


def gemm_ready_1d(scale_inv_compact: np.ndarray, axis: int = 1) -> np.ndarray:
    """GEMM-ready 1D scales: rowwise [A, Bb] -> [Bb, pad4(A)]; axis=0 [Ab, B] -> [Ab, pad4(B)]."""
    s = np.asarray(scale_inv_compact, dtype=np.float32)
    if axis == 1:
        return _pad_cols4(np.ascontiguousarray(s.T))
    if axis == 0:
        return _pad_cols4(s)
    raise ValueError(f"axis must be 0 or 1, got {axis}")


def gemm_ready_2d(scale_inv: np.ndarray) -> np.ndarray:
    """GEMM-ready 2D scales: [Ab, Bb] -> [Ab, pad4(Bb)] (not transposed, zero-padded)."""
    return _pad_cols4(np.asarray(scale_inv, dtype=np.float32))
