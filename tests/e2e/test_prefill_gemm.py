"""``prefill-gemm`` (llvm-cpu, a CPU with AVX512-BF16 and AVX512-VBMI): a per-tensor FP8 GEMM of
many rows (a generator's prefill, a batch) whose call would otherwise decode and pack the weight
runs as a GEMM that decodes the weight's codes in its loop (``passes/lowering/cpu/gemm.py``).
Its values are the data-tiled GEMM's bit for bit (``decode_gemv="off"``): the same exact
products, summed in the same order (each output's K in order, by pairs): every code (subnormals,
448, NaN), random inputs, any number of rows (a last tile of fewer than 16), a dynamic number.
Where it runs: with the weights' codes read each call (``pack_weights="call"``, a generator's
parameter file without decoded copies), not where decoded copies are kept, not in AVX2 code."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch
from torch.export import Dim

import compiler
from tests.e2e import checkpoints
from tests.e2e.filecheck import filecheck
from tests.e2e.host_isa import needs_avx512_bf16
from tests.e2e.test_decode_gemv import N, _every_code_linear

pytestmark = [
    pytest.mark.models,
    needs_avx512_bf16,
]

MARKED = 'CHECK: qmlir.codes_gemm = "avx512bf16"'


RECIPES = ["fp8-current", "fp8-block", "mxfp8", "nvfp4"]  # per-tensor; fp32, E8M0, E4M3 scales


def _pair(  # type: ignore[no-untyped-def]
    model: torch.nn.Module, x: torch.Tensor, tmp_path: Path, recipe: str = "fp8-current", **kw
):
    """The model with the kernel (its weights' codes read each call) and without it."""
    kernel = compiler.compile(model, (x,), recipe, pack_weights="call", dump_ir=tmp_path, **kw)
    tiled = compiler.compile(model, (x,), recipe, decode_gemv="off", **kw)
    return kernel, tiled


@pytest.mark.parametrize("rows", [20, 48])
def test_every_code_multiplies_as_the_data_tiled_gemm(rows: int, tmp_path: Path) -> None:
    k = 160  # five steps of 32: one K block of 160
    linear = _every_code_linear(k)
    kernel, tiled = _pair(linear, torch.zeros(rows, k), tmp_path)
    filecheck(
        f"""CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.{rows}x{k}.{N}x{k}
CHECK-SAME: qmlir.codes_gemm = "avx512bf16"
CHECK: flow.dispatch @{{{{.*}}}}$x_executable
CHECK: flow.dispatch @{{{{.*}}}}$gemm_executable
""",
        tmp_path / "04-lower.mlir",
    )
    for j in (0, 1, k // 2, k - 1):  # one non-zero column: each output a single product
        x = np.zeros((rows, k), np.float32)
        x[:, j] = np.arange(1, rows + 1) / rows  # each row its own code (per-tensor scale)
        got, want = np.asarray(kernel(x)), np.asarray(tiled(x))
        assert np.isnan(got[:, 5]).all()  # row 5 of the weight holds the NaN code
        np.testing.assert_array_equal(got, want)
    x = np.random.default_rng(0).standard_normal((rows, k)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(kernel(x)), np.asarray(tiled(x)))


# an f32 model's GEMM gives f32 sums; a bf16 model's rounds them to bf16 as it stores them
# (round-gemm-outputs), where the data-tiled GEMM's epilogue and a dispatch of its own do
DTYPES = [torch.float32, torch.bfloat16]
ROUNDED = """CHECK: func.func private @{{.*}}.rounded(
CHECK-SAME: qmlir.codes_gemm = "avx512bf16"
CHECK-SAME: qmlir.rounded = true"""


def _marked(dtype: torch.dtype) -> str:
    """The FileCheck lines saying the GEMM is marked, and rounds its outputs (a bf16 model's)
    or does not."""
    if dtype == torch.bfloat16:
        return ROUNDED
    return f"CHECK-NOT: qmlir.rounded\n{MARKED}\nCHECK-NOT: qmlir.rounded"


def _bits(values: object) -> np.ndarray:
    """Outputs as f32 bit patterns (a bf16 output widened exactly)."""
    return np.asarray(values).astype(np.float32).view(np.uint32)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "bf16"])
@pytest.mark.parametrize("recipe", RECIPES)
def test_random_weights_and_k_blocks(recipe: str, dtype: torch.dtype, tmp_path: Path) -> None:
    """K 1152: three panels of 384 (K's largest multiple of 32 up to 512 dividing it), the
    outputs between them kept as f32 sums; 80 rows of B: five panels of 16; block scales
    (fp8-block's 128 x 128, mxfp8's 1 x 32) multiplied into each panel's values as decoded.
    Weights and inputs spanning 2^-20 to 2^20, so the blocks' scales differ. A bf16 model's
    GEMM rounds as the last panel stores (per-tensor and global scales multiplied first)."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(1152, 80, bias=False).eval()
    with torch.no_grad():
        linear.weight.mul_(torch.exp2(torch.randint(-20, 20, (80, 1152)).float()))
    linear = linear.to(dtype)
    kernel, tiled = _pair(linear, torch.zeros(37, 1152, dtype=dtype), tmp_path, recipe)
    filecheck(_marked(dtype), tmp_path / "04-lower.mlir")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((37, 1152)) * np.exp2(rng.integers(-20, 20, (37, 1152)))
    x = _as(x, dtype)
    np.testing.assert_array_equal(_bits(kernel(x)), _bits(tiled(x)))


@pytest.mark.parametrize("recipe", ["fp8-block", "mxfp8"])
def test_values_below_f32s_normals_read_as_zero_as_in_the_data_tiled_gemm(
    recipe: str, tmp_path: Path
) -> None:
    """A block of tiny weights (half of K, about 2^-118) has codes whose values times the
    block's power-of-two scale fall below 2^-126: the panel's hardware rounding to bf16
    (vcvtne2ps2bf16) flushes them to zero where the dequantize's arith.truncf keeps them as bf16
    subnormals, and the data-tiled GEMM's vdpbf16ps reads those as zero. Against activations of
    about 2^80 their products (about 2^-50) would show in the sums: the outputs are the
    data-tiled GEMM's bit for bit."""
    torch.manual_seed(2)
    linear = torch.nn.Linear(256, 32, bias=False).eval()
    with torch.no_grad():
        linear.weight[:, :128] *= 2.0**-118
    kernel, tiled = _pair(linear, torch.zeros(37, 256), tmp_path, recipe)
    filecheck(_marked(torch.float32), tmp_path / "04-lower.mlir")
    x = np.random.default_rng(3).standard_normal((37, 256)).astype(np.float32) * 2.0**80
    got, want = np.asarray(kernel(x)), np.asarray(tiled(x))
    assert np.isfinite(got).all() and (got != 0).all()
    np.testing.assert_array_equal(_bits(got), _bits(want))


def _as(x: np.ndarray, dtype: torch.dtype) -> np.ndarray:
    """Inputs for a model of ``dtype``."""
    return x.astype(np.float32).astype(
        ml_dtypes.bfloat16 if dtype == torch.bfloat16 else np.float32
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "bf16"])
@pytest.mark.parametrize("recipe", RECIPES)
def test_a_dynamic_number_of_rows(recipe: str, dtype: torch.dtype, tmp_path: Path) -> None:
    """One row (a last tile of one), 15, 16 (one whole tile), 17 and 600 (two workgroups of
    512 rows, the second's last tile partial), each as its static twin and the data-tiled GEMM
    (fp8-block: A's scales padded to 4 rows); a bf16 model's outputs rounded in the GEMM, the
    last tile's rows past M neither stored nor rounded."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(256, 64, bias=False).eval().to(dtype)
    seq = ({1: Dim("seq", min=1, max=1024)},)
    x0 = torch.zeros(1, 40, 256, dtype=dtype)
    kernel, tiled = _pair(linear, x0, tmp_path, recipe, dynamic_shapes=seq)
    filecheck(_marked(dtype), tmp_path / "04-lower.mlir")
    static = compiler.compile(
        linear, (torch.zeros(1, 17, 256, dtype=dtype),), recipe, pack_weights="call"
    )
    rng = np.random.default_rng(2)
    for t in (1, 15, 16, 17, 600):
        x = _as(rng.standard_normal((1, t, 256)), dtype)
        got = np.asarray(kernel(x))
        assert got.shape == (1, t, 64)
        np.testing.assert_array_equal(_bits(got), _bits(tiled(x)))
        if t == 17:
            np.testing.assert_array_equal(_bits(got), _bits(static(x)))


class _Gated(torch.nn.Module):
    """Two GEMMs' outputs multiplied, a gated MLP's up x gate (no activation)."""

    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(256, 512, bias=False)
        self.gate = torch.nn.Linear(256, 512, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x) * self.gate(x)


def test_a_bf16_models_gemm_outputs_round_to_bf16_before_their_product(tmp_path: Path) -> None:
    """In a bf16 model each GEMM's output is a bf16 tensor, rounded before the product, as
    torch's: the kernel's outputs are. (The data-tiled GEMM's, fused with the product by IREE,
    skipped that rounding on 5192 of these 20480 outputs when this test was written.)"""
    torch.manual_seed(0)
    model = _Gated().eval().to(torch.bfloat16)
    x = torch.zeros(1, 40, 256, dtype=torch.bfloat16)
    kernel = compiler.compile(model, (x,), "fp8-current", pack_weights="call")
    parts = compiler.compile(
        _Parts(model).eval(), (x,), "fp8-current", pack_weights="call", dump_ir=tmp_path
    )
    filecheck(MARKED, tmp_path / "04-lower.mlir")
    xs = np.random.default_rng(3).standard_normal((1, 40, 256)).astype(ml_dtypes.bfloat16)
    up, gate = (torch.from_numpy(np.asarray(v).astype(np.float32)) for v in parts(xs))
    want = (up.to(torch.bfloat16) * gate.to(torch.bfloat16)).float().numpy()
    np.testing.assert_array_equal(np.asarray(kernel(xs)).astype(np.float32), want)


class _Parts(torch.nn.Module):
    """The gated model's two GEMM outputs, returned."""

    def __init__(self, gated: _Gated) -> None:
        super().__init__()
        self.gated = gated

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.gated.up(x), self.gated.gate(x)


def test_a_generators_prefill_reads_the_codes(tmp_path: Path) -> None:
    """A generator with its weights in a parameter file and no decoded copies (``auto``): its
    prefill's GEMMs take the kernel, its decode step's the matrix-vector product; the prefill's
    logits are the decomposed GEMMs' bit for bit (an f32 model)."""
    lm = checkpoints.llama(hidden_size=128, intermediate_size=256)
    gen = compiler.compile_generator(
        lm, recipe="fp8-current", max_seq_len=64, weights="external", dump_ir=tmp_path
    )
    filecheck(
        """CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.256x128
CHECK-SAME: qmlir.codes_gemm = "avx512bf16"
CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.256x128
CHECK-SAME: qmlir.gemv = "avx512bf16"
""",
        tmp_path / "04-lower.mlir",
    )
    off = compiler.compile_generator(
        lm, recipe="fp8-current", max_seq_len=64, weights="external", decode_gemv="off"
    )
    ids = np.random.default_rng(4).integers(0, 256, (1, 40)).astype(np.int64)
    np.testing.assert_array_equal(gen.step(ids, 0), off.step(ids, 0))


@pytest.mark.parametrize(
    "kw",
    [{"pack_weights": "load"}, {"pack_weights": "call", "decode_gemv": "off"}],
    ids=["decoded-and-packed-at-load", "decode-gemv-off"],
)
def test_where_it_does_not_run(kw: dict[str, str], tmp_path: Path) -> None:
    linear = _every_code_linear(128)
    compiler.compile(linear, (torch.zeros(20, 128),), "fp8-current", dump_ir=tmp_path, **kw)
    filecheck("CHECK-NOT: qmlir.codes_gemm =", tmp_path / "04-lower.mlir")


def test_a_dynamic_artifact_keeps_the_decoded_copies_by_default(tmp_path: Path) -> None:
    """Under ``pack_weights="load"`` a dynamic artifact keeps IREE's GEMM over the weights'
    decoded copies: a call of a few rows would decode every weight in the kernel."""
    linear = _every_code_linear(128)
    seq = ({0: Dim("rows", min=1, max=256)},)
    compiler.compile(
        linear, (torch.zeros(20, 128),), "fp8-current", dynamic_shapes=seq, dump_ir=tmp_path
    )
    filecheck(
        """CHECK-LABEL: func.func private @qmlir.scaled_matmul.{{.*}}.per_tensor.nt.Dx128.256x128(
CHECK-NOT: qmlir.{{codes|bf16}}_gemm =
CHECK-SAME: qmlir.op = "scaled_matmul"
""",
        tmp_path / "04-lower.mlir",
    )


def test_avx2_code_keeps_the_data_tiled_gemm(tmp_path: Path) -> None:
    linear = _every_code_linear(128)
    x = torch.zeros(20, 128)
    compiler.compile(
        linear, (x,), "fp8-current", pack_weights="call", cpu="x86-64-v3", dump_ir=tmp_path
    )
    filecheck("CHECK-NOT: qmlir.codes_gemm =", tmp_path / "04-lower.mlir")
