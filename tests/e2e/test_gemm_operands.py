"""The scaled GEMMs' operand type on llvm-cpu (``--gemm-operands``, passes/gemm_operands.py):
bf16 operands hold every decoded FP8/FP4 value exactly, so a model compiled with them computes
the same products as with f32 ones; only the order of the f32 sums may differ. ``auto`` picks
bf16 on a CPU with AVX512-BF16 only, the cuda target refuses bf16, the artifact records it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import compiler
from compiler.pipeline.options import CompileOptions, gemm_operand_type
from passes.base.errors import QmlirError
from passes.base.target import Cpu, Target
from passes.recipes import get_recipe

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`


class Stack(torch.nn.Module):
    """Four 128 -> 128 linears, one per recipe below."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(128, 128) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.nn.functional.gelu(layer(x))
        return x


RECIPES = {"layers.0": "mxfp8", "layers.1": "nvfp4", "layers.2": "fp8-block"}  # 3: fp8-current


def test_bf16_operands_compute_the_f32_products() -> None:
    torch.manual_seed(0)
    model = Stack().eval()
    x = torch.randn(24, 128)
    arts = {
        g: compiler.compile(model, (x,), "fp8-current", layer_recipes=RECIPES, gemm_operands=g)
        for g in ("f32", "bf16")
    }
    assert {g: a.metadata["gemm_operands"] for g, a in arts.items()} == {
        "f32": "f32",
        "bf16": "bf16",
    }
    with torch.no_grad():
        want = model(x).numpy()
    rng = np.random.default_rng(0)
    for rows in (x.numpy(), rng.standard_normal((24, 128), dtype=np.float32) * 30):
        f32, bf16 = arts["f32"](rows), arts["bf16"](rows)
        # the same products, summed in another order: f32 rounding apart, no more
        np.testing.assert_allclose(bf16, f32, rtol=1e-5, atol=1e-5)
        assert np.abs(bf16 - f32).max() <= 1e-5 * np.abs(f32).max()
    err = {g: np.linalg.norm(a(x.numpy()) - want) for g, a in arts.items()}
    assert err["bf16"] == pytest.approx(err["f32"], rel=1e-3)


def _cpu(*features: str) -> Cpu:
    return Cpu("host", "x", "x86_64", features)


def test_auto_picks_bf16_only_with_avx512_bf16() -> None:
    auto = CompileOptions(recipe=get_recipe("fp8-current"), target=Target(cpu=_cpu()))
    assert gemm_operand_type(auto, _cpu("avx2", "avx512f", "avx512bf16")) == "bf16"
    assert gemm_operand_type(auto, _cpu("avx2", "avx512f")) == "f32"
    assert gemm_operand_type(auto, None) == "f32"  # cuda: the GEMMs take the codes
    forced = CompileOptions(
        recipe=get_recipe("fp8-current"), target=Target(cpu=_cpu()), gemm_operands="bf16"
    )
    assert gemm_operand_type(forced, _cpu("avx2")) == "bf16"
    with pytest.raises(QmlirError, match="--gemm-operands bf16 needs --target llvm-cpu"):
        gemm_operand_type(forced, None)
    bad = CompileOptions(
        recipe=get_recipe("fp8-current"), target=Target(cpu=_cpu()), gemm_operands="f16"
    )
    with pytest.raises(QmlirError, match="unknown --gemm-operands 'f16'"):
        gemm_operand_type(bad, _cpu())
