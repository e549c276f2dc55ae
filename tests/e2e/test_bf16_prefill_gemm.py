"""``bf16-prefill-gemm`` (llvm-cpu, a CPU with AVX512-BF16 and AVX512-VBMI): a bf16 weight's
linear of many rows runs as ``prefill-gemm``'s GEMM over the weight as stored, where no packed
copy of the weights is wanted (``pack_weights="call"``, a bf16 generator's ``auto`` with its
weights in a parameter file). Its outputs are the data-tiled GEMM's (``pack_weights="load"``,
the weight packed at load) bit for bit: every bf16 value (subnormals, infinities, NaN), random
values over 2^+-20 with a bias, several blocks of K, any number of rows, a dynamic number. A
bf16 generator's prefill then reads its weights as stored: no packed copy beside the file."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch
from iree.compiler import ir
from torch.export import Dim

import compiler
from passes.decode_gemv import decode_step_reads_codes
from tests.e2e import checkpoints
from tests.e2e.filecheck import filecheck
from tests.e2e.host_isa import needs_avx512_bf16

pytestmark = [
    pytest.mark.models,
    needs_avx512_bf16,
]

CALLED = "CHECK: call @qmlir.gemm_bf16."


def _linear(weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.nn.Linear:
    n, k = weight.shape
    linear = torch.nn.Linear(k, n, bias=bias is not None).to(torch.bfloat16)
    with torch.no_grad():
        linear.weight.copy_(weight)
        if bias is not None:
            linear.bias.copy_(bias)
    return linear.eval()


def _pair(model: torch.nn.Module, x: torch.Tensor, tmp_path: Path, **kw):  # type: ignore[no-untyped-def]
    """The model with the kernel (``pack_weights="call"``) and with the data-tiled GEMM over
    the weight packed at load."""
    kernel = compiler.compile(model, (x,), "none", pack_weights="call", dump_ir=tmp_path, **kw)
    filecheck(CALLED, tmp_path / "03-fold-weights.mlir")
    return kernel, compiler.compile(model, (x,), "none", **kw)


def _bits(values: np.ndarray) -> np.ndarray:
    return np.asarray(values).astype(np.float32).view(np.uint32)


def test_every_bf16_value_multiplies_as_the_data_tiled_gemm(tmp_path: Path) -> None:
    """The weight holds all 65536 bf16 patterns (1024 rows of 64); x one-hot at column j, so
    each output is one product rounded to bf16, over 20 rows (a whole tile and a last one of
    4): the data-tiled GEMM's bits (a subnormal flushed, 0 x inf NaN, at the same places)."""
    n, k, rows = 1024, 64, 20
    bits = np.arange(n * k, dtype=np.uint32).astype(np.uint16).reshape(n, k)
    weight = torch.from_numpy(bits.astype(np.int16)).view(torch.bfloat16)
    kernel, tiled = _pair(_linear(weight), torch.zeros(rows, k, dtype=torch.bfloat16), tmp_path)
    for j in (0, 1, 31, 32, 63):
        x = np.zeros((rows, k), np.float32)
        x[:, j] = np.exp2(np.arange(rows) - 10.0)  # each row its own power of two
        xs = x.astype(ml_dtypes.bfloat16)
        got, want = np.asarray(kernel(xs)), np.asarray(tiled(xs))
        assert np.isnan(got.astype(np.float32)).any()  # the rows of infinities and NaN
        np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("with_bias", [True, False], ids=["bias", "rounded"])
def test_random_values_and_blocks_of_k(tmp_path: Path, with_bias: bool) -> None:
    """K 1152: three panels of 384, the outputs between them kept as f32 sums; 80 rows of the
    weight (five panels of 16), 37 rows of x; values over 2^+-20. With a bias: added to the f32
    sums and the sum rounded once, as the data-tiled GEMM (its bias fused) and torch round;
    without: the GEMM rounds its outputs as the last panel stores them (``.rounded``)."""
    torch.manual_seed(0)
    n, k, rows = 80, 1152, 37
    weight = torch.randn(n, k) * torch.exp2(torch.randint(-20, 20, (n, k)).float())
    bias = (torch.randn(n) * 2.0**10).to(torch.bfloat16) if with_bias else None
    linear = _linear(weight.to(torch.bfloat16), bias)
    kernel, tiled = _pair(linear, torch.zeros(rows, k, dtype=torch.bfloat16), tmp_path)
    called = "CHECK: call @qmlir.gemm_bf16.37x1152.80" + ("(" if with_bias else ".rounded(")
    filecheck(called, tmp_path / "03-fold-weights.mlir")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((rows, k)) * np.exp2(rng.integers(-20, 20, (rows, k)))
    xs = x.astype(np.float32).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(_bits(kernel(xs)), _bits(tiled(xs)))


@pytest.mark.parametrize("with_bias", [True, False], ids=["bias", "rounded"])
def test_a_dynamic_number_of_rows(tmp_path: Path, with_bias: bool) -> None:
    """One row (a last tile of one), 15, 16 (one whole tile), 17 and 600 (two workgroups of 512
    rows, the second's last tile partial), each as the data-tiled GEMM's and its static twin's;
    K 1024 (two panels) with a bias and without (the outputs rounded in the GEMM)."""
    torch.manual_seed(0)
    bias = torch.randn(64).to(torch.bfloat16) if with_bias else None
    linear = _linear(torch.randn(64, 1024).to(torch.bfloat16), bias)
    seq = ({1: Dim("seq", min=1, max=1024)},)
    x = torch.zeros(1, 40, 1024, dtype=torch.bfloat16)
    kernel, tiled = _pair(linear, x, tmp_path, dynamic_shapes=seq)
    static = compiler.compile(
        linear, (torch.zeros(1, 17, 1024, dtype=torch.bfloat16),), "none", pack_weights="call"
    )
    rng = np.random.default_rng(2)
    for t in (1, 15, 16, 17, 600):
        xs = rng.standard_normal((1, t, 1024)).astype(ml_dtypes.bfloat16)
        got = np.asarray(kernel(xs))
        assert got.shape == (1, t, 64)
        np.testing.assert_array_equal(_bits(got), _bits(tiled(xs)))
        if t == 17:
            np.testing.assert_array_equal(_bits(got), _bits(static(xs)))


def test_a_bf16_generators_prefill_reads_its_weights_as_stored(tmp_path: Path) -> None:
    """A bf16 Llama under ``none``, its weights in a parameter file (``auto``): each linear of
    the prefill calls the kernel (none is left to IREE's GEMM, so nothing packs a weight), the
    decode step the matrix-vector product; its prefill logits are those of the artifact that
    keeps the packed copy (``pack_weights="decoded"``) up to the bf16 roundings IREE skips where
    it fuses a GEMM's output into a product (the gated MLP), and as close to torch's."""
    lm = checkpoints.llama(dtype=torch.bfloat16, hidden_size=128, intermediate_size=256)
    gen = compiler.compile_generator(
        lm, recipe="none", max_seq_len=64, weights="external", dump_ir=tmp_path
    )
    filecheck(
        """CHECK-LABEL: func.func @main
CHECK: call @qmlir.gemm_bf16.1xDx128.128.rounded(
CHECK: call @qmlir.gemm_bf16.1xDx128.64.rounded(
CHECK: call @qmlir.gemm_bf16.1xDx128.256.rounded(
CHECK: call @qmlir.gemm_bf16.1xDx256.128.rounded(
CHECK-NOT: torch.aten.linear
CHECK: call @qmlir.gemv_bf16.1x1x128.256(
CHECK-LABEL: func.func @decode
CHECK-NOT: call @qmlir.gemm_bf16.
CHECK: return
""",
        tmp_path / "03-fold-weights.mlir",
    )
    with ir.Context():
        module = ir.Module.parse((tmp_path / "03-fold-weights.mlir").read_text())
        assert decode_step_reads_codes(module)
    packed = compiler.compile_generator(
        lm, recipe="none", max_seq_len=64, weights="external", pack_weights="decoded",
        dump_ir=tmp_path / "packed",
    )  # fmt: skip
    filecheck("CHECK-NOT: call @qmlir.gemm_bf16.", tmp_path / "packed" / "03-fold-weights.mlir")
    ids = np.random.default_rng(4).integers(0, 256, (1, 40)).astype(np.int64)
    got, want = gen.step(ids, 0), packed.step(ids, 0)
    with torch.no_grad():
        ref = lm(torch.from_numpy(ids)).logits[:, -1].float().numpy()
    # measured 6e-3 apart, each 6-7e-3 from torch (bf16 roundings); a wrong row would give ~1
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 2e-2
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 2e-2


@pytest.mark.parametrize(
    "kw",
    [
        {"pack_weights": "load"},
        {"pack_weights": "call", "decode_gemv": "off"},
        {"pack_weights": "call", "gemm_operands": "f32"},
        {"pack_weights": "call", "cpu": "x86-64-v3"},
    ],
    ids=["packed-at-load", "decode-gemv-off", "f32-operands", "avx2-code"],
)
def test_where_it_does_not_run(kw: dict[str, str], tmp_path: Path) -> None:
    linear = _linear(torch.ones(64, 128, dtype=torch.bfloat16))
    x = torch.zeros(20, 128, dtype=torch.bfloat16)
    compiler.compile(linear, (x,), "none", dump_ir=tmp_path, **kw)
    filecheck("CHECK-NOT: call @qmlir.gemm_bf16.", tmp_path / "03-fold-weights.mlir")
    filecheck("CHECK: torch.aten.linear", tmp_path / "03-fold-weights.mlir")
