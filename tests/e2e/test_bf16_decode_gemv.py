"""``bf16-decode-gemv``: a decode step's one-row linear of a bf16 weight (widened by
``widen-bf16-matmuls``) as a matrix-vector product over the bf16 weight as stored
(``passes/bf16_decode_gemv.py``). Its widening in registers is exact for every bf16 value
(subnormals read as zero, as every CPU dispatch of IREE's flushes them; infinities and NaN
propagate); with random values its sums are f32 sums of the exact products. A bf16 generator's
decode step then holds no f32 copy of its weights (``pack_weights="auto"`` keeps none) and gives
the data-tiled step's logits (``decode_gemv="off"``) up to its sums' order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import iree.compiler as iree_compiler
import ml_dtypes
import numpy as np
import pytest
import torch
from iree import runtime as iree_runtime
from iree.compiler import ir

import compiler
from passes.bf16_decode_gemv import gemv_definitions
from passes.decode_gemv import decode_step_reads_codes
from passes.ir.types import TensorInfo
from tests.e2e import checkpoints
from tests.e2e.filecheck import filecheck

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

K = 64
N = 1024  # N x K = every bf16 bit pattern once: row r holds patterns 64r .. 64r + 63


def _gemv(n: int, k: int) -> Any:
    """The matrix-vector product alone, compiled for this host: ``f(x [1, 1, k] f32, w [n, k]
    bf16) -> [1, 1, n] f32``."""
    name = "qmlir.gemv_bf16.test"
    x = TensorInfo((1, 1, k), "f32")
    main = f"""
func.func @main(%x: tensor<1x1x{k}xf32>, %w: tensor<{n}x{k}xbf16>) -> tensor<1x1x{n}xf32> {{
  %r = call @{name}(%x, %w) : (tensor<1x1x{k}xf32>, tensor<{n}x{k}xbf16>) -> tensor<1x1x{n}xf32>
  return %r : tensor<1x1x{n}xf32>
}}"""
    source = "module {\n" + "\n".join(gemv_definitions(name, x, n, k)) + main + "\n}"
    vmfb = iree_compiler.compile_str(
        source, target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"]
    )
    context = iree_runtime.SystemContext(config=iree_runtime.Config("local-task"))
    context.add_vm_module(iree_runtime.VmModule.copy_buffer(context.instance, vmfb))
    function = context.modules.module["main"]
    return lambda xs, w: np.asarray(function(xs, w)).reshape(n)


def _widened(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def test_every_bf16_value_is_widened_exactly() -> None:
    """x one-hot at column j: output n is weight (n, j) itself, bit for bit, for all 65536 bf16
    patterns over the 64 columns; a subnormal or a zero gives +0 (flushed; the sum starts at +0);
    the rows holding infinities and NaN (patterns 0x7F80.., 0xFF80..) are NaN (0 x inf)."""
    bits = np.arange(N * K, dtype=np.uint32).astype(np.uint16).reshape(N, K)
    gemv = _gemv(N, K)
    values = _widened(bits)
    special = ~np.isfinite(values).all(axis=1)
    assert list(np.flatnonzero(special)) == [510, 511, 1022, 1023]
    for j in range(K):
        x = np.zeros((1, 1, K), np.float32)
        x[0, 0, j] = 1.0
        got = gemv(x, bits.view(ml_dtypes.bfloat16))
        want = values[:, j].copy()
        want[np.abs(want) < np.finfo(np.float32).tiny] = 0.0  # subnormals and -0: +0
        assert np.isnan(got[special]).all()
        np.testing.assert_array_equal(got[~special].view(np.uint32), want[~special].view(np.uint32))


def test_random_rows_are_f32_sums_of_exact_products() -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((96, 4096)).astype(ml_dtypes.bfloat16)
    x = rng.standard_normal((1, 1, 4096)).astype(np.float32)
    got = _gemv(96, 4096)(x, w)
    products = x.reshape(-1).astype(np.float64) * w.astype(np.float64)
    want = products.sum(axis=1)
    bound = 4096 * 2.0**-24 * np.abs(products).sum(axis=1)  # f32 sums of 4096 exact products
    assert (np.abs(got - want) <= bound).all()
    assert np.abs(got - want).max() > 0  # f32 sums, not exact ones: the check has teeth


@pytest.mark.parametrize("operands", ["f32", "bf16"])
def test_a_bias_is_added_before_the_one_rounding_to_bf16(operands: str) -> None:
    """A one-row bf16 linear with a bias, x one-hot (each output one exact product, no order
    of sums to differ): the product plus the bias in f32, rounded to bf16 once, as torch's bf16
    linear gives, bit for bit (bf16 operands: rounding the product before adding the bias
    moved 31 of these 1024 outputs by a last bit)."""
    torch.manual_seed(0)
    n, k = 1024, 64
    linear = torch.nn.Linear(k, n).to(torch.bfloat16).eval()
    with torch.no_grad():
        linear.bias.mul_(64.0)  # the bias's own bits matter to the sum's rounding
    x = torch.zeros(1, k, dtype=torch.bfloat16)
    x[0, 5] = 1.5
    gemv = compiler.compile(linear, (x,), "none", gemm_operands=operands)
    with torch.no_grad():
        want = linear(x).float().numpy()
    got = np.asarray(gemv(x.float().numpy().astype(ml_dtypes.bfloat16))).astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("operands", ["f32", "bf16"])
def test_a_bf16_generator_decodes_over_its_bf16_weights(tmp_path: Path, operands: str) -> None:
    """A bf16 Llama under ``none``, its GEMMs on f32 operands (widened: a CPU without
    AVX512-BF16) or on bf16 ones (IREE's bf16 GEMM, ``auto`` on an AVX512-BF16 CPU; forced
    here): ``@decode``'s linears and the prefill's head (over the last position) call the
    matrix-vector product over the stored bf16 weights, no widened copy of a weight is left in
    it (so ``pack_weights="auto"`` keeps no decoded copies), and its decode step gives the
    data-tiled step's logits up to the order of f32 sums and the bf16 roundings after them."""
    lm = checkpoints.llama(dtype=torch.bfloat16, hidden_size=128, intermediate_size=256)
    gemv = compiler.compile_generator(
        lm, recipe="none", max_seq_len=32, weights="external", gemm_operands=operands,
        dump_ir=tmp_path,
    )  # fmt: skip
    filecheck(
        """CHECK-LABEL: func.func @main
CHECK: call @qmlir.gemv_bf16.1x1x128.256(
CHECK-LABEL: func.func @decode
CHECK-NOT: call @qmlir.widen_bf16.{{[0-9]+}}x{{[0-9]+}}(
CHECK: call @qmlir.gemv_bf16.1x1x128.128(
CHECK-NOT: call @qmlir.widen_bf16.{{[0-9]+}}x{{[0-9]+}}(
CHECK: return
""",
        tmp_path / "03-fold-weights.mlir",
    )
    with ir.Context():
        module = ir.Module.parse((tmp_path / "03-fold-weights.mlir").read_text())
        assert decode_step_reads_codes(module)
    tiled = compiler.compile_generator(
        lm, recipe="none", max_seq_len=32, weights="external", gemm_operands=operands,
        decode_gemv="off",
    )  # fmt: skip
    ids = np.random.default_rng(2).integers(0, 256, (1, 9))
    steps = []
    for gen in (gemv, tiled):  # the same prompt, then one decode step at position 8
        gen.step(ids[:, :8], 0)
        steps.append(gen.step(ids[:, 8:], 8))
    got, want = steps
    # the same products, f32 sums in another order, and every layer's output rounded to bf16:
    # a last-bit difference flips a rounding here and there (measured 6e-3; a wrong row or
    # operand would give about 1)
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 2e-2
    top2 = np.sort(want[0])[-2:]
    if top2[1] - top2[0] > 0.1 * np.std(want):  # a clear top-1
        assert got[0].argmax() == want[0].argmax()
