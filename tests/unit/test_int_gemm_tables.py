"""The tables the integer FP4 GEMM reads B as stored with (``passes/lowering/cpu/int_gemm.py``):
each block-scale code's f32 bits, checked against torch's own FP8 and E8M0 dtypes, and the
E2M1 codes' values times 2 plus 12 against the format's 8 magnitudes."""

from __future__ import annotations

import numpy as np
import torch

from passes.ir.dialect import ScaleFormat
from passes.lowering.cpu.gemv import fp4_offset_table
from passes.lowering.cpu.int_gemm import scale_table

QUIET_NAN = 0x7FC00000  # the NaN decode_fp8.mlir and decode_e8m0_f32.mlir give


def _bits(table: list[int]) -> np.ndarray:
    return np.array(table, dtype=np.int64).astype(np.uint32)


def test_e4m3_scales_are_torchs_values_times_a_quarter() -> None:
    codes = torch.arange(256, dtype=torch.uint8)
    want = (codes.view(torch.float8_e4m3fn).float() * 0.25).numpy()
    got = _bits(scale_table(ScaleFormat.NVFP4, 0.25))
    nan = np.isnan(want)
    assert nan.sum() == 2  # 0x7F and 0xFF
    assert (got[nan] == QUIET_NAN).all()
    np.testing.assert_array_equal(got[~nan], want[~nan].view(np.uint32))
    assert got[0x80] == 0x80000000  # -0 kept, as the scalar decode keeps it


def test_e8m0_scales_are_powers_of_two_with_code_0_as_zero() -> None:
    codes = torch.arange(256, dtype=torch.uint8)
    want = codes.view(torch.float8_e8m0fnu).float().numpy()
    got = _bits(scale_table(ScaleFormat.E8M0, 1.0))
    np.testing.assert_array_equal(got[1:255], want[1:255].view(np.uint32))
    assert got[0] == 0  # 2^-127 is no f32 normal: read as 0, as in the one-row loop
    assert got[255] == QUIET_NAN


def test_fp4_offsets_are_twice_torchs_values_plus_12() -> None:
    values = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    want = [int(2 * v) + 12 for v in values] + [12 - int(2 * v) for v in values]
    assert fp4_offset_table() == want
