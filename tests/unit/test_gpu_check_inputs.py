"""The GPU check's adversarial quantize inputs hold what their docstring promises: the E4M3 grid
and every midpoint between its steps at each block's scale (rounding ties under power-of-two
scales), signed zeros, f32 subnormals, NaN, saturation just past the amax, and +-inf only where
asked. A CPU test: the GPU run compares the kernels' bytes with llvm-cpu's on these inputs."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from benchmarks.gpu_check_run import adversarial_input, check_input, e4m3_grid

SHAPE = [256, 1024]


def test_e4m3_grid_is_every_finite_non_negative_code() -> None:
    codes = np.arange(0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    np.testing.assert_array_equal(e4m3_grid(), np.unique(codes))
    assert e4m3_grid()[-1] == 448.0


def test_each_group_of_32_holds_its_amax_and_grid_points_at_its_scale() -> None:
    x = adversarial_input(SHAPE, 0, with_inf=False)
    grid = e4m3_grid().astype(np.float64)
    ties = (grid[:-1] + grid[1:]) / 2
    values = np.concatenate([grid, ties])
    block = x[0, :128].astype(np.float64)  # k = 20: the per-tensor amax's block
    top = np.abs(block[::32])
    assert np.all((top == 448 * 2.0**20) | (top == np.nextafter(np.float32(448 * 2.0**20), np.inf)))
    scaled = np.abs(block) / 2.0**20
    finite = np.isfinite(scaled) & (np.arange(128) % 32 != 0)
    on_grid = np.isin(scaled[finite], values) | (scaled[finite] < 2.0**-100)
    assert on_grid.mean() > 0.9  # the rest: specials (subnormals, the smallest normal)
    assert np.isin(scaled[finite], ties).sum() >= 30  # rounding ties, about half the values


def test_specials_present() -> None:
    x = adversarial_input(SHAPE, 0, with_inf=False)
    bits = x.view(np.uint32)
    assert np.isnan(x).any()
    assert (bits == 0x80000000).any()  # -0.0
    assert ((np.abs(x) > 0) & (np.abs(x) < np.finfo(np.float32).tiny)).any()  # subnormals
    assert not np.isinf(x).any()
    assert np.nanmax(np.abs(x)) <= np.nextafter(np.float32(448 * 2.0**20), np.inf)


def test_inf_only_in_the_inf_variant_and_inputs_are_reproducible() -> None:
    x = check_input(SHAPE, 3, "adversarial-inf")
    assert np.isposinf(x).sum() == 2 and np.isneginf(x).sum() == 2
    assert x.tobytes() == check_input(SHAPE, 3, "adversarial-inf").tobytes()
    assert x.tobytes() != check_input(SHAPE, 4, "adversarial-inf").tobytes()
