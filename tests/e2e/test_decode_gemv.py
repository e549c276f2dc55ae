"""``decode-gemv`` (llvm-cpu, a CPU with AVX512-BF16 and AVX512-VBMI, or with AVX2, FMA and
F16C): a one-row FP8 or FP4 GEMM (per-tensor scales, power-of-two block scales as fp8-block's
and mxfp8's, nvfp4) runs as a matrix-vector product that decodes the weight's codes
in its loop (``passes/lowering/cpu/gemv.py``). Its decode is exact for every code (subnormals
and NaN included): with one non-zero input each output is a single product, bit for bit the
data-tiled GEMM's (``decode_gemv="off"``); with random inputs the two differ only in the order
of their f32 sums. Each variant this host can run is checked: the host's own and, on an
AVX-512 host, AVX2 code (``--cpu x86-64-v3``). A CPU with neither (``--cpu x86-64-v2``) never
gets it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from iree.compiler import ir

import compiler
from compiler.pipeline.core import decode_gemv_isa
from compiler.pipeline.target import resolve_target
from passes.decode_gemv import decode_step_reads_codes, gemv_variant
from passes.ir.dialect import GemvIsa
from passes.ir.formats import E2M1, E4M3
from passes.lowering.cpu.gemv import code_value
from tests.e2e import checkpoints
from tests.e2e.filecheck import filecheck
from tests.e2e.host_isa import HOST_ISA

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

N = 256  # rows: with K columns, column j holds every code (n + j) % 256 once

needs_gemv = pytest.mark.skipif(
    HOST_ISA is None,
    reason="this CPU lacks AVX2, FMA or F16C: no artifact for it takes decode-gemv",
)
# the AVX2 variant on an AVX-512 host (x86-64-v3 code runs there; on an AVX2 host, 'host' is it)
needs_avx512_host = pytest.mark.skipif(
    HOST_ISA is not GemvIsa.AVX512_BF16, reason="AVX2 code is this host's own: 'host' runs it"
)


def _every_code_linear(k: int) -> torch.nn.Linear:
    """A linear whose weight holds E4M3 values: column j every code (n + j) % 256 down its
    rows, 448 among them (so fp8-current's weight scale is 1 and its codes are these), one NaN
    code in row 5 (its amax ignores it; row 5's outputs are NaN)."""
    codes = (np.arange(N)[:, None] + np.arange(k)[None, :]) % 256
    codes[(codes & 0x7F) == 0x7F] = 0x7E  # 448
    codes[5, 3] = 0x7F
    values = np.vectorize(lambda c: code_value(E4M3, int(c)))(codes).astype(np.float32)
    linear = torch.nn.Linear(k, N, bias=False)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(values))
    return linear.eval()


def _every_fp4_code_linear(k: int) -> torch.nn.Linear:
    """A linear whose weight holds E2M1 values: each 16 of a row every code (n + j) % 16, so
    every block's amax is 6 and nvfp4's scales (448 a block, 448 x 6 / 6 global) and mxfp4's
    (2^0 a block of 32) give these codes back."""
    codes = (np.arange(N)[:, None] + np.arange(k)[None, :]) % 16
    values = np.vectorize(lambda c: code_value(E2M1, int(c)))(codes).astype(np.float32)
    linear = torch.nn.Linear(k, N, bias=False)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(values))
    return linear.eval()


def _compiled(  # type: ignore[no-untyped-def]
    linear: torch.nn.Linear,
    mode: str,
    dump: Path | None = None,
    cpu: str = "host",
    recipe: str = "fp8-current",
):
    x = torch.zeros(1, linear.in_features)
    return compiler.compile(linear, (x,), recipe=recipe, decode_gemv=mode, cpu=cpu, dump_ir=dump)


CASES = [
    ("fp8-current", 128),  # AVX-512: two chunks of 64 codes a loop step
    ("fp8-current", 192),  # AVX-512: one
    ("fp8-block", 256),  # 1 x 128 and 128 x 128 blocks, fp32 scales
    ("mxfp8", 192),  # 1 x 32 blocks, E8M0 scales (AVX2: 6 a row, decoded one by one)
    ("nvfp4", 256),  # E2M1 codes two a byte, E4M3 scales of 1 x 16 blocks
    ("mxfp4", 256),  # E2M1 codes two a byte, E8M0 scales of 1 x 32 blocks (AVX2 only)
]


@needs_gemv
@pytest.mark.parametrize(("recipe", "k"), CASES)
def test_every_code_decodes_as_the_data_tiled_gemm_does(
    recipe: str, k: int, tmp_path: Path
) -> None:
    _check_every_code(recipe, k, "host", tmp_path)


@needs_avx512_host
@pytest.mark.parametrize(("recipe", "k"), CASES[1:])
def test_every_code_decodes_as_the_data_tiled_gemm_does_in_avx2_code(
    recipe: str, k: int, tmp_path: Path
) -> None:
    _check_every_code(recipe, k, "x86-64-v3", tmp_path)


def _check_every_code(recipe: str, k: int, cpu: str, tmp_path: Path) -> None:
    fp4 = recipe in ("nvfp4", "mxfp4")
    linear = _every_fp4_code_linear(k) if fp4 else _every_code_linear(k)
    gemv = _compiled(linear, "auto", tmp_path, cpu=cpu, recipe=recipe)
    kb = k // 2 if fp4 else k  # B's bytes a row
    isa = decode_gemv_isa(resolve_target("llvm-cpu", None, cpu))
    assert isa is not None
    filecheck(
        f"""CHECK: stream.executable private @{{{{.*}}}}.1x{kb}.{N}x{kb}{{{{.*}}}}$gemv_executable
CHECK: func.func private @qmlir.scaled_matmul.{{{{.*}}}}.nt.1x{kb}.{N}x{kb}
CHECK-SAME: qmlir.gemv = "{gemv_variant(isa, fp4).value}"
CHECK: flow.dispatch @{{{{.*}}}}$gemv_executable::@{{{{.*}}}}$gemv
""",
        tmp_path / "04-lower.mlir",
    )
    tiled = _compiled(linear, "off", cpu=cpu, recipe=recipe)
    for j in (0, 1, k // 2, k - 1):  # one non-zero input: each output a single product
        x = np.zeros((1, k), np.float32)
        x[0, j] = 1.0
        got, want = np.asarray(gemv(x)), np.asarray(tiled(x))
        assert fp4 or (np.isnan(got[0, 5]) and np.isnan(want[0, 5]))
        np.testing.assert_array_equal(got, want)
    x = np.random.default_rng(0).standard_normal((1, k)).astype(np.float32)
    got, want = np.asarray(gemv(x)), np.asarray(tiled(x))
    keep = np.arange(N) != (-1 if fp4 else 5)
    rel = np.linalg.norm(got[0, keep] - want[0, keep]) / np.linalg.norm(want[0, keep])
    assert rel < 1e-6, rel  # the f32 sums in another order


@needs_gemv
@pytest.mark.parametrize("cpu", ["host", "x86-64-v3"])
def test_the_largest_fp4_sums_are_exact(cpu: str) -> None:
    """nvfp4's largest products everywhere: weights of +-6 (each row one sign pattern), x of
    +-6 (random signs), every block's scales 448 (E4M3's largest), so each 16 codes' sum of
    products reaches 16 x 36 in magnitude. AVX2's integer loop sums 8 a lane in 16- and 32-bit
    integers (at most 2304, never saturating) less its offsets. Every block's scales being the
    same, every partial sum is an exact integer times them, so the output is bit for bit the
    data-tiled GEMM's in any order of sums, and the product to the global scales' rounding (a
    global decode scale of 6 / (6 x 448) is no f32)."""
    if cpu == "x86-64-v3" and HOST_ISA is not GemvIsa.AVX512_BF16:
        pytest.skip("AVX2 code is this host's own: 'host' runs it")
    k = 256
    rng = np.random.default_rng(1)
    signs = rng.choice([-1.0, 1.0], size=(N, k)).astype(np.float32)
    signs[0], signs[1] = 1.0, -1.0  # a row of +6 and one of -6
    linear = torch.nn.Linear(k, N, bias=False)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(6.0 * signs))
    gemv = _compiled(linear.eval(), "auto", cpu=cpu, recipe="nvfp4")
    tiled = _compiled(linear, "off", cpu=cpu, recipe="nvfp4")
    peaks = []
    for x_signs in (np.ones(k), rng.choice([-1.0, 1.0], size=k)):
        x = (6.0 * x_signs).astype(np.float32)[None, :]
        want = x.astype(np.float64) @ (6.0 * signs.T.astype(np.float64))
        got = np.asarray(gemv(x))
        np.testing.assert_array_equal(got, np.asarray(tiled(x)))
        np.testing.assert_allclose(got, want, rtol=1e-6)
        peaks.append(want[0, :2].tolist())
    assert peaks[0] == [36 * k, -36 * k]  # x of +6 against the rows of +6 and -6


@needs_gemv
@pytest.mark.parametrize(
    ("recipe", "k", "block_rows", "block_cols"),
    [
        ("fp8-block", 384, 128, 128),  # 2 row blocks x 3 K blocks of 128 x 128
        ("mxfp8", 320, 1, 32),  # 10 K blocks a row: AVX2 decodes 8 as a vector, 2 one by one
    ],
)
def test_each_row_and_k_block_takes_its_own_scales(
    recipe: str, k: int, block_rows: int, block_cols: int
) -> None:
    """The every-code weight times a power of two per weight block (2^-3 .. 2^3, varying along
    rows and K), so the block scales differ between row blocks (fp8-block: AVX2 code makes
    each K block's factor once for a workgroup's row block), between rows (mxfp8: once a row)
    and between K blocks. With one non-zero input each output is a single product, bit for bit
    the data-tiled GEMM's; with random inputs the two differ in the order of their sums."""
    linear = _every_code_linear(k)
    rows = np.arange(N)[:, None] // block_rows
    cols = np.arange(k)[None, :] // block_cols
    powers = 2.0 ** ((rows * 3 + cols * 5) % 7 - 3)
    with torch.no_grad():
        linear.weight.mul_(torch.from_numpy(powers.astype(np.float32)))
    gemv = _compiled(linear, "auto", recipe=recipe)
    tiled = _compiled(linear, "off", recipe=recipe)
    for j in (0, 130, 200, 300, k - 1):
        x = np.zeros((1, k), np.float32)
        x[0, j] = 0.75
        np.testing.assert_array_equal(np.asarray(gemv(x)), np.asarray(tiled(x)))
    x = np.random.default_rng(2).standard_normal((1, k)).astype(np.float32)
    got, want = np.asarray(gemv(x))[0], np.asarray(tiled(x))[0]
    keep = np.arange(N) != 5  # row 5 holds a NaN code
    assert np.isnan(got[5]) and np.isnan(want[5])
    rel = np.linalg.norm(got[keep] - want[keep]) / np.linalg.norm(want[keep])
    assert rel < 1e-6, rel


def test_a_cpu_without_its_instructions_keeps_the_data_tiled_gemm(tmp_path: Path) -> None:
    linear = _every_code_linear(128)
    _compiled(linear, "auto", tmp_path, cpu="x86-64-v2")
    filecheck(
        """CHECK-NOT: stream.executable
CHECK-NOT: qmlir.gemv
CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.256x128
CHECK: linalg.matmul
""",
        tmp_path / "04-lower.mlir",
    )


def test_an_unknown_mode_is_an_error() -> None:
    with pytest.raises(compiler.QmlirError, match="decode_gemv 'fast' is not one of auto, off"):
        _compiled(_every_code_linear(64), "fast")


@needs_gemv
def test_a_decode_step_that_reads_only_codes_keeps_no_decoded_copies(tmp_path: Path) -> None:
    """``pack_weights="auto"`` (a generator, weights external) keeps decoded copies of the
    weights only where the decode step multiplies some weight through them: not when every
    GEMM of ``@decode`` reads its codes (fp8-current, hidden 128), but when a layer is left in
    high precision (``--exclude``)."""
    lm = checkpoints.llama(hidden_size=128, intermediate_size=256, max_position_embeddings=64)
    seen = {}
    for name, exclude in (("all", ()), ("excluded", ("*lm_head",))):
        dump = tmp_path / name
        compiler.compile_generator(
            lm, recipe="fp8-current", max_seq_len=32, weights="external", exclude=exclude,
            dump_ir=dump,
        )  # fmt: skip
        with ir.Context():
            module = ir.Module.parse((dump / "03-fold-weights.mlir").read_text())
            seen[name] = decode_step_reads_codes(module)
    assert seen == {"all": True, "excluded": False}


@pytest.mark.parametrize("recipe", ["nvfp4", "mxfp4"])
def test_fp4_gemms_take_avx2s_loop_in_avx512_code(recipe: str, tmp_path: Path) -> None:
    """FP4 one-row GEMMs take AVX2's integer loop in code for a CPU with AVX512-BF16 and
    AVX512-VBMI (compiled here, not run): faster there than the AVX-512 loop (nvfp4) or the
    data-tiled GEMM (mxfp4, which has no AVX-512 loop)."""
    linear = _every_fp4_code_linear(256)
    x = torch.zeros(1, 256)
    compiler.compile(
        linear, (x,), recipe=recipe, decode_gemv="auto", cpu="sapphirerapids", dump_ir=tmp_path
    )
    filecheck(
        f"""CHECK: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x128.{N}x128
CHECK-SAME: qmlir.gemv = "avx2"
CHECK: flow.dispatch @{{{{.*}}}}$gemv_executable::@{{{{.*}}}}$gemv
""",
        tmp_path / "04-lower.mlir",
    )


@needs_gemv
def test_mxfp4_nan_blocks_give_nan_as_the_data_tiled_gemm_does() -> None:
    """A NaN in a weight block (its E8M0 scale 0xFF) makes that row's output NaN; a NaN in x
    makes every output NaN; the other rows as the data-tiled GEMM's (the f32 sums reordered)."""
    linear = _every_fp4_code_linear(256)
    with torch.no_grad():
        linear.weight[5, 40] = float("nan")
    gemv = _compiled(linear, "auto", recipe="mxfp4")
    tiled = _compiled(linear, "off", recipe="mxfp4")
    x = np.random.default_rng(1).standard_normal((1, 256)).astype(np.float32)
    got, want = np.asarray(gemv(x)), np.asarray(tiled(x))
    assert np.isnan(got[0, 5]) and np.isnan(want[0, 5])
    keep = np.arange(N) != 5
    np.testing.assert_allclose(got[0, keep], want[0, keep], rtol=1e-5, atol=1e-5)
    x[0, 100] = np.nan
    assert np.isnan(np.asarray(gemv(x))).all() and np.isnan(np.asarray(tiled(x))).all()


@needs_gemv
def test_fp8_rowwise_runs_as_a_matrix_vector_product(tmp_path: Path) -> None:
    """fp8-rowwise's one-row GEMM: the codes' products summed in the loop, each row's sum times
    x's scale and that row's (per-tensor scales' way); the data-tiled GEMM multiplies decoded
    values (code x scale, rounded) instead, so the two agree to f32 rounding, not bit for bit.
    A NaN weight code's row is NaN in both."""
    linear = _every_code_linear(192)
    gemv = _compiled(linear, "auto", tmp_path, recipe="fp8-rowwise")
    filecheck(
        f"""CHECK: func.func private @qmlir.scaled_matmul.{{{{.*}}}}.nt.1x192.{N}x192
CHECK-SAME: qmlir.gemv = "{HOST_ISA.value if HOST_ISA else ""}"
CHECK: flow.dispatch @{{{{.*}}}}$gemv_executable::@{{{{.*}}}}$gemv
CHECK: tensor<{N}xf32>, tensor<1x4xf32>, tensor<1x{N}xf32>)
""",
        tmp_path / "04-lower.mlir",
    )
    tiled = _compiled(linear, "off", recipe="fp8-rowwise")
    keep = np.arange(N) != 5
    for seed in range(2):
        x = np.random.default_rng(seed).standard_normal((1, 192)).astype(np.float32)
        got, want = np.asarray(gemv(x)), np.asarray(tiled(x))
        assert np.isnan(got[0, 5]) and np.isnan(want[0, 5])
        rel = np.linalg.norm(got[0, keep] - want[0, keep]) / np.linalg.norm(want[0, keep])
        assert rel < 1e-6, rel
