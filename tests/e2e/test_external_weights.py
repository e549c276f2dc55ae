"""Weights outside the module: the same outputs as inlined weights, a parameter file that the seal
covers (missing, truncated, swapped or bit-flipped: one line, before any call), saved beside the
artifact, and a compile whose memory does not grow with the checkpoint."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open

import compiler
from compiler.runtime.parameters import parameters_beside, safetensors_header
from passes.base.errors import QmlirError
from tests.e2e import checkpoints
from tests.e2e.cli_runner import run as cli
from tests.e2e.models import moe, tiny
from tests.e2e.python_child import run_python

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ("none", "fp8-current", "fp8-delayed", "fp8-block", "mxfp8", "nvfp4")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("QMLIR_CACHE_DIR", str(tmp_path / "cache"))


def _sample(name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "samples"))
    try:
        module = __import__(name)
    finally:
        sys.path.remove(str(ROOT / "samples"))
    return module.build()


# small models through every path a weight takes: views folded into it (x @ w, w as [K, N]),
# weights inside lists, bf16 weights, an embedding, MoE experts split from one batched weight
MODELS = {
    "variants": tiny.variants,
    "weights_in_lists": tiny.weights_in_lists,
    "bf16": tiny.bf16,
    "embedding": tiny.tagger,
    "experts": moe.batched,
}


CASES = [
    *[("variants", recipe) for recipe in RECIPES],
    ("weights_in_lists", "fp8-current"),
    ("bf16", "nvfp4"),
    ("embedding", "mxfp8"),
    ("experts", "fp8-block"),
]


@pytest.mark.parametrize(("model_name", "recipe"), CASES)
def test_external_weights_give_the_inlined_outputs(model_name: str, recipe: str) -> None:
    model, inputs = MODELS[model_name]()
    inline = compiler.compile(model, inputs, recipe=recipe, allow_unquantized=True)
    external = compiler.compile(
        model, inputs, recipe=recipe, weights="external", allow_unquantized=True
    )
    assert external.parameter_file is not None and inline.parameter_file is None
    for _ in range(2):  # fp8-delayed: its state moves the same way in both
        assert torch.equal(inline(*inputs), external(*inputs))
    assert external.record.weights == inline.record.weights  # bytes by format, as inlined


@pytest.mark.parametrize(("sample", "recipe"), [("transformer_block", "nvfp4"), ("mlp", "mxfp8")])
def test_sample_external_weights_give_the_inlined_outputs(sample: str, recipe: str) -> None:
    model, inputs = _sample(sample)[:2]
    inline = compiler.compile(model, inputs, recipe=recipe)
    external = compiler.compile(model, inputs, recipe=recipe, weights="external")
    # the weights left the module: what it lost is (almost) all of their bytes; a ratio of the
    # two sizes would depend on the host's code size (AVX-512 code is larger than AVX2's). The
    # inline artifact compared reads its weights' codes in each call as the external one does
    # (on an AVX512-BF16 host both then hold prefill-gemm's executables: the same code)
    same_code = compiler.compile(model, inputs, recipe=recipe, pack_weights="call")
    weight_bytes = sum(inline.record.weights.values())
    assert len(same_code.vmfb) - len(external.vmfb) >= 0.98 * weight_bytes
    np.testing.assert_array_equal(inline(*inputs).numpy(), external(*inputs).numpy())


def test_weights_packed_in_every_call_or_decoded_at_load_give_the_same_outputs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``pack_weights="call"``: IREE packs the weights into its GEMM tiles in each call, not
    once into the module's memory (no hoisted constant expressions: the flag reaches
    iree-compile); ``"load"`` hoists only the constant expressions that do not grow (IREE's
    threshold set to 0: no decoded copy of a small weight either); ``"decoded"``: every
    constant expression over the parameters hoisted, the FP8/FP4 decodes included (the size
    threshold lifted after that, as for inline weights). The outputs are the packed-at-load
    artifact's, bit for bit. An unknown mode is one line."""
    from passes.host.flags import (
        HOIST_ALL_FLAG,
        HOIST_NO_GROWTH_FLAG,
        PACK_PER_CALL_FLAG,
        artifact_cpu_flags,
    )
    from tests.e2e.iree_flags import record_iree_flags

    model, inputs = _sample("mlp")[:2]
    seen = record_iree_flags(monkeypatch)
    load = compiler.compile(model, inputs, "mxfp8", weights="external")
    call = compiler.compile(model, inputs, "mxfp8", weights="external", pack_weights="call")
    decoded = compiler.compile(model, inputs, "mxfp8", weights="external", pack_weights="decoded")
    assert [PACK_PER_CALL_FLAG in a for a in seen] == [False, True, False]
    assert [HOIST_ALL_FLAG in a for a in seen] == [False, False, True]
    # the target's own flags, before those: iree-compile takes the last of a repeated flag
    assert HOIST_NO_GROWTH_FLAG in artifact_cpu_flags("host", external=True)
    assert HOIST_ALL_FLAG not in artifact_cpu_flags("host", external=True)
    np.testing.assert_array_equal(load(*inputs).numpy(), call(*inputs).numpy())
    np.testing.assert_array_equal(load(*inputs).numpy(), decoded(*inputs).numpy())
    with pytest.raises(QmlirError, match="unknown --pack-weights 'never'"):
        compiler.compile(model, inputs, "mxfp8", pack_weights="never")


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    model, (x,) = tiny.build()
    art = compiler.compile(model, (x,), "fp8-current", weights="external")
    temporary = art.parameter_file
    assert temporary is not None
    path = tmp_path_factory.mktemp("ext") / "tiny.vmfb"
    art.save(path)
    assert (
        art.parameter_file == parameters_beside(path) == path.with_name("tiny.params.safetensors")
    )
    assert not temporary.exists()  # moved, not copied
    return path, x.numpy(), art(x.numpy())


def test_saved_artifact_loads_its_parameter_file(saved, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path, x, expected = saved
    np.testing.assert_array_equal(compiler.load(path)(x), expected)
    # elsewhere, named explicitly
    elsewhere = tmp_path / "weights.safetensors"
    elsewhere.write_bytes(parameters_beside(path).read_bytes())
    moved = tmp_path / "m.vmfb"
    moved.write_bytes(path.read_bytes())
    with pytest.raises(QmlirError, match="does not exist .*--parameters"):
        compiler.load(moved)
    np.testing.assert_array_equal(compiler.load(moved, parameters=elsewhere)(x), expected)
    # the file is plain safetensors, as the safetensors library reads it; every tensor starts
    # 64-byte aligned in the file (IREE maps it in place)
    header = safetensors_header(elsewhere)
    assert {e["dtype"] for e in header.values()} == {"I8", "F32"}
    data_start = 8 + int.from_bytes(elsewhere.read_bytes()[:8], "little")
    assert all((data_start + e["data_offsets"][0]) % 64 == 0 for e in header.values())
    with safe_open(str(elsewhere), framework="pt") as f:
        fc1 = f.get_tensor("fc1.bias")
    torch.testing.assert_close(fc1, tiny.build()[0].fc1.bias.detach(), rtol=0, atol=0)


def _refused(path: Path, params: Path, match: str) -> None:
    with pytest.raises(QmlirError, match=match):
        compiler.load(path, parameters=params)


def test_a_damaged_or_swapped_parameter_file_is_refused(saved, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path, x, expected = saved
    good = parameters_beside(path).read_bytes()
    params = tmp_path / "p.safetensors"
    params.write_bytes(good)
    compiler.load(path, parameters=params)  # verified, and remembered in the cache
    cache = json.loads(
        (Path(os.environ["QMLIR_CACHE_DIR"]) / "verified-parameters.json").read_text()
    )
    assert str(params.resolve()) in cache
    _refused(path, tmp_path / "none.safetensors", "does not exist")
    params.write_bytes(good[:-1])
    _refused(path, params, "has .* bytes, the artifact was sealed with")
    rng = np.random.default_rng(0)
    for position in rng.integers(0, len(good), 20).tolist():  # after a verified load too
        bad = bytearray(good)
        bad[position] ^= 0x10
        params.write_bytes(bytes(bad))
        _refused(path, params, "SHA-256 differs from the sealed one")
    # another compile's file of the same size (other weights)
    model, (x2,) = tiny.build()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)
    other = compiler.compile(model, (x2,), "fp8-current", weights="external")
    assert other.parameter_file is not None
    assert other.parameter_file.stat().st_size == len(good)
    _refused(path, other.parameter_file, "SHA-256 differs")
    params.write_bytes(good)
    np.testing.assert_array_equal(compiler.load(path, parameters=params)(x), expected)


def test_cli_run_and_inspect_find_the_parameter_file(saved, capsys) -> None:  # type: ignore[no-untyped-def]
    path, x, _ = saved
    code, out, _ = cli(capsys, "inspect", str(path))
    assert code == 0
    assert "parameters (weights outside the module)" in out
    assert "(size matches)" in out and "iree-run-module" in out
    code, out, err = cli(
        capsys, "run", str(path), "--random-inputs", "--parameters", "/nonexistent"
    )
    assert code != 0 and "does not exist" in err and len(err.strip().splitlines()) == 1
    code, out, _ = cli(capsys, "run", str(path), "--random-inputs")
    assert code == 0 and "output 0" in out


_PEAK = r"""
import json, sys
from compiler.cli import main
code = main(sys.argv[1:])
hwm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
print(json.dumps({"code": code, "peak_mb": hwm / 1024}))
"""


def test_compile_memory_does_not_grow_with_the_checkpoint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A ~260 MB bf16 checkpoint (its largest tensors 98 MB) compiles in well under what its
    weights would take held once in f32 (and 6-10x that, inlined): the weights stream."""
    model = checkpoints.llama(
        dtype=torch.bfloat16,
        hidden_size=1024,
        intermediate_size=4096,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=2,
        vocab_size=48000,
    )
    folder = checkpoints.save(model, tmp_path / "big", shard="100MB")
    stored = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    del model
    assert stored > 200e6
    out = tmp_path / "big.vmfb"
    measured = run_python(_PEAK, "compile", str(folder), "-o", str(out), "-q", "--seq", "8")
    peak_mb = measured["peak_mb"]
    # torch + IREE + the importer alone take ~0.7 GB; measured 0.86 GB (inline: 2.8 GB)
    assert peak_mb < 1200, peak_mb
    assert parameters_beside(out).stat().st_size < stored


def test_cli_writes_the_parameter_file_beside_a_new_output(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "new" / "dir" / "m.vmfb"
    model = str(Path(tiny.__file__)) + ":build"
    code, stdout, _ = cli(capsys, "compile", model, "--weights", "external", "-o", str(out))
    assert code == 0, stdout
    assert sorted(p.name for p in out.parent.iterdir()) == ["m.params.safetensors", "m.vmfb"]
    x = tiny.build()[1][0].numpy()
    inline = compiler.compile(*tiny.build(), "fp8-current")
    np.testing.assert_array_equal(compiler.load(out)(x), inline(x))


def test_a_full_disk_while_streaming_leaves_no_parameter_file(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A write that fails in the stream's writer thread (no space left) ends the compile with
    one line naming the file, and neither the parameter file nor its temporary is left."""
    from compiler.backend import parameter_file

    folder = checkpoints.save(checkpoints.llama(), tmp_path / "llama")

    class _Full:
        def __init__(self, path: Path, mode: str) -> None:
            self._file = open(path, mode)  # noqa: SIM115
            self._left = 20_000

        def write(self, data: object) -> int:
            view = memoryview(data)  # type: ignore[arg-type]
            if view.nbytes > self._left:
                raise OSError(28, "No space left on device")
            self._left -= view.nbytes
            return self._file.write(view)

        def __enter__(self) -> _Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self._file.close()

    monkeypatch.setattr(parameter_file, "open", _Full, raising=False)
    params = tmp_path / "out" / "m.params.safetensors"
    with pytest.raises(QmlirError, match=r"cannot write '.*m\.params\.safetensors': No space left"):
        compiler.compile(str(folder), recipe="fp8-current", parameters=params, batch=1, seq=8)
    assert list(params.parent.iterdir()) == []


def test_weights_read_past_the_page_cache_give_the_same_parameter_file(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A checkpoint the page cache does not hold is read with ``O_DIRECT`` (every tensor here,
    with the size threshold lowered) into the stream's buffers and moved to 64-byte boundaries:
    the parameter file is byte for byte the one read through the page cache."""
    from compiler.frontend import tensor_read

    if tensor_read._LIBC is None:
        pytest.skip("no O_DIRECT or mincore on this platform")
    folder = checkpoints.save(checkpoints.llama(), tmp_path / "llama")
    cached = tmp_path / "cached.params.safetensors"
    compiler.compile(str(folder), recipe="nvfp4", parameters=cached, batch=1, seq=8)
    direct = []
    read_direct = tensor_read._read_direct

    def counted(*args):  # type: ignore[no-untyped-def]
        data = read_direct(*args)
        direct.append(data is not None)
        return data

    monkeypatch.setattr(tensor_read, "DIRECT_MIN", 0)
    monkeypatch.setattr(tensor_read, "_read_direct", counted)
    for shard in folder.glob("*.safetensors"):
        os.sync()
        fd = os.open(shard, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    fresh = tmp_path / "direct.params.safetensors"
    compiler.compile(str(folder), recipe="nvfp4", parameters=fresh, batch=1, seq=8)
    if not any(direct):
        pytest.skip("the temporary folder's file system refuses O_DIRECT")
    assert len(direct) > 10
    assert fresh.read_bytes() == cached.read_bytes()
