"""Where block scales live for the GEMM: the scale layouts and their shapes.

A block-scaled operand ``[rows, K]`` has a *logical* scale matrix ``S[row, k_block]``. The
recipes emit ``swizzle`` into one of these layouts; the lowerings (CPU templates, CUDA kernels)
read and write them. ``mx``: 128x4 tiles of S, flattened (MXFP8, NVFP4; cuBLAS's layout);
``block1d``: ``[k_blocks, pad4(rows)]``, S transposed and padded; ``block2d``:
``[row_blocks, pad4(k_blocks)]``, S padded (fp8-block's 1x128 and 128x128 blocks);
``compact``: S itself, which the llvm-cpu GEMMs read (``passes/compact_block_scales.py``).
"""

from __future__ import annotations

import enum

from passes.base.errors import QmlirError
from passes.base.numbers import ceil_div
from passes.ir.types import DYNAMIC

MX_TILE_ROWS, MX_TILE_COLS = 128, 4


class ScaleLayout(enum.Enum):
    MX = "mx"
    BLOCK1D = "block1d"
    BLOCK2D = "block2d"
    COMPACT = "compact"  # S itself, [rows, k_blocks] (llvm-cpu GEMMs: compact-block-scales)

    @property
    def doc(self) -> str:
        return _LAYOUT_DOCS[self]


_LAYOUT_DOCS = {
    ScaleLayout.MX: "128x4 tiles of S[row, k_block], flattened",
    ScaleLayout.BLOCK1D: "[k_blocks, pad4(rows)]: out[kb, r] = S[r, kb] (transposed, padded)",
    ScaleLayout.BLOCK2D: "[row_blocks, pad4(k_blocks)]: out[rb, kb] = S[rb, kb] (padded)",
    ScaleLayout.COMPACT: "[rows, k_blocks]: S as the quantize wrote it (no GEMM layout)",
}


def pad4(n: int) -> int:
    return ceil_div(n, 4) * 4


def swizzled_shape(layout: ScaleLayout, rows: int, k_blocks: int) -> tuple[int, ...]:
    """The GEMM-ready shape of S [rows, k_blocks] (rows are row blocks for block2d; dynamic
    rows, :data:`DYNAMIC`, give a dynamic dim where the rows are)."""
    if rows == DYNAMIC:
        if layout is ScaleLayout.MX:
            return (DYNAMIC,)
        return (k_blocks, DYNAMIC) if layout is ScaleLayout.BLOCK1D else (DYNAMIC, pad4(k_blocks))
    if layout is ScaleLayout.MX:
        tiles = ceil_div(rows, MX_TILE_ROWS) * ceil_div(k_blocks, MX_TILE_COLS)
        return (tiles * MX_TILE_ROWS * MX_TILE_COLS,)
    if layout is ScaleLayout.BLOCK1D:
        return (k_blocks, pad4(rows))
    if layout is ScaleLayout.BLOCK2D:
        return (rows, pad4(k_blocks))
    raise QmlirError(f"unknown scale layout '{layout}'")
