"""``decode-attention`` (llvm-cpu, where ``decode-gemv`` runs): the attention of one query
position with static shapes runs as a kernel over K and V as stored
(``passes/decode_attention.py``). Checked against torch's SDPA (its math: every mask form, GQA
and not, bf16 caches, a key count that is not a multiple of 8, a row masked everywhere) and,
in generators, against the decomposed attention (``decode_gemv="off"``) step by step, a
sliding-window model's mask included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.pipeline.core import decode_gemv_isa
from compiler.pipeline.target import resolve_target
from passes.ir.choices import GemvIsa
from tests.e2e import checkpoints
from tests.e2e.filecheck import filecheck

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(
        decode_gemv_isa(resolve_target("llvm-cpu", None, "host")) is None,
        reason="this CPU lacks the instructions decode-gemv (and decode-attention) need",
    ),
]

HEADS, KV_HEADS, E = 4, 2, 16


class _Attention(torch.nn.Module):
    """SDPA of one query position; its mask (if any) a constant of the module."""

    def __init__(self, mask: torch.Tensor | None, gqa: bool) -> None:
        super().__init__()
        self.mask, self.gqa = mask, gqa

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=self.mask, enable_gqa=self.gqa
        )


def _inputs(s: int, kv_heads: int, dtype: torch.dtype, seed: int = 0) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, HEADS, 1, E, generator=g)
    k = torch.randn(1, kv_heads, s, E, generator=g)
    v = torch.randn(1, kv_heads, s, E, generator=g)
    return tuple(t.to(dtype) for t in (q, k, v))


def _run(
    mask: torch.Tensor | None,
    s: int,
    kv_heads: int = KV_HEADS,
    dtype: torch.dtype = torch.float32,
    dump: Path | None = None,
    mode: str = "auto",
    inputs: tuple[torch.Tensor, ...] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The compiled attention's output and torch's (its math in f64, as the inputs hold them)."""
    module = _Attention(mask, gqa=kv_heads != HEADS).eval()
    q, k, v = inputs if inputs is not None else _inputs(s, kv_heads, dtype)
    art = compiler.compile(module, (q, k, v), recipe="none", decode_gemv=mode, dump_ir=dump)
    out = art(q, k, v)
    got = (out.float().numpy() if isinstance(out, torch.Tensor) else np.asarray(out)).astype(
        np.float64
    )
    wide_mask = mask.double() if mask is not None and mask.is_floating_point() else mask
    with torch.no_grad():
        wide = _Attention(wide_mask, module.gqa)
        want = wide(q.double(), k.double(), v.double()).numpy()
    return got, want


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def test_a_bool_mask_runs_in_the_kernel(tmp_path: Path) -> None:
    s = 40
    keep = torch.ones(1, 1, 1, s, dtype=torch.bool)
    keep[..., 29:] = False  # positions past the sequence
    keep[..., 3] = False
    got, want = _run(keep, s, dump=tmp_path)
    assert _rel(got, want) < 1e-6
    filecheck(
        """CHECK: func.func @main(
CHECK-NOT: torch.aten.softmax
CHECK: call @qmlir.decode_attention.1x2x2x16.1x2x40x16f32.fill1x1x1x1x40(
CHECK-NOT: torch.aten.softmax
CHECK: stream.executable private @qmlir.decode_attention.{{.*}}$executable
CHECK: math.exp
CHECK: func.func private @qmlir.decode_attention.1x2x2x16.1x2x40x16f32.fill1x1x1x1x40(
CHECK: flow.dispatch
""",
        tmp_path / "04-lower.mlir",
    )


def test_without_the_kernel_softmax_stays(tmp_path: Path) -> None:
    got, want = _run(None, 24, dump=tmp_path, mode="off")
    assert _rel(got, want) < 1e-6
    filecheck("CHECK-NOT: qmlir.decode_attention\n", tmp_path / "04-lower.mlir")


@pytest.mark.parametrize("s", [40, 37])  # 37: the softmax's sums one lane a step
def test_an_added_float_mask(s: int) -> None:
    mask = torch.randn(1, 1, 1, s, generator=torch.Generator().manual_seed(1))
    mask[..., -5:] = float("-inf")
    mask[..., 0] = float("-inf")
    got, want = _run(mask, s)
    assert _rel(got, want) < 1e-6


@pytest.mark.parametrize("kv_heads", [HEADS, 1])  # one K/V head per query head; MQA's one
def test_no_mask_and_no_grouping(kv_heads: int) -> None:
    got, want = _run(None, 37, kv_heads=kv_heads)
    assert _rel(got, want) < 1e-6


def test_a_bf16_cache_is_widened_exactly() -> None:
    s = 48
    keep = torch.ones(1, 1, 1, s, dtype=torch.bool)
    keep[..., 40:] = False
    got, want = _run(keep, s, dtype=torch.bfloat16)
    # the result is rounded to bf16 once, as torch's: within a bf16 rounding of the exact one
    assert np.all(np.abs(got - want) <= 2.0**-8 * np.abs(want) + 1e-30)


def test_a_row_masked_everywhere_is_zero_as_torchs() -> None:
    keep = torch.zeros(1, 1, 1, 16, dtype=torch.bool)
    got, want = _run(keep, 16)
    assert (want == 0).all() and (got == 0).all()


def test_masked_positions_are_not_read() -> None:
    """A non-finite value at a masked position (a stale cache entry) does not reach the output
    (the kernel skips it; the decomposition multiplied it by a weight of 0: NaN)."""
    s = 24
    keep = torch.ones(1, 1, 1, s, dtype=torch.bool)
    keep[..., 20:] = False
    q, k, v = _inputs(s, KV_HEADS, torch.float32)
    v[:, :, 22] = float("inf")
    k[:, :, 23] = float("nan")
    got, want = _run(keep, s, inputs=(q, k, v))
    _, clean = _run(keep[..., :20], 20, inputs=(q, k[:, :, :20], v[:, :, :20]))
    assert np.isfinite(got).all()
    assert _rel(got, clean) < 1e-6


@pytest.mark.parametrize("arch", ["llama", "mistral", "llama-bf16"])  # mistral: a window of 32
def test_a_generators_prefills_and_decode_steps_match_the_decomposed_attention(
    arch: str, tmp_path: Path
) -> None:
    """Decode steps (this kernel) and prefills (``prefill-attention``'s) against the decomposed
    attention, teacher-forced past the window: a prompt of 40 tokens, a second prefill of 12
    at 40, then one step a token. A bf16 model (under ``none``: fp8-current's activation
    casts would turn each bf16 rounding moved into an FP8 one) multiplies q and K as bf16 pairs
    in its prefill on an AVX512-BF16 host; its layers' outputs rounded to bf16, the f32 sums'
    other order moves a bf16 rounding here and there (4e-3 of the logits measured, as much as
    its decode steps' one-row GEMMs already moved them: 1e-2 relative, not 1e-5)."""
    bf16 = arch.endswith("-bf16")
    model = checkpoints.decoder(arch.removesuffix("-bf16"))
    if bf16:
        model = model.to(torch.bfloat16)
    gens = {
        mode: compiler.compile_generator(
            model,
            recipe="none" if bf16 else "fp8-current",
            max_seq_len=64,
            decode_gemv=mode,
            dump_ir=tmp_path if mode == "auto" else None,
        )  # fmt: skip
        for mode in ("auto", "off")
    }
    pairs = (
        bf16 and decode_gemv_isa(resolve_target("llvm-cpu", None, "host")) is GemvIsa.AVX512_BF16
    )
    filecheck(
        f"""CHECK: func.func @main(
CHECK-COUNT-2: call @qmlir.prefill_attention.{"pairs." if pairs else ""}{{{{[0-9]}}}}
CHECK-NOT: torch.aten.softmax
CHECK: func.func @decode(
CHECK-COUNT-2: call @qmlir.decode_attention.
CHECK-NOT: torch.aten.softmax
CHECK: return
""",
        tmp_path / "02-recipe.mlir",
    )
    tokens = np.random.default_rng(0).integers(0, 256, 60)
    logits = {}
    for mode, gen in gens.items():
        steps = [np.asarray(gen.step(tokens[None, :40], 0))]
        steps.append(np.asarray(gen.step(tokens[None, 40:52], 40)))
        for i in range(52, len(tokens)):
            steps.append(np.asarray(gen.step(tokens[None, i : i + 1], i)))
        logits[mode] = np.stack(steps)
    assert _rel(logits["auto"], logits["off"]) < (1e-2 if bf16 else 1e-5)
