"""``int-fp4-gemm`` (llvm-cpu in AVX2 code): nvfp4's and mxfp4's GEMMs of many rows run in
integers (``passes/lowering/cpu/int_gemm.py``): E2M1 values times 2 multiplied as bytes by
``vpmaddubsw``, each 16 codes' products summed exactly, times the two blocks' scales (nvfp4's
E4M3, mxfp4's E8M0) into f32 sums. Against IREE's data-tiled f32 GEMM over the dequantized operands
(``decode_gemv="off"``), which sums the same exact products one rounding at a time: a single
product (one non-zero input) gives its output bit for bit; sums whose every partial sum is
exact (nvfp4's largest values everywhere) too, and the f64 product; random ones to within the
order of their f32 roundings. Any number of rows (tiles of 4, workgroups of 128 rows), dynamic
or static; N of 8, 16, 32 and 64 rows a workgroup. AVX2 code (``x86-64-v3``) runs on every host
these tests run on; an AVX512-BF16 CPU's code keeps IREE's bf16 GEMM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch.export import Dim

import compiler
from compiler.runtime.input_check import NonFiniteInputWarning
from tests.e2e.filecheck import filecheck
from tests.e2e.host_isa import HOST_ISA
from tests.e2e.test_decode_gemv import N, _every_fp4_code_linear

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(HOST_ISA is None, reason="this CPU lacks AVX2, FMA or F16C"),
]

AVX2 = "x86-64-v3"
RECIPES = ["nvfp4", "mxfp4"]  # E4M3 block scales of 16 and global scales; E8M0 scales of 32


def _marked(rows: str, k: int, n: int) -> str:
    """FileCheck lines: the GEMM of ``rows`` x ``k`` codes by ``n`` marked and dispatched."""
    kb = k // 2
    name = f"{rows}x{kb}.{n}x{kb}"
    return f"""CHECK: stream.executable private @{{{{.*}}}}.{name}{{{{.*}}}}$int_gemm_executable
CHECK: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.{rows}x{kb}.{n}x{kb}
CHECK-SAME: qmlir.codes_gemm = "avx2"
CHECK: flow.dispatch @{{{{.*}}}}$int_gemm_executable::@{{{{.*}}}}$int_gemm
"""


def _pair(  # type: ignore[no-untyped-def]
    model: torch.nn.Module, x: torch.Tensor, tmp_path: Path, recipe: str, **kw
):
    """The model in integers (AVX2 code) and as IREE's data-tiled f32 GEMM."""
    ints = compiler.compile(model, (x,), recipe, cpu=AVX2, dump_ir=tmp_path, **kw)
    tiled = compiler.compile(model, (x,), recipe, cpu=AVX2, decode_gemv="off", **kw)
    return ints, tiled


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("rows", [7, 40])
def test_every_code_multiplies_as_the_data_tiled_gemm(
    rows: int, recipe: str, tmp_path: Path
) -> None:
    """Every E2M1 code in each block of the weight (each 16 of a row), against one non-zero
    input column at a time (each output a single product: bit for bit) and random inputs."""
    k = 256
    linear = _every_fp4_code_linear(k)
    ints, tiled = _pair(linear, torch.zeros(rows, k), tmp_path, recipe)
    filecheck(_marked(str(rows), k, N), tmp_path / "04-lower.mlir")
    for j in (0, 1, 17, k - 1):
        x = np.zeros((rows, k), np.float32)
        x[:, j] = np.linspace(-6.0, 6.0, rows)  # each row its own code, -0 among them
        np.testing.assert_array_equal(np.asarray(ints(x)), np.asarray(tiled(x)))
    x = np.random.default_rng(0).standard_normal((rows, k)).astype(np.float32)
    got, want = np.asarray(ints(x)), np.asarray(tiled(x))
    assert _rel(got, want) < 1e-6  # the f32 sums in another order


@pytest.mark.parametrize("recipe", RECIPES)
def test_the_largest_sums_are_exact(recipe: str, tmp_path: Path) -> None:
    """Weights and inputs of +-6 (nvfp4: every block scale 448, E4M3's largest; mxfp4: 2^0, the
    codes +-6 a quarter of the sum's): each 16 codes' sum of
    products reaches 16 x 36 (the 16-bit sums 2304, never saturating), every partial sum an
    exact integer times the scales, so the outputs are the data-tiled GEMM's bit for bit and
    the f64 products to the global scales' rounding."""
    k = 512
    rng = np.random.default_rng(1)
    signs = rng.choice([-1.0, 1.0], size=(N, k)).astype(np.float32)
    signs[0], signs[1] = 1.0, -1.0
    linear = torch.nn.Linear(k, N, bias=False)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(6.0 * signs))
    ints, tiled = _pair(linear.eval(), torch.zeros(9, k), tmp_path, recipe)
    x_signs = rng.choice([-1.0, 1.0], size=(9, k))
    x_signs[0] = 1.0
    x = (6.0 * x_signs).astype(np.float32)
    got = np.asarray(ints(x))
    np.testing.assert_array_equal(got, np.asarray(tiled(x)))
    want = x.astype(np.float64) @ (6.0 * signs.T.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert want[0, :2].tolist() == [36 * k, -36 * k]


@pytest.mark.parametrize(
    ("recipe", "n"),
    [("nvfp4", 72), ("nvfp4", 80), ("nvfp4", 96), ("nvfp4", 192), ("mxfp4", 80)],
)  # 8, 16, 32 and 64 rows of B a workgroup
def test_random_weights_over_a_wide_range(recipe: str, n: int, tmp_path: Path) -> None:
    """Weights and inputs spanning 2^-20 to 2^20 (every block its own scales, the global
    scales far from 1), a bias: to within the f32 sums' order of the data-tiled GEMM; the
    weights in a parameter file (B read as stored, its scales decoded in the executable) bit for
    bit as inline ones (B laid out at load)."""
    torch.manual_seed(0)
    k = 384
    linear = torch.nn.Linear(k, n).eval()
    with torch.no_grad():
        linear.weight.mul_(torch.exp2(torch.randint(-20, 20, (n, k)).float()))
    ints, tiled = _pair(linear, torch.zeros(37, k), tmp_path, recipe)
    filecheck(_marked("37", k, n), tmp_path / "04-lower.mlir")
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((37, k)) * np.exp2(rng.integers(-20, 20, (37, k)))).astype(np.float32)
    got, want = np.asarray(ints(x)), np.asarray(tiled(x))
    assert np.isfinite(got).all()
    assert _rel(got, want) < 1e-6
    stored = compiler.compile(
        linear, (torch.zeros(37, k),), recipe, cpu=AVX2, weights="external",
        parameters=tmp_path / "w.safetensors",
    )  # fmt: skip
    np.testing.assert_array_equal(np.asarray(stored(x)), got)


@pytest.mark.parametrize("recipe", RECIPES)
def test_a_dynamic_number_of_rows(recipe: str, tmp_path: Path) -> None:
    """One row, 3 (a last tile of 4 partial), 4, 5, 128 (one workgroup), 129 and 300 (three
    workgroups, the last partial), a 3-D activation: as the data-tiled GEMM, and at 5 rows as
    the static twin bit for bit (rows are independent in the kernel)."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(256, 64, bias=False).eval()
    seq = ({1: Dim("seq", min=1, max=512)},)
    ints, tiled = _pair(linear, torch.zeros(1, 40, 256), tmp_path, recipe, dynamic_shapes=seq)
    filecheck(_marked("D", 256, 64), tmp_path / "04-lower.mlir")
    static = compiler.compile(linear, (torch.zeros(1, 5, 256),), recipe, cpu=AVX2)
    rng = np.random.default_rng(2)
    for t in (1, 3, 4, 5, 128, 129, 300):
        x = rng.standard_normal((1, t, 256)).astype(np.float32)
        got = np.asarray(ints(x))
        assert got.shape == (1, t, 64)
        assert _rel(got, np.asarray(tiled(x))) < 1e-6
        if t == 5:
            np.testing.assert_array_equal(got, np.asarray(static(x)))


def test_code_for_avx512_bf16_keeps_irees_gemm(tmp_path: Path) -> None:
    """On a CPU with AVX512-BF16 and -VBMI (compiled here, not run) IREE's bf16 GEMM runs
    nvfp4's many-row GEMMs, faster there than these instructions; decode_gemv="off" keeps the
    data-tiled GEMM in AVX2 code too."""
    linear = _every_fp4_code_linear(256)
    x = torch.zeros(8, 256)
    for cpu, mode in (("sapphirerapids", "auto"), (AVX2, "off")):
        dump = tmp_path / cpu
        compiler.compile(linear, (x,), "nvfp4", decode_gemv=mode, cpu=cpu, dump_ir=dump)
        filecheck(
            f"""CHECK-NOT: int_gemm
CHECK: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.8x128.{N}x128
CHECK-NOT: qmlir.codes_gemm
CHECK: linalg.matmul
""",
            dump / "04-lower.mlir",
        )


@pytest.mark.parametrize("recipe", RECIPES)
def test_a_nan_input_gives_the_data_tiled_gemms_nans(recipe: str, tmp_path: Path) -> None:
    """A NaN in row 3 of the input: mxfp4's block holding it gets the NaN scale (0xFF), which
    makes that row's outputs NaN, as the data-tiled GEMM's; nvfp4 encodes a NaN element as 0 (the
    row finite). The other rows as the data-tiled GEMM's."""
    torch.manual_seed(1)
    linear = torch.nn.Linear(128, 64, bias=False).eval()
    ints, tiled = _pair(linear, torch.zeros(9, 128), tmp_path, recipe)
    x = np.random.default_rng(4).standard_normal((9, 128)).astype(np.float32)
    x[3, 5] = np.nan
    with pytest.warns(NonFiniteInputWarning):
        got, want = np.asarray(ints(x)), np.asarray(tiled(x))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[3]).all() == (recipe == "mxfp4")
    keep = np.arange(9) != 3
    assert _rel(got[keep], want[keep]) < 1e-6


def _stored(rows: str, k: int, n: int, stored: bool) -> str:
    """FileCheck lines: the GEMM of :func:`_marked` reads B's codes as stored, laying them out in
    the executable (``stored``: B's codes, ``[n, k / 2]`` bytes, dispatched as they are), or
    reads B's layout made at load (lines of 32 bytes)."""
    head, dispatch = _marked(rows, k, n).rsplit("CHECK: flow.dispatch", 1)
    if stored:
        return f"""{head}CHECK-SAME: qmlir.stored_b = true
CHECK-NOT: x32xi8>
CHECK: flow.dispatch{dispatch}CHECK-SAME: tensor<{n}x{k // 2}xi8>
"""
    return f"""{head}CHECK-NOT: qmlir.stored_b
CHECK: tensor.collapse_shape {{{{.*}}}} into tensor<{n // 8}x{k // 4}x32xi8>
CHECK: flow.dispatch{dispatch}"""


def test_weights_in_a_parameter_file_are_read_as_stored(tmp_path: Path) -> None:
    """For weights in a parameter file under ``pack_weights="load"`` (the default) and ``call``
    (and inline ones under ``call``), where IREE would lay the weights out in every call, the
    integer GEMM reads B's codes and scales as stored, laying each 8 rows out on the stack; under
    ``decoded`` IREE lays them out once, at load. Every artifact's outputs are the same, bit for
    bit: the same products summed in the same order."""
    linear = _every_fp4_code_linear(256)
    x = torch.zeros(8, 256)
    xs = np.random.default_rng(5).standard_normal((8, 256)).astype(np.float32)
    inline = compiler.compile(linear, (x,), "nvfp4", cpu=AVX2)
    want = np.asarray(inline(xs))
    cases = (("load", True, "external"), ("call", True, "external"), ("decoded", False, "external"),
             ("call", True, "inline"))  # fmt: skip
    for mode, stored, weights in cases:
        dump = tmp_path / f"{mode}-{weights}"
        external = {"parameters": dump / "w.safetensors"} if weights == "external" else {}
        art = compiler.compile(
            linear, (x,), "nvfp4", cpu=AVX2, weights=weights, pack_weights=mode, dump_ir=dump,
            **external,
        )  # fmt: skip
        filecheck(_stored("8", 256, N, stored), dump / "04-lower.mlir")
        np.testing.assert_array_equal(np.asarray(art(xs)), want)


@pytest.mark.parametrize(("recipe", "k", "steps"), [("nvfp4", 2096, 66), ("mxfp4", 4352, 92)])
def test_long_rows_read_as_stored_in_blocks_of_k(
    recipe: str, k: int, steps: int, tmp_path: Path
) -> None:
    """K past one panel of B's codes as stored (128 steps of 16): nvfp4's 131 steps as blocks
    of 66 and 65, mxfp4's 272 (136 blocks of 32) as 92, 92 and 88, the sums so far read back
    from the output: bit for bit the GEMM over B laid out at load (all of K at once), and as
    the data-tiled GEMM; 1, 7 and 130 rows (dynamic)."""
    torch.manual_seed(3)
    linear = torch.nn.Linear(k, 24, bias=False).eval()
    seq = ({0: Dim("rows", min=1, max=512)},)
    x = torch.zeros(7, k)
    at_load, tiled = _pair(linear, x, tmp_path / "load", recipe, dynamic_shapes=seq)
    dump = tmp_path / "stored"
    stored = compiler.compile(
        linear, (x,), recipe, cpu=AVX2, weights="external", parameters=dump / "w.safetensors",
        dynamic_shapes=seq, dump_ir=dump,
    )  # fmt: skip
    filecheck(_stored("D", k, 24, True), dump / "04-lower.mlir")
    filecheck(f"CHECK: memref.alloca() : memref<{4 * steps}x32xi8>", dump / "04-lower.mlir")
    rng = np.random.default_rng(6)
    for rows in (1, 7, 130):
        xs = rng.standard_normal((rows, k)).astype(np.float32)
        got = np.asarray(stored(xs))
        np.testing.assert_array_equal(got, np.asarray(at_load(xs)))
        assert _rel(got, np.asarray(tiled(xs))) < 1e-6
