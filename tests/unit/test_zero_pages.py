"""``untouched_zeros``: a module's zero-initialized buffers' initial values, views of one
anonymous mapping that IREE can import (``compiler/runtime/zero_pages.py``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from compiler.runtime.zero_pages import ALIGNMENT, untouched_zeros


def test_each_buffer_is_zeros_of_its_shape_and_dtype_aligned_apart() -> None:
    specs = [
        ((1, 4, 7, 3), ml_dtypes.bfloat16),
        ((), np.int64),
        ((0, 5), np.float32),
        ((33,), np.uint8),
    ]
    arrays = untouched_zeros(specs)
    assert [(a.shape, a.dtype) for a in arrays] == [(tuple(s), np.dtype(d)) for s, d in specs]
    assert all(not a.any() for a in arrays)
    assert all(a.flags.c_contiguous and a.flags.writeable for a in arrays)  # importable
    assert all(a.ctypes.data % ALIGNMENT == 0 for a in arrays if a.size)
    spans = sorted((a.ctypes.data, a.ctypes.data + a.nbytes) for a in arrays if a.size)
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:], strict=False))


def test_no_buffers_or_empty_ones_need_no_mapping() -> None:
    assert untouched_zeros([]) == []
    (empty,) = untouched_zeros([((0,), np.float32)])
    assert empty.shape == (0,) and empty.dtype == np.float32
