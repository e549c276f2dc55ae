"""Artifacts you can trust: the seal catches every flipped bit before IREE sees a byte, inspect
never runs the module, metadata is checked field by field, files get the umask's mode, and
inputs are checked (embedding ranges, .npz names, bf16 .npy) before a call."""

from __future__ import annotations

import json
import os
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch
from iree import compiler as iree_compiler

import compiler
from compiler.cli import main
from compiler.runtime.seal import seal, unseal
from passes.base.errors import QmlirError
from tests.e2e.cli_runner import run as _cli
from tests.e2e.models import tiny

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

MODELS = Path(__file__).parent / "models"
TINY = str(MODELS / "tiny.py")


@pytest.fixture(scope="module")
def tiny_art(tmp_path_factory) -> tuple[Path, compiler.CompiledModule]:  # type: ignore[no-untyped-def]
    model, (x,) = tiny.build()
    art = compiler.compile(model, (x,), "fp8-current")
    path = tmp_path_factory.mktemp("trust") / "tiny.vmfb"
    art.save(path)
    return path, art


def test_every_flipped_bit_is_an_error(tiny_art, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path, art = tiny_art
    data = path.read_bytes()
    x = tiny.build()[1][0].numpy()
    np.testing.assert_array_equal(compiler.load(path)(x), art(x))
    rng = np.random.default_rng(0)
    # random positions over the whole file, and every byte of the seal and the metadata's end
    positions = [*rng.integers(0, len(data), 200).tolist(), *range(len(data) - 160, len(data))]
    flipped = tmp_path / "flipped.vmfb"
    for n, pos in enumerate(positions):
        bad = bytearray(data)
        bad[pos] ^= 1 << (n % 8)
        flipped.write_bytes(bytes(bad))
        with pytest.raises(QmlirError, match="damaged|not a qmlir artifact|malformed"):
            compiler.load(flipped)
    for cut in (1, 48, len(data) // 2):
        flipped.write_bytes(data[:-cut])
        with pytest.raises(QmlirError):
            compiler.load(flipped)


def test_cli_reports_a_damaged_artifact_in_one_line(capsys, tiny_art, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path, _ = tiny_art
    bad = bytearray(path.read_bytes())
    bad[len(bad) // 3] ^= 0x10
    damaged = tmp_path / "damaged.vmfb"
    damaged.write_bytes(bytes(bad))
    for command in ("inspect", "run"):
        extra = ["--random-inputs"] if command == "run" else []
        code, out, err = _cli(capsys, command, str(damaged), *extra)
        assert code == 1 and out == ""
        assert err.count("\n") == 1 and "SHA-256 digest does not match" in err


def _forged(tmp_path: Path) -> bytes:
    """A module built with plain iree-compile whose initializer fails if it ever runs."""
    return iree_compiler.compile_file(
        str(MODELS / "forged_initializer.mlir"),
        target_backends=["llvm-cpu"],
        extra_args=["--iree-llvmcpu-target-cpu=generic"],
    )


def test_inspect_reads_without_running_the_module(capsys, tiny_art, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path, art = tiny_art
    vmfb = _forged(tmp_path)
    plain = tmp_path / "plain.vmfb"
    plain.write_bytes(vmfb)
    code, _, err = _cli(capsys, "inspect", str(plain))
    assert code == 1 and "not a qmlir artifact" in err
    # sealed by a forger with believable metadata: the digest is no signature (documented);
    # inspect still prints it without running a byte of the module
    metadata = dict(art.metadata, signature={"inputs": [{"shape": [4], "dtype": "si32"}],
                                             "outputs": [{"shape": [4], "dtype": "si32"}]},
                    cpu=None)  # fmt: skip
    forged = tmp_path / "forged.vmfb"
    forged.write_bytes(seal(vmfb, metadata))
    code, out, err = _cli(capsys, "inspect", str(forged))
    assert code == 0 and err == "" and "main(si32[4]) -> (si32[4])" in out
    loaded = compiler.load(forged)  # loading does not run it either
    with pytest.raises(QmlirError, match="the forged initializer ran"):
        loaded(np.zeros(4, np.int32))  # the first call does (the trust boundary, docs/cli.md)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.pop("signature"), "metadata has no 'signature'"),
        (lambda m: m.update(target="tpu"), "metadata.target is 'tpu'"),
        (lambda m: m["layers"].append({"layer": 3}), "metadata.layers[2].layer is 3, not str"),
        (lambda m: m.update(functions="main"), "metadata.functions is not a list"),
        (
            lambda m: m["signature"]["inputs"][0].update(shape=[8, -1]),
            "metadata.signature.inputs[0].shape is [8, -1], not a shape",
        ),
        (lambda m: m.update(cuda_arch="sm_90"), "--cuda-arch needs --target cuda"),
    ],
)
def test_malformed_metadata_is_one_line(capsys, tiny_art, tmp_path, edit, message) -> None:  # type: ignore[no-untyped-def]
    path, art = tiny_art
    metadata = json.loads(json.dumps(art.metadata))
    edit(metadata)
    bad = tmp_path / "bad.vmfb"
    bad.write_bytes(seal(unseal(path.read_bytes()).vmfb, metadata))
    code, out, err = _cli(capsys, "inspect", str(bad))
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "malformed metadata" in err and message in err


@pytest.mark.parametrize("found", ["qmlir-artifact/9", "qmlir-artifact/0"])
def test_other_metadata_version_is_refused_naming_both(capsys, tiny_art, tmp_path, found) -> None:  # type: ignore[no-untyped-def]
    path, art = tiny_art
    metadata = dict(json.loads(json.dumps(art.metadata)), format=found)
    other = tmp_path / "other.vmfb"
    other.write_bytes(seal(unseal(path.read_bytes()).vmfb, metadata))
    for command in ("inspect", "run"):
        extra = ["--random-inputs"] if command == "run" else []
        code, out, err = _cli(capsys, command, str(other), *extra)
        assert code == 1 and out == "" and err.count("\n") == 1
        assert f"metadata format '{found}'" in err and "reads 'qmlir-artifact/1' only" in err
    with pytest.raises(QmlirError, match=f"format '{found}'.*'qmlir-artifact/1'"):
        compiler.load(other)


def test_metadata_record_reads_back_as_sealed(tiny_art) -> None:  # type: ignore[no-untyped-def]
    """The record's JSON is the sealed JSON: the same keys and values, written back the same."""
    path, art = tiny_art
    sealed = unseal(path.read_bytes())
    assert sealed.record == art.record and sealed.record.to_json() == art.metadata
    assert seal(sealed.vmfb, sealed.record) == path.read_bytes()
    assert art.record.target.cpu is not None and art.record.format == "qmlir-artifact/1"


def test_artifacts_get_the_umask_mode(tiny_art, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _, art = tiny_art
    previous = os.umask(0o022)
    try:
        art.save(tmp_path / "shared.vmfb")
        os.umask(0o077)
        art.save(tmp_path / "private.vmfb")
    finally:
        os.umask(previous)
    assert (tmp_path / "shared.vmfb").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "private.vmfb").stat().st_mode & 0o777 == 0o600


@pytest.fixture(scope="module")
def tagger_art() -> compiler.CompiledModule:
    model, inputs = tiny.tagger()
    return compiler.compile(model, inputs, "fp8-current")


def test_embedding_inputs_are_range_checked(tagger_art) -> None:  # type: ignore[no-untyped-def]
    ids, mask = (t.numpy() for t in tiny.tagger()[1])
    inputs = tagger_art.signature["inputs"]
    assert [(s["name"], s.get("index_range")) for s in inputs] == [
        ("input_ids", [0, 50]),
        ("attention_mask", None),
    ]
    model = tiny.tagger()[0]
    with torch.no_grad():
        want = model(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
    assert compiler.analysis.metrics.compare(want, tagger_art(ids, mask)).cosine >= 0.999
    for bad in (50, -1, 1 << 40):
        wrong = ids.copy()
        wrong[1, 3] = bad
        with pytest.raises(QmlirError, match=rf"input 0 \(input_ids\) holds {bad}; .* 0\.\.49"):
            tagger_art(wrong, mask)
    tagger_art(np.full_like(ids, 49), mask)  # the last row is fine


def test_npz_inputs_are_taken_by_name(capsys, tagger_art, tmp_path) -> None:  # type: ignore[no-untyped-def]
    ids, mask = (t.numpy() for t in tiny.tagger()[1])
    path = tmp_path / "tag.vmfb"
    tagger_art.save(path)
    want = tagger_art(ids, mask)
    swapped = tmp_path / "swapped.npz"
    np.savez(swapped, attention_mask=mask, input_ids=ids)  # not in signature order
    out = tmp_path / "out.npz"
    code, _, _ = _cli(capsys, "run", str(path), "--inputs", str(swapped), "-o", str(out))
    assert code == 0
    np.testing.assert_array_equal(np.load(out)["out0"], want)
    np.savez(tmp_path / "args.npz", arg1=mask, arg0=ids)
    code, _, _ = _cli(capsys, "run", str(path), "--inputs", str(tmp_path / "args.npz"))
    assert code == 0
    cases = {
        "unknown": ({"input_ids": ids, "mask": mask}, "holds 'mask', which is not an input"),
        "missing": ({"input_ids": ids}, "has no array for input 1 (attention_mask)"),
        "twice": ({"input_ids": ids, "arg0": ids, "arg1": mask}, "gives input 0 (input_ids) twice"),
    }
    for name, (arrays, message) in cases.items():
        np.savez(tmp_path / f"{name}.npz", **arrays)
        code, _, err = _cli(capsys, "run", str(path), "--inputs", str(tmp_path / f"{name}.npz"))
        assert code == 1 and message in err and err.count("\n") == 1, name
    np.save(tmp_path / "ids.npy", np.full_like(ids, 50))
    np.savez(tmp_path / "oob.npz", input_ids=np.full_like(ids, 50), attention_mask=mask)
    code, _, err = _cli(capsys, "run", str(path), "--inputs", str(tmp_path / "oob.npz"))
    assert code == 1 and "input 0 (input_ids) holds 50" in err and err.count("\n") == 1


def test_bf16_inputs_from_npy(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    model, (x,) = tiny.bf16()
    path = tmp_path / "bf16.vmfb"
    compiler.compile(model, (x,), "fp8-current").save(path)
    xs = x.float().numpy().astype(ml_dtypes.bfloat16)
    np.save(tmp_path / "x.npy", xs)  # numpy stores it as |V2
    assert np.load(tmp_path / "x.npy").dtype.kind == "V"
    out = tmp_path / "out.npz"
    code, _, err = _cli(
        capsys, "run", str(path), "--inputs", str(tmp_path / "x.npy"), "-o", str(out)
    )
    assert code == 0, err
    want = compiler.load(path)(xs)
    np.testing.assert_array_equal(np.load(out)["out0"], want.astype(np.float32))


def test_compare_flattens_a_model_output(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "mo.vmfb"
    assert main(["compile", f"{TINY}:model_output", "-o", str(path), "-q"]) == 0
    code, out, err = _cli(capsys, "run", str(path), "--compare", f"{TINY}:model_output")
    assert code == 0, err
    cosine = float(next(line for line in out.splitlines() if line.startswith("cosine")).split()[-1])
    assert cosine >= 0.999
