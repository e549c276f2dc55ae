"""The scaled GEMMs' operand type on llvm-cpu (``--gemm-operands``, passes/gemm_operands.py):
bf16 operands hold every decoded FP8/FP4 value exactly, so a model compiled with them computes
the same products as with f32 ones; only the order of the f32 sums may differ. ``auto`` picks
bf16 on a CPU with AVX512-BF16 only, the cuda target refuses bf16, the artifact records it.
With f32 operands a bf16 model's high-precision matmuls multiply f32 too
(passes/widen_bf16_matmuls.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.pipeline.options import CompileOptions, gemm_operand_type
from passes.base.errors import QmlirError
from passes.base.target import Cpu, Target
from passes.recipes import get_recipe
from tests.e2e.filecheck import filecheck

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


class Bf16Block(torch.nn.Module):
    """A bf16 linear with a bias, a product of two activations, and one of an operand converted
    to f32 (``h.float() @ w``)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(96, 64)
        self.head = torch.nn.Parameter(torch.randn(64, 16))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = self.proj(x)
        scores = torch.matmul(h, h.transpose(-1, -2))
        return h, scores, h.float() @ self.head.float()


def test_f32_operands_widen_a_bf16_models_matmuls(tmp_path: Path) -> None:
    """Under f32 operands each bf16 matmul multiplies f32 operands widened by their bits and
    rounds its f32 result once (the bias added before): torch's f32 products of the same bf16
    values, rounded to bf16, but for the order of the sums. Under bf16 operands IREE's bf16
    GEMM stays."""
    torch.manual_seed(0)
    model = Bf16Block().to(torch.bfloat16).eval()
    x = torch.randn(2, 24, 96, dtype=torch.bfloat16)
    arts = {}
    for g in ("f32", "bf16"):
        dump = tmp_path / g
        arts[g] = compiler.compile(model, (x,), "none", gemm_operands=g, dump_ir=dump)
    filecheck(
        """CHECK: %[[X:.*]] = call @qmlir.widen_bf16.2x24x96(
CHECK: %[[XF:.*]] = torch_c.from_builtin_tensor %[[X]]
CHECK: %[[W:.*]] = call @qmlir.widen_bf16.64x96(
CHECK: %[[WF:.*]] = torch_c.from_builtin_tensor %[[W]]
CHECK: %[[B:.*]] = call @qmlir.widen_bf16.64(
CHECK: %[[BF:.*]] = torch_c.from_builtin_tensor %[[B]]
CHECK: %[[H:.*]] = torch.aten.linear %[[XF]], %[[WF]], %[[BF]]
CHECK: torch.prims.convert_element_type %[[H]], %{{.*}} -> !torch.vtensor<[2,24,64],bf16>
CHECK: torch.aten.matmul {{.*}} : !torch.vtensor<[2,24,64],f32>, !torch.vtensor<[2,64,24],f32>
CHECK: torch.aten.matmul {{.*}} : !torch.vtensor<[2,24,64],f32>, !torch.vtensor<[64,16],f32>
CHECK: func.func private @qmlir.widen_bf16.2x24x96
CHECK: arith.bitcast %{{.*}} : bf16 to i16
""",
        tmp_path / "f32" / "02-recipe.mlir",
    )
    filecheck(
        """CHECK-NOT: qmlir.widen_bf16
CHECK: torch.aten.linear %arg0, %{{.*}} : !torch.vtensor<[2,24,96],bf16>
CHECK-NOT: qmlir.widen_bf16
""",
        tmp_path / "bf16" / "02-recipe.mlir",
    )
    with torch.no_grad():
        w, b = model.proj.weight.float(), model.proj.bias.float()
        h = torch.nn.functional.linear(x.float(), w, b).to(torch.bfloat16)
        want = [h, torch.matmul(h.float(), h.float().transpose(-1, -2)).to(torch.bfloat16)]
        want.append(h.float() @ model.head.float())
    for g, art in arts.items():
        got = art(x)
        for out, ref in zip(got, want, strict=True):
            out, ref = out.float().numpy(), ref.float().numpy()
            ulp = np.abs(ref) * 2.0**-7 + 1e-30  # a bf16 ulp is 2^-7 of its value or less
            assert (np.abs(out - ref) <= ulp).all(), g
            # the f32 sums in another order move a rounding to bf16 rarely
            assert np.mean(out == ref) > (0.98 if g == "f32" else 0.5), g
