"""A checkpoint folder is a model: it compiles (weights external by default) to the same outputs
as the ``nn.Module`` it was saved from, and a bad folder is one line naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.frontend.checkpoint import NextTokenLogits, OutputField
from compiler.runtime.parameters import safetensors_header
from tests.e2e import checkpoints
from tests.e2e.cli_runner import run as cli
from tests.e2e.filecheck import filecheck

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    folder = checkpoints.save(checkpoints.llama(), tmp_path_factory.mktemp("ckpt") / "llama")
    assert len(list(folder.glob("*.safetensors"))) > 3  # sharded
    return folder


def test_a_llama_folder_compiles_to_the_modules_outputs(llama_folder, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "lm.vmfb"
    code, stdout, _ = cli(capsys, "compile", str(llama_folder), "--recipe", "nvfp4", "-o", str(out))
    assert code == 0, stdout
    params = tmp_path / "lm.params.safetensors"
    assert params.is_file() and f"wrote {params}" in stdout
    stored = safetensors_header(params)  # the weights are outside the module
    assert stored["lm.model.embed_tokens.weight"]["dtype"] == "F32"
    assert stored["lm.lm_head.weight:0"]["dtype"] == "I8"  # E2M1 codes, two per byte
    art = compiler.load(out)
    ids = torch.randint(0, 256, (3, 11), generator=torch.Generator().manual_seed(1))
    module = compiler.compile(
        NextTokenLogits(checkpoints.llama()), (ids,), recipe="nvfp4"
    )  # the same model as an nn.Module, inline weights, static shapes
    np.testing.assert_array_equal(art(ids.numpy()), module(ids.numpy()))
    # batch and sequence are dynamic by default, bounded by max_position_embeddings
    (main,) = [f for f in [art.signature] if f]
    dims = main["inputs"][0]["dims"]
    assert [d["max"] for d in dims] == [64, 64]
    assert art(ids[:1, :5].numpy()).shape == (1, 256)
    # --compare runs the folder's model in torch, its weights loaded
    code, stdout, _ = cli(capsys, "run", str(out), "--compare", str(llama_folder))
    assert code == 0 and "cosine similarity" in stdout
    cosine = float(stdout.split("cosine similarity")[1].split()[0])
    assert cosine > 0.9


@pytest.mark.parametrize(("recipe", "one_row"), [("mxfp8", True), ("fp8-current", False)])
def test_a_causal_lms_last_mlp_takes_the_last_position_where_rows_are_quantized_apart(
    llama_folder, recipe: str, one_row: bool, tmp_path, capsys
) -> None:  # type: ignore[no-untyped-def]
    """The next-token logits read the last position only: where the recipe quantizes each
    activation row alone the last layer's MLP runs on that position (compiler/frontend/
    final_norm.py), from the command line and from the API; with a per-tensor scale on every
    one."""
    ir = tmp_path / "cli"
    args = ["compile", str(llama_folder), "--recipe", recipe, "-o", str(tmp_path / "lm.vmfb")]
    code, stdout, _ = cli(capsys, *args, "--dump-ir", str(ir))
    assert code == 0, stdout
    filecheck(checkpoints.last_mlp_checks(one_row), ir / "01-import.mlir")
    compiler.compile(llama_folder, recipe=recipe, dump_ir=tmp_path / "api")
    filecheck(checkpoints.last_mlp_checks(one_row), tmp_path / "api" / "01-import.mlir")


def test_an_encoder_folder_compiles_to_its_last_hidden_state(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = checkpoints.bert()
    folder = checkpoints.save(model, tmp_path / "bert")
    art = compiler.compile(str(folder), recipe="fp8-current")
    assert art.parameter_file is not None
    ids = torch.randint(0, 300, (2, 9), generator=torch.Generator().manual_seed(2))
    module = compiler.compile(OutputField(model, "last_hidden_state"), (ids,), "fp8-current")
    out = art(ids.numpy())
    assert out.shape == (2, 9, 64)
    np.testing.assert_array_equal(out, module(ids.numpy()))


def test_a_folder_with_weights_inline_and_a_static_shape(llama_folder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    art = compiler.compile(
        str(llama_folder), recipe="fp8-current", weights="inline", batch=2, seq=7
    )
    assert art.parameter_file is None and art.record.parameters is None
    assert [i["shape"] for i in art.signature["inputs"]] == [[2, 7]]
    ids = np.arange(14, dtype=np.int64).reshape(2, 7)
    with torch.no_grad():
        ref = NextTokenLogits(checkpoints.llama())(torch.from_numpy(ids)).numpy()
    out = art(ids)
    cosine = float((out * ref).sum() / np.linalg.norm(out) / np.linalg.norm(ref))
    assert cosine > 0.99


def test_a_tied_head_reads_the_embedding(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A checkpoint of a model whose lm_head is its embedding stores the tensor once."""
    model = checkpoints.llama(tied=True)
    folder = checkpoints.save(model, tmp_path / "tied", shard="10GB")
    assert "lm_head.weight" not in safetensors_header(folder / "model.safetensors")
    art = compiler.compile(str(folder), recipe="fp8-current", batch=2, seq=6)
    ids = torch.randint(0, 256, (2, 6), generator=torch.Generator().manual_seed(3))
    module = compiler.compile(NextTokenLogits(model), (ids,), recipe="fp8-current")
    np.testing.assert_array_equal(art(ids.numpy()), module(ids.numpy()))


def _one_line_error(capsys, folder: Path, tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    code, out, err = cli(capsys, "compile", str(folder), "-o", str(tmp_path / "x.vmfb"))
    assert code != 0 and not out
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not list(tmp_path.glob("x.*"))  # nothing half-written
    return err


def test_bad_folders_are_one_line_naming_the_file(llama_folder, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "has no config.json" in _one_line_error(capsys, empty, tmp_path)

    def copy(name: str) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        for f in llama_folder.iterdir():
            (folder / f.name).write_bytes(f.read_bytes())
        return folder

    unknown = copy("unknown")
    config = json.loads((unknown / "config.json").read_text())
    config["architectures"] = ["NoSuchForCausalLM"]
    (unknown / "config.json").write_text(json.dumps(config))
    assert "no architecture 'NoSuchForCausalLM'" in _one_line_error(capsys, unknown, tmp_path)

    missing = copy("missing")
    shard = sorted(missing.glob("*.safetensors"))[1]
    shard.unlink()
    err = _one_line_error(capsys, missing, tmp_path)
    assert f"'{shard}' is missing" in err

    wrong = copy("wrong")
    config = json.loads((wrong / "config.json").read_text())
    config["intermediate_size"] = 96
    (wrong / "config.json").write_text(json.dumps(config))
    err = _one_line_error(capsys, wrong, tmp_path)
    assert "mlp.gate_proj.weight' has shape [128, 64], the config's model needs [96, 64]" in err
    assert ".safetensors'" in err  # the file holding it
