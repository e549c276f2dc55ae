"""Reference emulation of fp8-current matmuls for tests: reference-quantized operands, f64 GEMM."""

from __future__ import annotations

import numpy as np

from tests.reference import fp8


def scaled_matmul(a: np.ndarray, b: np.ndarray, b_transposed: bool) -> np.ndarray:
    """a @ b (b given [N, K] when transposed) with both operands through fp8-current."""
    qa, sa = fp8.quantize_per_tensor(a)
    qb, sb = fp8.quantize_per_tensor(b)
    da = fp8.decode_e4m3(qa).astype(np.float64)
    db = fp8.decode_e4m3(qb).astype(np.float64)
    acc = da @ (db.T if b_transposed else db)
    return acc * (np.float64(sa) * np.float64(sb))
