"""A bf16 checkpoint's weights are widened to f32 inside the quantize calls' own dispatches, for
every recipe's chain, never as a dispatch of their own (whose f32 copy of the weight was written
to fresh memory and read back at each call: NVFP4's weight stream 5x slower than its reads at
a 32000 x 1024 weight, ``benchmarks/RESULTS.md``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
import compiler.backend.parameter_file as parameter_file
from passes.host.flags import HOST_CPU_FLAGS
from tests.e2e.filecheck import filecheck
from tests.e2e.models import tiny

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`


def _stream_module(recipe: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, object, object]:
    """The host module the weight stream of the bf16 tiny model compiles, and the outputs of the
    inlined and external artifacts."""
    texts: list[str] = []
    original = parameter_file.compile_host_module

    def capture(text: str) -> object:
        texts.append(text)
        return original(text)

    monkeypatch.setattr(parameter_file, "compile_host_module", capture)
    model, inputs = tiny.bf16()
    inline = compiler.compile(model, inputs, recipe=recipe, allow_unquantized=True)
    external = compiler.compile(
        model, inputs, recipe=recipe, weights="external", allow_unquantized=True
    )
    assert len(texts) == 1
    return texts[0], inline(*inputs), external(*inputs)


def _flow(text: str, tmp_path: Path) -> Path:
    """``text`` compiled by IREE for the host up to its dispatches (flow)."""
    source = tmp_path / "stream.mlir"
    source.write_text(text)
    out = tmp_path / "stream.flow.mlir"
    tool = Path(sys.executable).with_name("iree-compile")
    done = subprocess.run(
        [str(tool), str(source), *HOST_CPU_FLAGS, "--compile-to=flow", "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("recipe", ["nvfp4", "mxfp8"])
def test_bf16_weights_widen_inside_the_quantize_dispatches(
    recipe: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text, inline, external = _stream_module(recipe, monkeypatch)
    assert torch.equal(inline, external)  # the same codes as the inlined weights give
    module = tmp_path / "module.mlir"
    module.write_text(text)
    # the wrapper widens in the block view its callee reduces over (1x16 or 1x32 blocks as rows)
    filecheck(
        """
CHECK: func.func @qmlir.amax.block1x{{16|32}}.[[SHAPE:[0-9x]+]]__narrow0(%a0: tensor<[[SHAPE]]xbf16>
CHECK-SAME: ) -> tensor<
CHECK-NEXT: tensor.collapse_shape %a0
CHECK-NEXT: %v0 = tensor.expand_shape %c0 {{.*}} into tensor<[[BLOCKS:[0-9]+]]x{{16|32}}xbf16>
CHECK-NEXT: arith.extf %v0 : tensor<[[BLOCKS]]x{{16|32}}xbf16> to tensor<[[BLOCKS]]x{{16|32}}xf32>
""",
        module,
    )
    # and IREE fuses it: no dispatch takes bf16 to f32 alone; a block reduction reads bf16
    filecheck(
        """
CHECK-NOT: _bf16xf32(
CHECK: flow.dispatch @qmlir.amax.block1x{{16|32}}.{{[0-9x]+}}__narrow0_dispatch_0::
CHECK-SAME: _reduction_{{[0-9]+}}x{{16|32}}_bf16xi32(
CHECK-NOT: _bf16xf32(
""",
        _flow(text, tmp_path),
    )


class _Linear(torch.nn.Module):
    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(x, self.weight)


def _adversarial(kind: str) -> torch.Tensor:
    w = torch.randn(64, 128, generator=torch.Generator().manual_seed(3)) * 0.02
    if kind == "nan_and_subnormals":
        w[5, 7] = float("nan")
        w[9, :16] = 1e-39  # a block of f32 subnormals
        w[63, 127] = -0.9  # the tensor's amax in its last block
    elif kind == "only_subnormals":
        w = torch.where(w > 0, 2e-39, -1e-45)
    elif kind == "infinity":
        w[17, 33] = float("-inf")
    return w


@pytest.mark.parametrize("kind", ["nan_and_subnormals", "only_subnormals", "infinity"])
def test_nvfp4_global_amax_is_its_largest_block_amax(kind: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The weight stream takes NVFP4's global amax from the 1x16 block amax it computes anyway
    (one read of the weight less): the same codes as the inlined artifact's, whose amax reads
    the whole tensor, on weights with NaN, subnormals and infinities."""
    ran: list[str] = []
    original = parameter_file._Run.call

    def record(self, index: int) -> list[object]:  # type: ignore[no-untyped-def]
        ran.append(self._calls[index][0])
        return original(self, index)

    monkeypatch.setattr(parameter_file._Run, "call", record)
    model = _Linear(_adversarial(kind)).eval()
    inputs = (torch.randn(4, 128, generator=torch.Generator().manual_seed(4)),)
    # the same GEMM either way (in AVX2 code int-fp4-gemm's, B laid out at load or read as
    # stored: the same sums), so equal outputs are equal codes
    inline = compiler.compile(model, inputs, recipe="nvfp4")
    external = compiler.compile(model, inputs, recipe="nvfp4", weights="external")
    np.testing.assert_array_equal(inline(*inputs).numpy(), external(*inputs).numpy())
    assert parameter_file._MAX_OF_BLOCKS in ran
    assert not [f for f in ran if f.startswith("qmlir.amax.") and ".block" not in f]
