"""``dynamic-gemm`` (llvm-cpu, a CPU with AVX512-BF16 and AVX512-VBMI, ``pack_weights="panels"``):
a scaled GEMM of a dynamic number of rows multiplies its decoded operands (the weight's decoded
once, when the module loads, and laid out as the GEMM's panels) by ``prefill-gemm``'s bf16 GEMM,
whose outputs are row-major, rather than by IREE's data-tiled GEMM, whose dynamic form unpacks
its output tiles in a dispatch of its own. The outputs are the data-tiled GEMM's
(``decode_gemv="off"``) bit for bit, and the static artifact's, at any number of rows: a last
tile of fewer than 16, a second workgroup of 512 rows; f32 and bf16 models, a bias, weights and
inputs over 2^-20..2^20, every recipe with bf16 operands (fp8-block's too). Static artifacts,
AVX2 code, a K that is no multiple of 32 and every other ``pack_weights`` keep IREE's GEMM."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch
from torch.export import Dim

import compiler
from tests.e2e.filecheck import filecheck
from tests.e2e.host_isa import needs_avx512_bf16

pytestmark = [pytest.mark.models, needs_avx512_bf16]

# per-tensor; fp8-block's FP32 block scales; E8M0, E4M3 (FP4), E8M0 (FP4)
RECIPES = ["fp8-current", "fp8-block", "mxfp8", "nvfp4", "mxfp4"]
MARKED = 'CHECK: qmlir.bf16_gemm = "avx512bf16"'
ROWS = ({0: Dim("rows", min=1, max=1024)},)


def _linear(k: int, n: int, dtype: torch.dtype, seed: int = 0) -> torch.nn.Linear:
    """Weights (and bias) over 2^-20..2^20, so that block scales differ block to block."""
    torch.manual_seed(seed)
    linear = torch.nn.Linear(k, n).eval()
    with torch.no_grad():
        linear.weight.mul_(torch.exp2(torch.randint(-20, 20, (n, k)).float()))
    return linear.to(dtype)


def _x(rows: int, k: int, dtype: torch.dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, k)) * np.exp2(rng.integers(-20, 20, (rows, k)))).astype(
        np.float32
    )
    return x.astype(ml_dtypes.bfloat16) if dtype == torch.bfloat16 else x


def _bits(values: object) -> np.ndarray:
    return np.asarray(values).astype(np.float32).view(np.uint32)


# every recipe's f32 model; a bf16 model's GEMMs (bf16 activations, the sums rounded after) too
BF16 = ["fp8-current", "fp8-block", "nvfp4"]
CASES = [(r, torch.float32) for r in RECIPES] + [(r, torch.bfloat16) for r in BF16]


@pytest.mark.parametrize(("recipe", "dtype"), CASES, ids=[f"{r}-{str(d)[6:]}" for r, d in CASES])
def test_outputs_are_the_data_tiled_gemms(recipe: str, dtype: torch.dtype, tmp_path: Path) -> None:
    """K 1152 (three panels of 384), N 80 (five panels of 16): every row count's outputs equal
    the data-tiled GEMM's and, at 37 rows, the static artifact's."""
    linear = _linear(1152, 80, dtype)
    x0 = torch.zeros(37, 1152, dtype=dtype)
    kernel = compiler.compile(
        linear, (x0,), recipe, dynamic_shapes=ROWS, pack_weights="panels", dump_ir=tmp_path
    )
    filecheck(
        f"""{MARKED}
CHECK: call @{{{{.*}}}}$bf16_gemm(
CHECK-NOT: linalg.matmul
CHECK: return""",
        tmp_path / "04-lower.mlir",
    )
    tiled = compiler.compile(linear, (x0,), recipe, dynamic_shapes=ROWS, decode_gemv="off")
    static = compiler.compile(linear, (x0,), recipe)
    for rows in (1, 15, 16, 37, 600):
        x = _x(rows, 1152, dtype, rows)
        got = np.asarray(kernel(x))
        assert got.shape == (rows, 80) and np.isfinite(got.astype(np.float32)).all()
        np.testing.assert_array_equal(_bits(got), _bits(tiled(x)))
        if rows == 37:
            np.testing.assert_array_equal(_bits(got), _bits(static(x)))


def test_a_transformer_layers_gemms_take_it(tmp_path: Path) -> None:
    """Every GEMM of a small MLP over a dynamic batch and sequence (rank-3 activations) takes it,
    the outputs the data-tiled GEMMs' bit for bit at 2 x 7 and 3 x 40 tokens."""
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)
    ).eval()
    dims = ({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=2, max=128)},)
    x0 = torch.zeros(2, 16, 256)
    kernel = compiler.compile(
        model, (x0,), "fp8-current", dynamic_shapes=dims, pack_weights="panels", dump_ir=tmp_path
    )
    filecheck(f"{MARKED}\n{MARKED}", tmp_path / "04-lower.mlir")
    tiled = compiler.compile(model, (x0,), "fp8-current", dynamic_shapes=dims, decode_gemv="off")
    for b, t in ((2, 7), (3, 40)):
        x = np.random.default_rng(t).standard_normal((b, t, 256)).astype(np.float32)
        np.testing.assert_array_equal(_bits(kernel(x)), _bits(tiled(x)))


@pytest.mark.parametrize(
    "case",
    [
        "default-load",
        "static",
        "k-not-a-multiple-of-32",
        "avx2-code",
        "decode-gemv-off",
    ],
)
def test_where_it_does_not_run(case: str, tmp_path: Path) -> None:
    k = 144 if case == "k-not-a-multiple-of-32" else 256
    linear = _linear(k, 64, torch.float32)
    kw: dict[str, object] = {"dynamic_shapes": ROWS, "pack_weights": "panels"}
    if case == "static":
        kw = {"pack_weights": "panels"}
    elif case == "default-load":
        kw = {"dynamic_shapes": ROWS}
    elif case == "avx2-code":
        kw["cpu"] = "x86-64-v3"
    elif case == "decode-gemv-off":
        kw["decode_gemv"] = "off"
    compiler.compile(linear, (torch.zeros(20, k),), "fp8-current", dump_ir=tmp_path, **kw)
    filecheck("CHECK-NOT: qmlir.bf16_gemm =\nCHECK: linalg.matmul", tmp_path / "04-lower.mlir")
