"""Dynamic shapes: dims marked dynamic (torch.export's dynamic_shapes, ``--dynamic``, a build
function's third value) compile to one artifact that runs at any size in range and refuses
others in one line; inspect names the dims; every recipe quantizes activations with dynamic rows,
bit-identical to a static compile at each size (outputs, and fp8-delayed's state); a quantizing
recipe that can quantize none of the matmuls (fp8-block with 128x128 activation blocks on
dynamic rows) is an error unless ``--allow-unquantized``, and the compile summary says what was
kept and why."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.frontend.dynamic_dims import dim_names, parse_dynamic_flags
from compiler.pipeline.target import resolve_target
from passes.base import cpu_features
from passes.base.errors import QmlirError
from passes.host.flags import target_flags
from tests.e2e.cli_runner import run as _cli
from tests.e2e.filecheck import filecheck
from tests.e2e.models import tiny
from tests.reference import fp8_delayed as fp8_delayed_reference

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

TINY = str(Path(__file__).parent / "models" / "tiny.py")


@pytest.fixture(scope="module")
def dynamic_tiny() -> compiler.CompiledModule:
    model, (x,) = tiny.build()
    batch = torch.export.Dim("batch", min=1, max=40)
    return compiler.compile(model, (x,), "none", dynamic_shapes={"x": {0: batch}})


def test_one_artifact_runs_every_size_in_range(dynamic_tiny) -> None:  # type: ignore[no-untyped-def]
    model = tiny.build()[0]
    (spec,) = dynamic_tiny.signature["inputs"]
    assert spec["shape"] == [None, 64]
    assert spec["dims"] == [{"name": "batch", "min": 1, "max": 40, "example": 8}, None]
    assert dynamic_tiny.signature["outputs"][0]["dims"] == [{"name": "batch"}, None]
    rng = np.random.default_rng(1)
    for rows in (1, 7, 40):
        x = rng.standard_normal((rows, 64), dtype=np.float32)
        y = dynamic_tiny(x)
        assert y.shape == (rows, 16)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    for rows in (0, 41):
        with pytest.raises(
            QmlirError, match=rf"input 0 \(x\) dim 0 \(batch\) is {rows}, .* 1\.\.40"
        ):
            dynamic_tiny(np.zeros((rows, 64), np.float32))
    with pytest.raises(QmlirError, match=r"expects \[batch\(1\.\.40\), 64\]"):
        dynamic_tiny(np.zeros((4, 63), np.float32))


def test_shared_dims_and_cli(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "tagger.vmfb"
    # 128x128 activation blocks need static rows
    block2d = (
        "--recipe",
        "fp8-block",
        "-O",
        "x_block_scaling_dim=2",
        "-O",
        "w_block_scaling_dim=1",
    )
    reason = "dynamic rows with 128x128 activation blocks (x_block_scaling_dim=2)"
    code, _, err = _cli(capsys, "compile", f"{TINY}:tagger_dynamic", *block2d, "-o", str(path))
    assert code == 1 and err.count("\n") == 1
    assert "recipe 'fp8-block' quantized none of the model's 1 matmuls" in err
    assert reason in err and "--allow-unquantized" in err and not path.exists()
    code, out, _ = _cli(
        capsys,
        "compile",
        f"{TINY}:tagger_dynamic",
        *block2d,
        "--allow-unquantized",
        "-o",
        str(path),
    )
    assert code == 0 and "0/1 matmuls quantized" in out
    assert f"kept in high precision: 1 x {reason}" in out
    code, out, _ = _cli(capsys, "inspect", str(path))
    assert (
        "main(input_ids: si64[batch(1..16), seq(2..64)] in 0..49, "
        "attention_mask: si64[batch(1..16), seq(2..64)]) -> (f32[batch, seq, 8])"
    ) in out
    art = compiler.load(path)
    model = tiny.tagger()[0]
    for batch, seq in ((1, 2), (3, 17), (16, 64)):
        ids = np.arange(batch * seq).reshape(batch, seq) % 50
        mask = np.ones((batch, seq), np.int64)
        with torch.no_grad():
            want = model(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
        np.testing.assert_allclose(art(ids, mask), want, rtol=1e-5, atol=1e-5)
    ids = np.zeros((2, 5), np.int64)
    with pytest.raises(QmlirError, match=r"input 1 \(attention_mask\) dim 0 \(batch\) is 3, but "):
        art(ids, np.ones((3, 5), np.int64))


def test_dynamic_pt2_quantizes_every_matmul(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A `.pt2` exported with ``Dim("batch")`` keeps its dynamic dim: every matmul quantized
    (here by a block recipe), the dim shown by inspect, and the artifact runs at every size."""
    model, inputs = tiny.build()
    batch = torch.export.Dim("batch", min=1, max=300)
    program = torch.export.export(model, inputs, dynamic_shapes={"x": {0: batch}})
    torch.export.save(program, tmp_path / "tiny.pt2")
    path = tmp_path / "tiny.vmfb"
    code, out, err = _cli(
        capsys, "compile", str(tmp_path / "tiny.pt2"), "--recipe", "mxfp8", "-o", str(path)
    )
    assert code == 0 and "2/2 matmuls quantized" in out, err
    code, out, _ = _cli(capsys, "inspect", str(path))
    # torch.export.save keeps the dim's range, not its name: inspect shows torch's symbol
    assert re.search(r"main\(x: f32\[(s\d+)\(1\.\.300\), 64\]\) -> \(f32\[\1, 16\]\)", out), out
    for rows in (1, 129, 300):
        code, out, err = _cli(
            capsys, "run", str(path), "--random-inputs", "--shape", f"x={rows}x64"
        )
        assert code == 0 and f"output 0: shape [{rows}, 16]" in out, err


def test_dynamic_flag(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "tiny.vmfb"
    code, _, err = _cli(
        capsys, "compile", f"{TINY}:build", "--recipe", "none", "--dynamic", "x:0=rows:2..9",
        "-o", str(path), "-q",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = _cli(capsys, "run", str(path), "--random-inputs", "--shape", "x=9x64")
    assert code == 0 and "output 0: shape [9, 16]" in out
    code, _, err = _cli(capsys, "run", str(path), "--random-inputs", "--shape", "x=10x64")
    assert code == 1 and "input 0 (x) dim 0 (rows) is 10, the module takes 2..9" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["x0=batch"], "is not INPUT:DIM=NAME[:MIN..MAX]"),
        (["y:0=batch"], "the model has no input 'y' (inputs: x, mask)"),
        (["x:2=batch"], "input 'x' has 2 dims"),
        (["x:0=batch:9..2"], "range 9..2 is empty"),
        (["x:0=batch:1-4"], "range '1-4' is not MIN..MAX"),
        (["x:0=b:1..4", "mask:0=b:1..5"], "dim 'b' was given another range"),
    ],
)
def test_dynamic_flag_errors(flags: list[str], message: str) -> None:
    with pytest.raises(QmlirError) as error:
        parse_dynamic_flags(flags, ["x", "mask"], [2, 2])
    assert message in str(error.value)


def test_dynamic_flags_share_dims_by_name() -> None:
    spec = parse_dynamic_flags(["x:0=b:1..8", "mask:0=b:1..8", "x:1=s"], ["x", "mask"], [2, 2])
    assert spec["x"][0] is spec["mask"][0]
    assert dim_names(spec, ["x", "mask"]) == {"x": {0: "b", 1: "s"}, "mask": {0: "b"}}


def test_decoder_with_dynamic_batch_and_sequence() -> None:
    """The Llama-style decoder (causal mask, rotary positions, GQA) at three sizes."""
    from samples import decoder_lm

    model, (ids,) = decoder_lm.build_small()
    batch = torch.export.Dim("batch", min=1, max=32)
    seq = torch.export.Dim("seq", min=2, max=16)
    art = compiler.compile(model, (ids,), "none", dynamic_shapes={"input_ids": {0: batch, 1: seq}})
    rng = np.random.default_rng(2)
    for rows, length in ((1, 5), (7, 16), (32, 9)):
        tokens = rng.integers(0, 4096, (rows, length))
        with torch.no_grad():
            want = model(torch.from_numpy(tokens)).numpy()
        got = art(tokens)
        assert got.shape == (rows, 4096)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


@pytest.mark.parametrize("recipe", ["fp8-current", "fp8-delayed"])
def test_per_tensor_fp8_dynamic_rows_bit_identical(recipe: str) -> None:
    """One artifact with a dynamic batch quantizes every matmul and gives, at each size, the bits
    of a static compile at that size; fp8-delayed's state too (the static artifact starts from
    the dynamic one's state), and fc1's step is the reference's (tests/reference)."""
    model, (example,) = tiny.build()
    batch = torch.export.Dim("batch", min=1, max=40)
    art = compiler.compile(model, (example,), recipe, dynamic_shapes={"x": {0: batch}})
    assert [layer["recipe"] for layer in art.metadata["layers"]] == [recipe, recipe]
    rng = np.random.default_rng(7)
    for rows in (1, 7, 40):
        x = rng.standard_normal((rows, 64), dtype=np.float32) * rows
        static = compiler.compile(model, (torch.from_numpy(x),), recipe)
        before = art.scaling_state()
        if before:
            static.load_scaling_state(before)
        np.testing.assert_array_equal(_bits(art(x)), _bits(static(x)))
        after, want = art.scaling_state(), static.scaling_state()
        assert sorted(after) == sorted(want) == (["fc1", "fc2"] if before else [])
        for key in after:
            for kind in ("amax_history", "scale"):
                np.testing.assert_array_equal(_bits(after[key][kind]), _bits(want[key][kind]))
        if before:
            fc1 = before["fc1"]
            ref = fp8_delayed_reference.step(
                fp8_delayed_reference.DelayedState(fc1["amax_history"], np.float32(fc1["scale"])),
                float(np.abs(x).max()),
            )
            np.testing.assert_array_equal(
                _bits(after["fc1"]["amax_history"]), _bits(ref.amax_history)
            )
            assert _bits(np.float32(after["fc1"]["scale"])) == _bits(np.float32(ref.scale))


class Widths(torch.nn.Module):
    """[batch, seq, 136] through eight linears alternating K = 136 (not a multiple of 16, 32 or
    128: every block recipe's padded paths) and K = 256 (the unpadded ones), to 24."""

    def __init__(self) -> None:
        super().__init__()
        widths = [136, 256] * 4 + [24]
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(k, n) for k, n in zip(widths, widths[1:], strict=False)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x if i == 0 else torch.nn.functional.gelu(x))
        return x


# two layers (K = 136 and 256) per block recipe; the rest by the main recipe, nvfp4 in torchao's
# order (layer_recipes take a recipe's default options: nvfp4 in TE's order)
WIDTHS_RECIPES = {
    "layers.[01]": "fp8-block",
    "layers.[23]": "mxfp8",
    "layers.[45]": "nvfp4",
}


def test_block_recipes_dynamic_rows_bit_identical() -> None:
    """A dynamic batch and sequence ([?, ?, K] flattened to [?, K] rows) under each block recipe
    (fp8-block, mxfp8, nvfp4 in TE's and torchao's orders): every matmul quantized, and at 1 and
    155 rows (neither a multiple of 4, 16, 32 or 128; 155 spans two 128-row scale tiles) the bits
    of a static compile at that size."""
    torch.manual_seed(0)
    model = Widths().eval()
    batch = torch.export.Dim("batch", min=1, max=8)
    seq = torch.export.Dim("seq", min=1, max=64)
    options = {"layer_recipes": WIDTHS_RECIPES, "scale_order": "torchao"}
    art = compiler.compile(
        model,
        (torch.randn(2, 3, 136),),
        "nvfp4",
        dynamic_shapes={"x": {0: batch, 1: seq}},
        **options,
    )
    recipes = [layer["recipe"] for layer in art.metadata["layers"]]
    assert recipes == ["fp8-block"] * 2 + ["mxfp8"] * 2 + ["nvfp4"] * 4
    rng = np.random.default_rng(3)
    for shape in ((1, 1, 136), (5, 31, 136)):
        x = rng.standard_normal(shape, dtype=np.float32) * np.float32(shape[1])
        x[0, 0, :5] = [0.0, -0.0, 1e-40, 448.0, -3e38]  # zeros, a subnormal, FP8 max, huge
        static = compiler.compile(model, (torch.from_numpy(x),), "nvfp4", **options)
        np.testing.assert_array_equal(_bits(art(x)), _bits(static(x)))


def test_tagger_fp8_current_dynamic_batch_and_seq(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A 3-D activation [batch, seq, 32] with both dims dynamic, flattened to [?, 32]: quantized
    by default (fp8-current), bit-identical to a static compile at that size."""
    path = tmp_path / "tagger.vmfb"
    code, out, err = _cli(capsys, "compile", f"{TINY}:tagger_dynamic", "-o", str(path))
    assert code == 0 and "1/1 matmuls quantized" in out, err
    art = compiler.load(path)
    model, _ = tiny.tagger()
    for batch, seq in ((1, 2), (3, 17)):
        ids = np.arange(batch * seq).reshape(batch, seq) % 50
        mask = (np.arange(batch * seq).reshape(batch, seq) % 5 != 0).astype(np.int64)
        static = compiler.compile(model, (torch.from_numpy(ids), torch.from_numpy(mask)))
        np.testing.assert_array_equal(_bits(art(ids, mask)), _bits(static(ids, mask)))


class MaskedAttention(torch.nn.Module):
    """Self-attention over [batch, seq, 32] (4 heads of 8) with a padding mask."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(32, 96)
        self.out = torch.nn.Linear(32, 32)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, 4, 8).permute(2, 0, 3, 1, 4)
        mask = keep[:, None, None, :].bool()
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, s, 32))


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_attention_matmuls_of_a_dynamic_artifact_in_avx2_code(cpu: str, tmp_path: Path) -> None:
    """In AVX2 code a dynamic artifact's decomposed attention (``decode_gemv="off"``, or a CPU
    without prefill-attention's instructions) has its matmuls as contractions over [batch,
    heads] (``batched-contractions``: IREE does not data-tile them) and IREE peels its dynamic
    loops; AVX-512 code keeps both as they were. The outputs match torch at every size and a
    static compile at the same size (AVX2 code: bit for bit)."""
    torch.manual_seed(0)
    model = MaskedAttention().eval()
    x, keep = torch.randn(2, 6, 32), torch.ones(2, 6, dtype=torch.int64)
    batch, seq = torch.export.Dim("batch", min=1, max=8), torch.export.Dim("seq", min=2, max=64)
    dims = {"x": {0: batch, 1: seq}, "keep": {0: batch, 1: seq}}
    art = compiler.compile(
        model, (x, keep), "none", dynamic_shapes=dims, cpu=cpu, dump_ir=tmp_path, decode_gemv="off"
    )
    avx2 = cpu == "x86-64-v3"
    checks = (
        """CHECK: call @qmlir.batched_contraction.nt.Dx4xDx8.Dx4xDx8(
CHECK: call @qmlir.batched_contraction.nn.Dx4xDxD.Dx4xDx8(
CHECK: func.func private @qmlir.batched_contraction.nt.Dx4xDx8.Dx4xDx8
"""
        if avx2
        else "CHECK-NOT: qmlir.batched_contraction\n"
    )
    filecheck(checks, tmp_path / "04-lower.mlir")
    assert ("--iree-llvmcpu-vector-pproc-strategy=peel" in target_flags(
        resolve_target(cpu=cpu), dynamic=True)) == avx2  # fmt: skip
    if not avx2 and "avx512f" not in (cpu_features.host_flags() or set()):
        return  # AVX-512 code: compiled and checked above, not run on this host
    rng = np.random.default_rng(0)
    for b, s in ((1, 2), (3, 17), (8, 64)):
        xs = rng.standard_normal((b, s, 32)).astype(np.float32)
        ks = (rng.random((b, s)) > 0.3).astype(np.int64)
        ks[:, 0] = 1  # no row masked everywhere
        with torch.no_grad():
            want = model(torch.from_numpy(xs), torch.from_numpy(ks)).numpy()
        np.testing.assert_allclose(np.asarray(art(xs, ks)), want, rtol=1e-4, atol=1e-5)
    static = compiler.compile(
        model, (torch.from_numpy(xs), torch.from_numpy(ks)), "none", cpu=cpu, decode_gemv="off"
    )
    got, ref = np.asarray(art(xs, ks)), np.asarray(static(xs, ks))
    if avx2:
        # the contractions sum the same products in the same order as the static compile's GEMMs
        np.testing.assert_array_equal(_bits(got), _bits(ref))
    else:
        # AVX-512 code: the dynamic artifact is data-tiled from global optimization, its static
        # twin from dispatch creation, and their f32 sums are not bit-identical (1-2 ulp apart on
        # the AVX512-BF16 host)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_softmax_over_a_dynamic_key_length_sees_a_multiple_of_8(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A dynamic key length is padded to a multiple of 8 (compiler/frontend/attention.py) and IREE
    is told so (``assume-multiples``): the softmax's dispatch assumes its key dim divisible by 8,
    which lets IREE vectorize each row whole (MiniLM's softmax: 37 -> 8.6 ms, RESULTS.md). The
    outputs match torch at lengths on and off the multiple."""
    from compiler.pipeline import core
    from passes.host import compile_cache

    sources = tmp_path / "executables"
    compile_module = core.compile_module

    def dumping(
        module: object, target: object, flags: tuple[str, ...] = (), *args: object
    ) -> bytes:
        dump = f"--iree-hal-dump-executable-sources-to={sources}"
        return compile_module(module, target, (*flags, dump), *args)  # type: ignore[arg-type]

    monkeypatch.setattr(core, "compile_module", dumping)
    # IREE must run to dump: a cached compile (the suite's cache, keyed by the flags, the dump's
    # path among them) whose tmp path a run reused (pytest numbers them afresh once their
    # folder is gone) wrote no sources
    monkeypatch.setenv(compile_cache.ENV, "0")
    torch.manual_seed(0)
    model = MaskedAttention().eval()
    x, keep = torch.randn(2, 6, 32), torch.ones(2, 6, dtype=torch.int64)
    batch, seq = torch.export.Dim("batch", min=1, max=8), torch.export.Dim("seq", min=2, max=64)
    dims = {"x": {0: batch, 1: seq}, "keep": {0: batch, 1: seq}}
    # the decomposed attention (where prefill-attention's kernel does not run)
    art = compiler.compile(model, (x, keep), "none", dynamic_shapes=dims, decode_gemv="off")
    softmax = [p for p in sources.glob("*.mlir") if "linalg.softmax" in p.read_text()]
    assert len(softmax) == 1, softmax
    filecheck(
        "CHECK: util.assume.int\nCHECK: <udiv = 8>\nCHECK-NEXT: : index\nCHECK: linalg.softmax\n",
        softmax[0],
    )
    rng = np.random.default_rng(1)
    for b, s in ((2, 5), (3, 8), (1, 13)):
        xs = rng.standard_normal((b, s, 32)).astype(np.float32)
        ks = (rng.random((b, s)) > 0.3).astype(np.int64)
        ks[:, 0] = 1
        with torch.no_grad():
            want = model(torch.from_numpy(xs), torch.from_numpy(ks)).numpy()
        np.testing.assert_allclose(np.asarray(art(xs, ks)), want, rtol=1e-4, atol=1e-5)
