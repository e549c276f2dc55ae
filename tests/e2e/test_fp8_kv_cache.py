"""A generator's FP8 KV cache (``kv_cache="fp8"``): E4M3 codes with an E8M0 scale per 32 values
of each head vector, written once per token. The compiled quantize/dequantize equal the torch
reference of ``compiler/frontend/kv_codes.py`` bit for bit (adversarial values included); a
decode step equals the prefill at the same position; greedy tokens follow the model-dtype cache
on a sample with clear margins, at about half its bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.frontend.kv_codes import kv_dequantize, kv_quantize
from passes.base.errors import QmlirError
from tests.e2e import checkpoints
from tests.e2e.cli_runner import run as cli

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`


class _RoundTrip(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        codes, scales = kv_quantize(x)
        return codes, scales, kv_dequantize(codes, scales)


def _adversarial(head_dim: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    rows = [rng.standard_normal(head_dim) * 10.0 ** rng.integers(-6, 6) for _ in range(40)]
    special = np.zeros((8, head_dim))
    special[1, :] = 2.0**-140  # f32 subnormals only
    special[2, 3] = np.inf
    special[3, 5] = np.nan
    special[3, 6] = 7.0
    special[4, :] = 448.0 * 2.0 ** np.arange(head_dim) / 2.0**20  # each block's amax a power
    special[5, :] = -3.0e38  # near f32's max
    special[6, ::2] = 1.0 + 2.0**-4  # an E4M3 rounding tie (1 + ulp/2)
    special[7, :] = np.linspace(-1, 1, head_dim) * 2.0**-9  # E4M3 subnormals after scaling
    return np.concatenate([np.stack(rows), special]).astype(np.float32)


@pytest.mark.parametrize("head_dim", [48, 64])  # a partial block (generic dequantize), whole ones
def test_compiled_codes_equal_the_torch_reference(head_dim: int) -> None:
    x = torch.from_numpy(_adversarial(head_dim))
    art = compiler.compile(_RoundTrip(), (x,), "none")
    with pytest.warns(RuntimeWarning, match="1 NaN and 1 inf"):
        codes, scales, values = (np.asarray(v) for v in art(x.numpy()))
    assert codes.dtype == scales.dtype == np.uint8  # the signature's ui8 (IREE hands back i8)
    want_codes, want_scales, want_values = (t.numpy() for t in _RoundTrip()(x))
    np.testing.assert_array_equal(scales, want_scales)
    np.testing.assert_array_equal(codes, want_codes)
    np.testing.assert_array_equal(np.isnan(values), np.isnan(want_values))
    np.testing.assert_array_equal(np.nan_to_num(values), np.nan_to_num(want_values))
    kept = np.isfinite(x.numpy()).all(axis=1) & (np.abs(x.numpy()).max(axis=1) < 1e30)
    a, b = x.numpy()[kept], values[kept]
    rel = np.abs(b - a) / np.maximum(np.abs(a), 1e-30)
    big = np.abs(a) > np.abs(a).max(axis=1, keepdims=True) / 8
    assert rel[big].max() <= 2.0**-4  # E4M3's half ulp, for values near their block's amax


@pytest.fixture(scope="module")
def generators() -> tuple[torch.nn.Module, compiler.Generator, compiler.Generator]:
    lm = checkpoints.llama(max_position_embeddings=128)
    model = compiler.compile_generator(lm, recipe="none", max_seq_len=48, max_batch=2)
    fp8 = compiler.compile_generator(lm, recipe="none", max_seq_len=48, max_batch=2, kv_cache="fp8")
    return lm, model, fp8


def test_the_cache_is_e4m3_codes_and_scales(generators) -> None:  # type: ignore[no-untyped-def]
    _, model, fp8 = generators
    assert fp8.generation.kv_cache == "fp8" and fp8.generation.cache_dtype == "e4m3"
    held = {b.name: b for b in fp8.record.buffers}
    keys, scales = held["key_cache_0"], held["key_scales_0"]
    assert keys.dtype == scales.dtype == "ui8"
    assert fp8.buffers()["key_cache_0"].dtype == np.uint8
    assert scales.shape == (*keys.shape[:-1], -(-keys.shape[-1] // 32))
    fp8_bytes = sum(np.prod(b.shape) for b in fp8.record.buffers if b.dtype == "ui8")
    f32_bytes = 4 * sum(np.prod(b.shape) for b in model.record.buffers if b.dtype == "f32")
    assert fp8_bytes < 0.27 * f32_bytes  # 1 + 1/32 bytes a value against 4


def test_decode_steps_equal_the_prefill_and_follow_the_model_cache(generators) -> None:  # type: ignore[no-untyped-def]
    lm, model, fp8 = generators
    ids = torch.randint(0, 256, (2, 8), generator=torch.Generator().manual_seed(1)).numpy()
    assert fp8.dynamic_batch
    both = fp8.generate(ids, max_new_tokens=24, eos_token_id=[])  # a batch of two
    for row in (0, 1):  # rows are independent: each as it is alone (one row of two)
        alone = fp8.generate(ids[row : row + 1], max_new_tokens=24, eos_token_id=[])
        np.testing.assert_array_equal(alone[0], both[row])
    # the first prompt's tokens as the model-dtype cache's (the second's top-2 logits are 0.002
    # apart at its second new token: FP8 keys flip that one)
    tokens = both[:1]
    np.testing.assert_array_equal(tokens, model.generate(ids[:1], 24, eos_token_id=[]))
    fp8.step(tokens[:, :20], 0)
    decoded = fp8.step(tokens[:, 20:21], 20)  # the decode function (@decode)
    decoded_cache = fp8.buffers()
    prefilled = fp8.step(tokens[:, :21], 0)  # @main
    for name, codes in fp8.buffers().items():  # the same codes and scales either way
        if codes.ndim == 4:  # [batch, kv heads, positions, ...]; the lengths are counters
            np.testing.assert_array_equal(decoded_cache[name][:, :, :21], codes[:, :, :21], name)
    # the logits: the same up to the order of f32 sums (the two functions compile apart)
    np.testing.assert_allclose(decoded, prefilled, rtol=1e-5, atol=1e-6)
    exact = model.step(tokens[:, :21], 0)
    assert np.linalg.norm(prefilled - exact) / np.linalg.norm(exact) < 0.05


def test_the_cli_compiles_an_fp8_cache_and_refuses_it_for_cuda(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = checkpoints.save(checkpoints.llama(max_position_embeddings=64), tmp_path / "llama")
    out = tmp_path / "gen.vmfb"
    args = ["compile", str(folder), "--generate", "--max-seq-len", "24", "--kv-cache", "fp8"]
    code, stdout, err = cli(capsys, *args, "--recipe", "fp8-block", "-o", str(out))
    assert code == 0, err
    code, stdout, _ = cli(capsys, "inspect", str(out))
    assert code == 0 and "e4m3 (fp8: an E8M0 scale per 32 values)" in stdout
    code, stdout, _ = cli(
        capsys, "generate", str(out), "--prompt-ids", "1,2,3", "--max-new-tokens", "4"
    )
    assert code == 0
    with pytest.raises(QmlirError, match="kv_cache 'fp8' compiles for llvm-cpu only"):
        compiler.compile_generator(folder, target="cuda", kv_cache="fp8", max_seq_len=24)
    with pytest.raises(QmlirError, match="kv_cache 'int4' is not implemented"):
        compiler.compile_generator(folder, kv_cache="int4", max_seq_len=24)
