"""The cuda target, compile-only (no GPU needed): targets, recipes, kernels in the artifact.

Every recipe compiles for sm_89, sm_90 and sm_100 on the MLP (the transformer block for sm_90),
the ``.vmfb`` carries the hand-written kernels' entry points that ``lower-named-ops{target=cuda}``
called, and the device-target templates stay valid. With dynamic rows (a dynamic batch, or batch
and sequence), every recipe still runs its activations and GEMMs on those kernels, each sized at
run time. Recipe compiles skip with a reason when NVRTC (the ``cuda`` extra) is not installed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from iree import compiler as iree_compiler
from iree.compiler import ir

import compiler
from compiler.backend.iree_compile import compile_module
from compiler.pipeline.target import resolve_target
from passes.base.errors import QmlirError
from passes.base.target import CUDA_ARCHS, Target
from passes.ir.torch_ops import defining_op
from passes.lower_named_ops import LowerNamedOps
from passes.lowering.cuda import targets as cuda_targets
from runtime_kernels import nvrtc
from samples import mlp, transformer_block
from tests.e2e.models import tiny

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

needs_nvrtc = pytest.mark.skipif(
    not nvrtc.available(), reason="NVRTC not installed (pip install 'qmlir[cuda]')"
)

# The kernels each recipe's activations and GEMMs run on cuda (weights are quantized at compile
# time on the host, so no weight-side kernel appears).
KERNELS = {
    "none": set(),
    "fp8-current": {
        "qmlir_amax_f32",
        "qmlir_fp8_scale_from_amax",
        "qmlir_quantize_fp8_e4m3",
        "qmlir_gemm_fp8_per_tensor",
    },
    "fp8-delayed": {"qmlir_quantize_fp8_delayed_e4m3", "qmlir_gemm_fp8_per_tensor"},
    "fp8-block": {"qmlir_quantize_fp8_block1d_rowwise", "qmlir_gemm_fp8_block"},
    "fp8-rowwise": {"qmlir_quantize_fp8_rowwise", "qmlir_gemm_fp8_rowwise"},
    "mxfp8": {"qmlir_quantize_mxfp8_rowwise", "qmlir_gemm_mxfp8"},
    "nvfp4": {
        "qmlir_amax_f32",
        "qmlir_nvfp4_decode_scale",
        "qmlir_nvfp4_quantize",
        "qmlir_gemm_nvfp4",
    },
}

TINY = """
func.func @main(%a: tensor<64x64xf8E4M3FN>, %b: tensor<64x64xf8E4M3FN>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>)
                     outs(%init : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
"""


@pytest.mark.parametrize("arch", CUDA_ARCHS)
def test_target_template_parses_and_compiles(arch: str) -> None:
    text = cuda_targets.target_file(arch).read_text()
    assert f'arch = "{arch}"' in text
    assert f'arch = "{arch}"' in cuda_targets.executable_target_text(arch)
    with ir.Context():
        module = ir.Module.parse(TINY)
        vmfb = compile_module(module, Target.for_cuda(arch))
    assert f".target {arch}".encode() in vmfb  # the PTX IREE generated for the matmul


def test_sm89_template_is_iree_own_description() -> None:
    out = _executable_targets(TINY)
    printed = re.search(r'#hal\.executable\.target<"cuda".*?>>}>', out)
    assert printed is not None
    assert printed.group(0) == cuda_targets.executable_target_text("sm_89")


def _executable_targets(source: str) -> str:
    """What IREE prints at ``--compile-to=executable-targets`` for ``--iree-cuda-target=sm_89``."""
    out = iree_compiler.compile_str(
        source,
        extra_args=[
            "--iree-hal-target-device=cuda",
            "--iree-cuda-target=sm_89",
            "--compile-to=executable-targets",
        ],
    )
    return out.decode() if isinstance(out, bytes) else out


def test_unknown_arch_is_one_line_error() -> None:
    with pytest.raises(QmlirError, match=r"^unknown CUDA architecture 'sm_75' \(known: sm_89, "):
        resolve_target("cuda", "sm_75")
    with pytest.raises(QmlirError, match="--cuda-arch needs --target cuda"):
        resolve_target("llvm-cpu", "sm_90")
    model, inputs = mlp.build()
    with pytest.raises(QmlirError, match="unknown CUDA architecture 'sm_120'"):
        compiler.compile(model, inputs, "fp8-current", target="cuda", cuda_arch="sm_120")


def _compile_and_check(build, recipe: str, arch: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model, inputs = build()
    art = compiler.compile(model, inputs, recipe, target="cuda", cuda_arch=arch, dump_ir=tmp_path)
    lowered = (tmp_path / "04-lower.mlir").read_text()
    called = set(re.findall(r'hal\.dispatch\.extern "(\w+)"', lowered))
    assert called == KERNELS[recipe]
    for kernel in called:
        assert kernel.encode() in art.vmfb, kernel
    assert art.metadata["target"] == "cuda"
    assert art.metadata["cuda_arch"] == arch


@needs_nvrtc
@pytest.mark.parametrize("arch", CUDA_ARCHS)
@pytest.mark.parametrize("recipe", sorted(KERNELS))
def test_mlp_compiles_for_cuda(recipe: str, arch: str, tmp_path: Path) -> None:
    _compile_and_check(mlp.build, recipe, arch, tmp_path)


@needs_nvrtc
@pytest.mark.parametrize("recipe", sorted(KERNELS))
def test_transformer_block_compiles_for_sm90(recipe: str, tmp_path: Path) -> None:
    _compile_and_check(transformer_block.build, recipe, "sm_90", tmp_path)


@needs_nvrtc
def test_cuda_artifact_saves_loads_and_inspects_without_gpu(tmp_path: Path) -> None:
    model, inputs = mlp.build()
    art = compiler.compile(model, inputs, "mxfp8", target="cuda", cuda_arch="sm_100")
    path = tmp_path / "mlp.vmfb"
    art.save(path)
    loaded = compiler.load(path)
    assert loaded.metadata["cuda_arch"] == "sm_100"
    with pytest.raises(QmlirError, match="compiled for an NVIDIA GPU"):
        compiler.load(path, device="local-task")(*inputs)


class SelfProduct(torch.nn.Module):
    """``h @ h``: h is the A operand (rowwise) and the B operand (``[K, N]``: columnwise)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(256, 256)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        return h @ h


@needs_nvrtc
@pytest.mark.parametrize(
    ("recipe", "combined"),
    [("fp8-block", "qmlir_quantize_fp8_block1d"), ("mxfp8", "qmlir_quantize_mxfp8")],
)
def test_rowwise_and_columnwise_of_one_x_share_a_kernel(
    recipe: str, combined: str, tmp_path: Path
) -> None:
    torch.manual_seed(0)
    model = SelfProduct().eval()
    art = compiler.compile(
        model,
        (torch.randn(256, 256),),
        recipe,
        target="cuda",
        cuda_arch="sm_100",
        quantize_all_matmuls=True,
        dump_ir=tmp_path,
    )
    lowered = (tmp_path / "04-lower.mlir").read_text()
    main = lowered[lowered.index("func.func @main") :]
    fused = re.findall(r"call @(qmlir\.fused_quantize\.[\w.]+)\(", main[: main.index("\n  }")])
    assert len(fused) == 2 and fused[1].endswith(".rowcol"), fused  # proj's x, then h both ways
    assert f'hal.dispatch.extern "{combined}"' in lowered
    assert "qmlir.amax.block" not in main  # no block quantize left to the per-op templates
    assert combined.encode() in art.vmfb


# The kernels that take an activation's dynamic rows (the scale kernels take scalars only).
# A dynamic M launches the FP8 GEMMs' few-rows kernel and then their many-rows one (the tiles).
DYNAMIC_ROWS = {
    "qmlir_gemm_fp8_per_tensor": {
        "qmlir_gemm_fp8_per_tensor_few_rows",
        "qmlir_gemm_fp8_per_tensor_many_rows",
    },
    "qmlir_gemm_fp8_block": {"qmlir_gemm_fp8_block_few_rows", "qmlir_gemm_fp8_block_many_rows"},
    "qmlir_gemm_fp8_rowwise": {
        "qmlir_gemm_fp8_rowwise_few_rows",
        "qmlir_gemm_fp8_rowwise_many_rows",
    },
    "qmlir_gemm_mxfp8": {"qmlir_gemm_mxfp8_few_rows", "qmlir_gemm_mxfp8_many_rows"},
    "qmlir_gemm_nvfp4": {"qmlir_gemm_nvfp4_few_rows", "qmlir_gemm_nvfp4_many_rows"},
}
DYNAMIC_ALL = {
    recipe: {d for k in ks for d in DYNAMIC_ROWS.get(k, {k})} for recipe, ks in KERNELS.items()
}
DYNAMIC_KERNELS = {
    "fp8-current": DYNAMIC_ALL["fp8-current"] - {"qmlir_fp8_scale_from_amax"},
    "fp8-delayed": DYNAMIC_ALL["fp8-delayed"],
    "fp8-block": DYNAMIC_ALL["fp8-block"],
    "fp8-rowwise": DYNAMIC_ALL["fp8-rowwise"],
    "mxfp8": DYNAMIC_ALL["mxfp8"],
    "nvfp4": DYNAMIC_ALL["nvfp4"] - {"qmlir_nvfp4_decode_scale"},
}


@dataclass(frozen=True)
class Launch:
    """One ``hal.dispatch.extern`` of the lowered module, as the tests below read it."""

    kernel: str
    dynamic: bool  # a tensor operand or result of dynamic shape (its dims attached)
    grid_reads_workload: bool  # the count region computes the grid from a dynamic size
    size_from_dim: bool  # an i32 push constant is the index_cast of a run-time size


def _launch(op: ir.Operation) -> Launch:
    tensors = [
        v.type for v in (*op.operands, *op.results) if isinstance(v.type, ir.RankedTensorType)
    ]
    workload = list(op.regions[0].blocks[0].arguments)[1:]  # after the device
    casts = [defining_op(v) for v in op.operands if isinstance(v.type, ir.IntegerType)]
    return Launch(
        kernel=ir.StringAttr(op.attributes["export_name"]).value,
        dynamic=any(not t.has_static_shape for t in tensors),
        grid_reads_workload=any(list(arg.uses) for arg in workload),
        size_from_dim=any(c is not None and c.name == "arith.index_cast" for c in casts),
    )


def _launches(lowered: Path) -> list[Launch]:
    found: list[Launch] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "hal.dispatch.extern":
            found.append(_launch(op))
        return ir.WalkResult.ADVANCE

    with ir.Context():
        ir.Module.parse(lowered.read_text()).operation.walk(visit)
    return found


DynamicBuild = Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...], object]]


def _tiny_dynamic_batch() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...], object]:
    model, inputs = tiny.build()
    return model, inputs, {"x": {0: torch.export.Dim("batch", min=1, max=300)}}


@needs_nvrtc
@pytest.mark.parametrize(
    ("build", "recipe"),
    [(_tiny_dynamic_batch, recipe) for recipe in sorted(DYNAMIC_KERNELS)]
    + [(tiny.tagger_dynamic, "mxfp8")],  # a 3-D activation: dynamic batch and sequence
)
def test_dynamic_rows_run_on_the_kernels(build: DynamicBuild, recipe: str, tmp_path: Path) -> None:
    """Every matmul quantized, each on the hand-written GEMM; the kernels that read the
    activation take it with its dims, its size as an ``i32`` read at run time, and a grid
    computed from it; the others stay static."""
    model, inputs, dynamic_shapes = build()
    art = compiler.compile(
        model, inputs, recipe, target="cuda", dynamic_shapes=dynamic_shapes, dump_ir=tmp_path
    )
    launches = _launches(tmp_path / "04-lower.mlir")
    # a GEMM's launches: one, or the few-rows and many-rows kernels in that order
    gemms = [k.kernel for k in launches if k.kernel.startswith("qmlir_gemm_")]
    gemms = [k for k in gemms if not k.endswith("_many_rows")]
    assert [layer["recipe"] for layer in art.metadata["layers"]] == [recipe] * len(gemms)
    for first, second in itertools.pairwise([k.kernel for k in launches]):
        assert first.endswith("_few_rows") == second.endswith("_many_rows"), (first, second)
    assert {launch.kernel for launch in launches} == DYNAMIC_ALL[recipe]
    assert {launch.kernel for launch in launches if launch.dynamic} == DYNAMIC_KERNELS[recipe]
    for launch in launches:
        assert launch.grid_reads_workload == launch.size_from_dim == launch.dynamic, launch
    for kernel in DYNAMIC_ALL[recipe]:
        assert kernel.encode() in art.vmfb, kernel


# A rowwise + columnwise fused quantize of an activation with dynamic rows (the recipe pass does
# not emit one: a columnwise activation is a [K, N] GEMM operand, K the contraction dim).
ROWCOL_DYNAMIC = """
func.func private @qmlir.fused_quantize.e4m3.block1x32.e8m0.Dx64.mx.rowcol(tensor<?x64xf32>)
    -> (tensor<?x64xi8>, tensor<?xi8>, tensor<?x64xi8>, tensor<?xi8>)
    attributes {qmlir.block = array<i64: 1, 32>, qmlir.format = "e4m3", qmlir.fp8_max = 448.0 : f32,
    qmlir.layout = "mx", qmlir.op = "fused_quantize", qmlir.outputs = "rowwise+columnwise",
    qmlir.rule = "e8m0_ceil", qmlir.scale_format = "e8m0", qmlir.scaling = "block",
    qmlir.transpose = false}
"""


def test_dynamic_rows_refuse_the_columnwise_kernels_in_one_line() -> None:
    with ir.Context():
        module = ir.Module.parse(ROWCOL_DYNAMIC)
        with pytest.raises(QmlirError, match=r"Dx64\.mx\.rowcol: dynamic rows take the rowwise "):
            LowerNamedOps(Target.for_cuda("sm_90")).apply(module)


# A training step's kernels under hybrid: E5M2 gradients get their own quantize kernels; mxfp8's
# x, read rowwise by fprop and columnwise by wgrad, is quantized both ways by one kernel.
TRAINING_KERNELS = {
    "fp8-current": {"qmlir_amax_f32", "qmlir_quantize_fp8_e4m3", "qmlir_quantize_fp8_e5m2"},
    "mxfp8": {"qmlir_quantize_mxfp8", "qmlir_quantize_mxfp8_rowwise"},
}


@needs_nvrtc
@pytest.mark.parametrize("recipe", sorted(TRAINING_KERNELS))
def test_training_step_compiles_for_cuda(recipe: str) -> None:
    model, inputs = tiny.build_train()
    step = compiler.compile_training(
        model, inputs, recipe, target="cuda", optimizer="adamw", fp8_format="hybrid"
    )
    assert step.metadata["target"] == "cuda" and "qmlir.apply_update" in step.metadata["functions"]
    names = set(re.findall(rb"qmlir_[a-z0-9_]+", step.vmfb))
    missing = {k for k in TRAINING_KERNELS[recipe] if k.encode() not in names}
    assert not missing, missing
    assert {layer.get("gemm") for layer in step.metadata["layers"]} == {"fprop", "dgrad", "wgrad"}


@needs_nvrtc
@pytest.mark.parametrize("recipe", ["fp8-block", "fp8-rowwise", "mxfp8", "nvfp4"])
def test_a_generators_decode_function_launches_the_few_rows_gemms_alone(
    recipe: str, tmp_path: Path
) -> None:
    """A generator's ``@decode`` (one token a call, its shapes static) runs each FP8 GEMM on the
    few-rows kernel alone, at a static grid; ``@main`` (any number of tokens) launches the
    few-rows and many-rows pair, its grids read from M."""
    from samples import decoder_lm

    lm = decoder_lm.make_lm(layers=1)
    compiler.compile_generator(
        lm, recipe, target="cuda", cuda_arch="sm_90", max_seq_len=32, dump_ir=tmp_path
    )
    gemm = f"qmlir_gemm_{recipe.replace('-', '_')}"
    launches = [k for k in _launches(tmp_path / "04-lower.mlir") if "gemm" in k.kernel]
    static = {k.kernel for k in launches if not k.dynamic}
    dynamic = {k.kernel for k in launches if k.dynamic}
    assert static == {f"{gemm}_few_rows"}, static
    assert dynamic == {f"{gemm}_few_rows", f"{gemm}_many_rows"}
