"""Every CUDA kernel family builds into PTX with NVRTC (from pip) for sm_89, sm_90 and sm_100,
defines every entry point runtime_kernels.nvrtc lists, and ptxas accepts it.

Skips with a reason when NVRTC (the ``cuda`` extra) is not installed; the ptxas check also skips
when no ``ptxas`` is on PATH (users' machines need none: PTX is JIT-compiled by the driver).
PTX is cached on disk (runtime_kernels.nvrtc), so only the first run pays for NVRTC.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from passes.base.errors import QmlirError
from passes.ir.cuda_kernels import ENTRY_POINTS
from passes.lowering.cuda.kernels import family_ptx
from runtime_kernels import nvrtc

ARCHS = ["sm_89", "sm_90", "sm_100"]


needs_nvrtc = pytest.mark.skipif(
    not nvrtc.available(), reason="NVRTC not installed (pip install 'qmlir[cuda]')"
)


@needs_nvrtc
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("family", nvrtc.KERNEL_FAMILIES)
def test_family_compiles_with_every_entry_point(family: str, arch: str, tmp_path: Path) -> None:
    ptx = nvrtc.compile_ptx(family, arch).decode()
    assert f".target {arch}" in ptx
    entries = re.findall(r"\.entry\s+(\w+)\s*\(", ptx)
    assert sorted(entries) == sorted(ENTRY_POINTS[family])
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("no ptxas on PATH to check the PTX")
    path = tmp_path / f"{family}.ptx"
    path.write_text(ptx)
    done = subprocess.run(
        [ptxas, f"-arch={arch}", str(path), "-o", str(tmp_path / "out.cubin")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


@needs_nvrtc
def test_gemm_uses_fp8_tensor_cores() -> None:
    ptx = nvrtc.compile_ptx("gemm_block_scaled", "sm_90").decode()
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32" in ptx
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx


@needs_nvrtc
def test_ptx_is_cached_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = nvrtc.compile_ptx("nvfp4", "sm_90")
    (cached,) = (tmp_path / "qmlir" / "ptx").glob("nvfp4-compute_90-*.ptx")
    assert cached.read_bytes() == first
    cached.write_bytes(b"// from the cache\n")  # a second call reads the file, not NVRTC
    assert nvrtc.compile_ptx("nvfp4", "sm_90") == b"// from the cache\n"
    assert [p.name for p in (tmp_path / "qmlir" / "ptx").iterdir()] == [cached.name]  # no temp file


def test_missing_nvrtc_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", None)
    with pytest.raises(nvrtc.KernelError, match=r"needs NVRTC: pip install 'qmlir\[cuda\]'"):
        nvrtc.compile_ptx("per_tensor", "sm_90")


@pytest.mark.parametrize(
    ("arch", "virtual"),
    [
        ("sm_89", "compute_89"),
        ("90", "compute_90"),
        ("sm_100a", "compute_100a"),
        ("compute_120", "compute_120"),
    ],
)
def test_virtual_arch(arch: str, virtual: str) -> None:
    assert nvrtc.virtual_arch(arch) == virtual


@pytest.mark.parametrize("arch", ["sm_80", "gfx942", ""])
def test_unsupported_arch_is_refused(arch: str) -> None:
    with pytest.raises(nvrtc.KernelError):
        nvrtc.virtual_arch(arch)


def test_unknown_family_is_refused() -> None:
    with pytest.raises(nvrtc.KernelError, match="unknown kernel family"):
        nvrtc.compile_ptx("fp16", "sm_90")


def test_the_declared_families_are_the_sources() -> None:
    """passes/ir/cuda_kernels.py declares a kernel family for each src/*.cu and none more."""
    assert sorted(ENTRY_POINTS) == sorted(nvrtc.KERNEL_FAMILIES)
    assert all(ENTRY_POINTS.values())


def test_the_cuda_lowering_raises_kernel_errors_as_qmlir_errors() -> None:
    """runtime_kernels imports nothing of qmlir's; what the CLI prints is the same message."""
    with pytest.raises(QmlirError) as raised:
        family_ptx("per_tensor", "sm_80")
    assert (
        str(raised.value)
        == "CUDA architecture 'sm_80' has no FP8 tensor cores; need sm_89 or newer"
    )
    assert isinstance(raised.value.__cause__, nvrtc.KernelError)


def _gemm_variants() -> object:
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_probes" / "gemm_variants.py"
    spec = importlib.util.spec_from_file_location("gemm_variants", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_nvrtc
def test_artifact_gemms_accumulate_in_f32_and_the_wgmma_probe_builds(tmp_path: Path) -> None:
    """Artifacts' FP8 GEMMs stay on mma.sync even for sm_90a: Hopper's FP8 wgmma sums lose about
    2e-4 (relative L2) per 128-K block (RESULTS.md, 2026-11-26). The wgmma path is a probe that
    gemm_variants.py builds with -DQMLIR_GEMM_WGMMA; it must keep compiling for sm_90a."""
    e4m3_mma = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"
    for arch in ("sm_90", "sm_90a"):
        ptx = nvrtc.compile_ptx("gemm_block_scaled", arch).decode()
        assert e4m3_mma in ptx and "wgmma" not in ptx
    probe = _gemm_variants()
    variants = ["wgmma:compute_90a:QMLIR_GEMM_WGMMA", "deep:compute_90:QMLIR_GEMM_STAGES=6"]
    assert probe.build(tmp_path, variants) == 0  # type: ignore[attr-defined]
    wgmma = (tmp_path / "wgmma.ptx").read_text()
    # two kernels (per-tensor, block) x two 32-byte K steps per stage
    assert wgmma.count("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3") == 4
    assert "fence.proxy.async.shared::cta" in wgmma
    deep = (tmp_path / "deep.ptx").read_text()
    assert re.search(r"\.extern \.shared \.align 1024 \.b8 \w*dynamic_shared\w*\[\]", deep)
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("no ptxas on PATH to check the PTX")
    for name in ("wgmma", "deep"):
        done = subprocess.run(
            [ptxas, "-arch=sm_90a", str(tmp_path / f"{name}.ptx"), "-o", str(tmp_path / "x")],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr


@needs_nvrtc
def test_the_few_rows_kernels_match_the_lowering_and_leave_the_tiles_as_they_were() -> None:
    """The decode kernels (M <= 16) compute 16 columns a workgroup over 16 rows, the tile the
    cuda lowering sizes their grid by (a mismatch would leave columns unwritten). The tiled
    kernels, which a static M > 16 runs, carry no branch into them (one cost the 8192^3 block
    GEMM 17% through spills), nor do the few-rows kernels carry the tiles; each returns at once
    where m is the other's case (a dynamic M launches both)."""
    from passes.lowering.cuda import gemm

    source = (nvrtc.SOURCE_DIR / "gemm_few_rows.cu").read_text()
    cols = re.search(r"constexpr int kCols = (\d+);", source)
    rows = re.search(r"constexpr int kRows = (\d+);", source)
    assert cols and rows
    assert (int(rows.group(1)), int(cols.group(1))) == (gemm.FEW_ROWS, gemm.FEW_ROWS_COLS)
    tiles = nvrtc.compile_ptx("gemm_block_scaled", "sm_90").decode()
    few = nvrtc.compile_ptx("gemm_few_rows", "sm_90").decode()
    assert "few_rows" not in tiles  # the tiles' modules do not carry the decode kernels

    def body(ptx: str, entry: str) -> str:
        start = ptx.index(f".entry {entry}(")
        return ptx[start : ptx.index("\n}\n", start)]

    for name in ("qmlir_gemm_fp8_per_tensor", "qmlir_gemm_fp8_block"):
        assert "call" not in body(tiles, name).split("{", 1)[1]
        assert "call" not in body(few, f"{name}_few_rows").split("{", 1)[1]
        many = body(few, f"{name}_many_rows").split("{", 1)[1]
        assert "call" not in many
        # the tiles' 48 KiB of shared memory (fp8::shared()) in the many-rows kernels only
        tiles_shared = "_ZZN3fp86sharedEvE1s"
        assert tiles_shared in many
        assert tiles_shared not in body(few, f"{name}_few_rows")


def test_the_gemm_probe_launches_each_variant_as_the_artifacts_do() -> None:
    """``gemm_variants.py`` (run on a GPU only) launches, per variant, the entry point and grid
    the cuda lowering gives the same M: the tiles at any M (``mma``), the few-rows kernels at
    M <= 16 (``+few_rows``), both the few-rows and the many-rows kernels at every M, each on one
    workgroup where M is the other's case (``+dynamic``). Checked here with a stand-in for cupy
    that records the launches."""
    from types import SimpleNamespace

    probe = _gemm_variants()
    launched: list[tuple[str, tuple[int, int, int]]] = []

    class Function:
        def __init__(self, name: str) -> None:
            self.name, self.num_regs = name, 0

        def __call__(self, grid, block, args, shared_mem=0):  # type: ignore[no-untyped-def]
            launched.append((self.name, grid))

    def module(path: str) -> object:  # an entry point's name says which family's PTX has it
        family = "few" if path.endswith(".gemm_few_rows.ptx") else "tiles"
        return SimpleNamespace(get_function=lambda name: Function(f"{family}:{name}"))

    cupy = SimpleNamespace(RawModule=module, asarray=lambda x: x)

    def shapes(m: int) -> object:
        return SimpleNamespace(
            m=m, n=300, k=256, a=0, one_a=0, b=0, one_b=0, a_sinv=0, b_sinv=0, a_dims=1, b_dims=2
        )

    variants = {"mma": (False, False), "few": (True, False), "dynamic": (False, True)}
    for few, dynamic in variants.values():
        kernels = probe.Kernels(cupy, Path("x.ptx"), 0, few, dynamic)  # type: ignore[attr-defined]
        for m in (1, 16, 17):
            for per_tensor in (True, False):
                kernels.launch(per_tensor, shapes(m), None)
    tiles, narrow, tall, one = (3, 1, 1), (19, 1, 1), (3, 1, 1), (1, 1, 1)
    pt, bl = "tiles:qmlir_gemm_fp8_per_tensor", "tiles:qmlir_gemm_fp8_block"
    fpt, fbl = "few:qmlir_gemm_fp8_per_tensor", "few:qmlir_gemm_fp8_block"
    assert launched == [
        *[(pt, tiles), (bl, tiles)] * 2,
        (pt, tall),
        (bl, tall),
        *[(f"{fpt}_few_rows", narrow), (f"{fbl}_few_rows", narrow)] * 2,
        (pt, tall),
        (bl, tall),
        *[
            (f"{fpt}_few_rows", narrow),
            (f"{fpt}_many_rows", one),
            (f"{fbl}_few_rows", narrow),
            (f"{fbl}_many_rows", one),
        ]
        * 2,
        (f"{fpt}_few_rows", one),
        (f"{fpt}_many_rows", tall),
        (f"{fbl}_few_rows", one),
        (f"{fbl}_many_rows", tall),
    ]
