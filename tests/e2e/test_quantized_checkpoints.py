"""Quantized checkpoints compile as they are: a DeepSeek-style FP8 folder (transformers
``quant_method: fp8``) and one written by compressed-tensors' own compressor give a parameter
file holding their codes and scales byte for byte, logits that match transformers' own loading
of the folder, and one line for a format or a checkpoint qmlir cannot take."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

import compiler
from compiler.frontend import prequantized
from compiler.frontend.checkpoint import NextTokenLogits
from compiler.runtime.parameters import safetensors_header
from passes.base.errors import QmlirError
from tests.e2e import checkpoints
from tests.e2e.cli_runner import run as cli
from tests.reference import fp8 as fp8_reference
from tests.reference import nvfp4

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

SIZES = {"hidden_size": 256, "intermediate_size": 384, "vocab_size": 256}


def _model(layers: int = 2, seed: int = 0) -> torch.nn.Module:
    return checkpoints.llama(seed, torch.bfloat16, num_hidden_layers=layers, **SIZES)


@pytest.fixture(scope="module")
def deepseek_folder(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    return checkpoints.save_fp8_blocks(_model(), tmp_path_factory.mktemp("ds") / "ds")


@pytest.fixture(scope="module")
def ct_folder(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("ct") / "ct"
    return checkpoints.save_compressed_tensors(_model(1, seed=3), folder, "FP8_BLOCK")


def _stored_codes(folder: Path, scale_name: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each FP8 weight of the folder: its codes (int8 bytes) and its scale (f32)."""
    out = {}
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        for key in f.keys():
            if key.endswith("." + scale_name):
                weight = key.removesuffix(scale_name) + "weight"
                codes = f.get_tensor(weight).view(torch.int8).numpy()
                out[weight] = (codes, f.get_tensor(key).float().numpy())
    return out


def _check_parameter_file(
    art: compiler.CompiledModule, folder: Path, scale_name: str, excluded: str = "-"
) -> int:
    """The parameter file holds every FP8 weight's codes and scales as the folder stores them
    (scales as the GEMM takes them: 128x128 block scales padded to 4 columns), but those of
    layers named ``excluded``; returns how many."""
    assert art.parameter_file is not None
    stored = _stored_codes(folder, scale_name)
    with safe_open(str(art.parameter_file), "np") as f:
        keys = set(f.keys())
        for weight, (codes, scale) in stored.items():
            if excluded in weight:
                assert f"lm.{weight}" in keys  # kept whole, in high precision
                continue
            (key,) = [k for k in keys if k.startswith(f"lm.{weight}") and k.endswith(":0")]
            np.testing.assert_array_equal(f.get_tensor(key), codes)
            swizzled = key + "#2"  # block scales padded for the GEMM; a per-tensor one as is
            got = f.get_tensor(swizzled if swizzled in keys else key[:-1] + "1")
            if scale.ndim == 2 and scale.shape[1] == 1:  # per row: [1, pad4(rows)] for the GEMM
                np.testing.assert_array_equal(got[0, : scale.shape[0]], scale[:, 0])
            elif scale.ndim == 2:
                np.testing.assert_array_equal(got[:, : scale.shape[1]], scale)
                assert not got[:, scale.shape[1] :].any()
            else:
                np.testing.assert_array_equal(got.reshape(-1), scale.reshape(-1))
    return len([w for w in stored if excluded not in w])


def _transformers_logits(
    folder: Path, ids: torch.Tensor, activations: dict[str, float] | None = None
) -> np.ndarray:
    """The next-token logits of the folder as transformers loads it on a CPU (its weights
    dequantized by transformers or compressed-tensors), computed in f32; ``activations``:
    each named linear's input NVFP4-quantized (TE's rule, blocks of 16) with that static global
    decode scale, as the checkpoint's activation scheme says, by the test reference."""
    from transformers import AutoConfig, AutoModelForCausalLM, CompressedTensorsConfig

    quant = json.loads((folder / "config.json").read_text())["quantization_config"]
    extra = {}
    # dequantized in f32 where activations are quantized too: a bf16 weight would flip codes
    dtype = torch.float32 if activations else "auto"
    if quant["quant_method"] == "compressed-tensors":  # dequantized while loading
        extra["quantization_config"] = CompressedTensorsConfig(dequantize=True)
    if quant.get("format") == "mixed-precision":  # transformers' CPU loader cannot: the library
        weights = _decompressed(folder)
        config = AutoConfig.from_pretrained(str(folder))
        del config.quantization_config
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()
        wanted = plain.state_dict()
        plain.load_state_dict({k: weights[k].float() for k in wanted}, strict=True)
    else:
        with warnings.catch_warnings():  # "the quantization_config from the model will be used"
            warnings.simplefilter("ignore", UserWarning)
            loaded = AutoModelForCausalLM.from_pretrained(str(folder), **extra, dtype=dtype).eval()
        config = loaded.config
        if hasattr(config, "quantization_config"):  # compressed-tensors keeps it
            del config.quantization_config
        plain = type(loaded)._from_config(config, dtype=torch.float32).eval()
        plain.load_state_dict({k: v.float() for k, v in loaded.state_dict().items()}, strict=True)
    for name, decode in (activations or {}).items():
        plain.get_submodule(name).register_forward_pre_hook(_nvfp4_input(decode))
    with torch.no_grad():
        return plain(input_ids=ids).logits[:, -1].numpy()


def _nvfp4_input(decode: float):  # type: ignore[no-untyped-def]
    """A pre-hook replacing a linear's input by its NVFP4 dequantized values (static global)."""

    def hook(module: torch.nn.Module, args: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor]:
        x = args[0].numpy()
        flat = x.reshape(-1, x.shape[-1])
        packed, d, s_dec = nvfp4.quantize(flat, static_decode=decode)
        values = nvfp4.dequantize(packed, d, s_dec, flat.shape[1])
        return (torch.from_numpy(values.reshape(x.shape)),)

    return hook


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


IDS = torch.randint(0, 256, (2, 12), generator=torch.Generator().manual_seed(0))
# static shapes: a folder's dynamic batch and sequence compile 4x slower (the formats' handling
# is the same either way; dynamic folders are tested in test_checkpoint_folder.py)
STATIC = {"batch": 2, "seq": 12}
STATIC_FLAGS = ("--batch", "2", "--seq", "12")


def test_a_deepseek_fp8_folder_compiles_with_its_codes(deepseek_folder, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "ds.vmfb"
    code, stdout, _ = cli(
        capsys, "compile", str(deepseek_folder), "-o", str(out), "--explain", *STATIC_FLAGS
    )
    assert code == 0, stdout
    assert "recipe fp8-block, 14/19 matmuls quantized" in stdout  # the checkpoint's recipe
    assert "lm.lm_head" in stdout and "stored in high precision in the quantized" in stdout
    art = compiler.load(out)
    assert _check_parameter_file(art, deepseek_folder, "weight_scale_inv") == 14
    header = safetensors_header(art.parameter_file)
    assert header["lm.lm_head.weight"]["dtype"] == "BF16"  # as stored: not quantized
    cosine = _cosine(art(IDS.numpy()), _transformers_logits(deepseek_folder, IDS))
    assert (cosine >= 0.999).all(), cosine
    # report / --compare run the folder's model dequantized as transformers does; its example
    # ids (2 x 8) do not fit this static artifact (2 x 12): random ids of its shapes instead
    code, stdout, err = cli(capsys, "run", str(out), "--compare", str(deepseek_folder))
    assert code == 0 and float(stdout.split("cosine similarity")[1].split()[0]) > 0.99
    assert "example inputs do not fit the artifact" in err


def test_a_compressed_tensors_fp8_block_folder_compiles_with_its_codes(ct_folder) -> None:  # type: ignore[no-untyped-def]
    quant = json.loads((ct_folder / "config.json").read_text())["quantization_config"]
    assert quant["quant_method"] == "compressed-tensors"  # the library's own config
    art = compiler.compile(str(ct_folder), **STATIC)
    assert art.record.recipe["name"] == "fp8-block"
    assert _check_parameter_file(art, ct_folder, "weight_scale") == 7
    cosine = _cosine(art(IDS.numpy()), _transformers_logits(ct_folder, IDS))
    assert (cosine >= 0.999).all(), cosine


def test_a_per_tensor_fp8_folder_compiles_with_fp8_current(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = checkpoints.save_fp8_blocks(_model(1, seed=5), tmp_path / "pt", per_tensor=True)
    art = compiler.compile(str(folder), exclude=["*.mlp.down_proj"], **STATIC)
    assert art.record.recipe["name"] == "fp8-current"
    assert _check_parameter_file(art, folder, "weight_scale_inv", "down_proj") == 6
    notes = {layer.layer: layer.note for layer in art.record.layers}
    assert notes["lm.model.layers.0.mlp.down_proj"].startswith("excluded by --exclude")
    # the excluded layer runs on its dequantized weight (code x scale), as transformers does
    cosine = _cosine(art(IDS.numpy()), _transformers_logits(folder, IDS))
    assert (cosine >= 0.999).all(), cosine
    # quantizing a stored layer another way would re-quantize its codes: refused, one line
    with pytest.raises(QmlirError, match=r"q_proj.weight.* is stored as transformers fp8"):
        compiler.compile(str(folder), layer_recipes={"*q_proj": "mxfp8"}, **STATIC)


def _broken(folder: Path, tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    """A copy of ``folder`` whose tensors ``edit`` changed (a dict of torch tensors)."""
    copy = tmp_path / f"{folder.name}-broken"
    shutil.copytree(folder, copy)
    tensors = load_file(str(copy / "model.safetensors"))
    edit(tensors)
    save_file(tensors, str(copy / "model.safetensors"), metadata={"format": "pt"})
    return copy


SCALE = "model.layers.0.self_attn.q_proj.weight_scale_inv"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.pop(SCALE), r"weight 'model.layers.0.self_attn.q_proj.weight' has no scale"),
        (
            lambda t: t.update({SCALE: torch.ones(2, 3)}),
            rf"scale '{SCALE}' has shape \[2, 3\]; transformers fp8 \(128x128 blocks\) needs "
            r"\[2, 2\]",
        ),
        (lambda t: t[SCALE].__setitem__((0, 1), float("nan")), rf"scale '{SCALE}' holds nan"),
        (lambda t: t[SCALE].__setitem__((1, 0), 0.0), rf"scale '{SCALE}' holds 0.0"),
        (
            lambda t: t.update({"model.norm.weight_scale_inv": torch.ones(())}),
            r"'model.norm.weight_scale_inv' scales 'model.norm.weight', which is BF16, not F8",
        ),
    ],
    ids=["missing-scale", "scale-shape", "nan-scale", "zero-scale", "scale-of-a-bf16-weight"],
)
def test_a_bad_quantized_checkpoint_is_one_line_naming_the_tensor(  # type: ignore[no-untyped-def]
    deepseek_folder, tmp_path, capsys, edit, message
) -> None:
    _refused_in_one_line(_broken(deepseek_folder, tmp_path, edit), tmp_path, capsys, message)


def _refused_in_one_line(folder: Path, tmp_path: Path, capsys, message: str) -> None:  # type: ignore[no-untyped-def]
    """``qmlir compile`` of ``folder`` fails with one line naming its shard and matching
    ``message``, and writes no artifact."""
    out = tmp_path / "bad.vmfb"
    code, _, stderr = cli(capsys, "compile", str(folder), "-o", str(out))
    assert code != 0 and not out.exists()
    (line,) = stderr.strip().splitlines()
    assert line.startswith("qmlir: error: ") and "model.safetensors" in line, line
    assert re.search(message, line), line


def _with_quant(folder: Path, tmp_path: Path, quant: dict | None, name: str) -> Path:  # type: ignore[type-arg]
    copy = tmp_path / name
    shutil.copytree(folder, copy)
    config = json.loads((copy / "config.json").read_text())
    config["quantization_config"] = quant
    (copy / "config.json").write_text(json.dumps(config))
    return copy


def test_formats_and_choices_it_cannot_take_are_one_line(deepseek_folder, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    awq = _with_quant(deepseek_folder, tmp_path, {"quant_method": "awq", "bits": 4}, "awq")
    code, _, stderr = cli(capsys, "compile", str(awq), "-o", str(tmp_path / "a.vmfb"))
    assert code != 0
    assert "quant_method 'awq' is not supported; qmlir compiles transformers fp8" in stderr
    static = {"quant_method": "fp8", "activation_scheme": "static", "weight_block_size": [128, 128]}
    folder = _with_quant(deepseek_folder, tmp_path, static, "static")
    with pytest.raises(QmlirError, match="static activations and 128x128 weight blocks is not"):
        compiler.compile(str(folder))
    modelopt = tmp_path / "modelopt"
    shutil.copytree(deepseek_folder, modelopt)
    (modelopt / "hf_quant_config.json").write_text('{"quantization": {"quant_algo": "W4A8_AWQ"}}')
    with pytest.raises(QmlirError, match=r"ModelOpt quant_algo 'W4A8_AWQ' is not supported"):
        compiler.compile(str(modelopt))
    # another recipe would re-quantize the stored codes; inline weights cannot hold them
    with pytest.raises(QmlirError, match="compiles with recipe 'fp8-block' .* not 'nvfp4'"):
        compiler.compile(str(deepseek_folder), recipe="nvfp4")
    with pytest.raises(QmlirError, match=r"weights outside the module \(--weights external\)"):
        compiler.compile(str(deepseek_folder), weights="inline")
    # no weight stored as FP8 while the config says so
    plain = checkpoints.save(_model(1), tmp_path / "plain")
    claims = _with_quant(plain, tmp_path, {"quant_method": "fp8"}, "claims")
    with pytest.raises(QmlirError, match="no weight is stored as F8_E4M3"):
        compiler.compile(str(claims))


def test_a_compressed_tensors_fp8_dynamic_folder_compiles_with_fp8_rowwise(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """FP8_DYNAMIC (a scale per output channel, activations per token), as compressed-tensors'
    compressor writes it: fp8-rowwise with the folder's codes and scales."""
    folder = checkpoints.save_compressed_tensors(_model(1, seed=6), tmp_path / "dyn", "FP8_DYNAMIC")
    art = compiler.compile(str(folder), **STATIC)
    assert art.record.recipe["name"] == "fp8-rowwise"
    assert _check_parameter_file(art, folder, "weight_scale") == 7
    cosine = _cosine(art(IDS.numpy()), _transformers_logits(folder, IDS))
    assert (cosine >= 0.999).all(), cosine


def _decompressed(folder: Path) -> dict[str, torch.Tensor]:
    """The folder's weights as compressed-tensors decompresses them: transformers builds the
    model with each layer's scheme and loads the stored tensors; the library's
    ``ModelCompressor`` decompresses every module by its own group's format."""
    from compressed_tensors.compressors import ModelCompressor
    from transformers import AutoModelForCausalLM

    loaded = AutoModelForCausalLM.from_pretrained(str(folder))
    ModelCompressor.from_compression_config(
        loaded.hf_quantizer.quantization_config
    ).decompress_model(loaded)
    return loaded.state_dict()


def test_an_export_decompresses_to_qmlirs_own_weights(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = checkpoints.llama(0, torch.float32, num_hidden_layers=1, **SIZES)
    out = compiler.export_checkpoint(
        model,
        tmp_path / "mixed",
        "fp8-block",
        exclude=["lm_head"],
        layer_recipes={"*.down_proj": "fp8-rowwise", "*.mlp.*": "mxfp8"},
    )
    quant = json.loads((out / "config.json").read_text())["quantization_config"]
    assert quant["format"] == "mixed-precision" and quant["ignore"] == ["lm_head"]
    formats = sorted(g["format"] for g in quant["config_groups"].values())
    assert formats == ["float-quantized", "float-quantized", "mxfp8-quantized"]
    weights = _decompressed(out)
    for name, tensor in model.state_dict().items():
        got = weights[name].float().numpy()
        if name.endswith("proj.weight"):
            recipe = "mxfp8" if ".mlp." in name else "fp8-block"
            recipe = "fp8-rowwise" if "down_proj" in name else recipe
            want = compiler.quantize(tensor.numpy(), recipe, role="weight").dequantize()
        else:
            want = tensor.numpy()  # copied as it is
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_qmlir_export_writes_a_folder_transformers_runs(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    model = checkpoints.llama(2, torch.float32, num_hidden_layers=1, **SIZES)
    source = checkpoints.save(model, tmp_path / "f32")
    out = tmp_path / "block"
    code, stdout, _ = cli(
        capsys,
        "export",
        str(source),
        "--recipe",
        "fp8-block",
        "--exclude",
        "lm_head",
        "-o",
        str(out),
    )
    assert code == 0 and f"wrote {out}" in stdout, stdout
    quant = json.loads((out / "config.json").read_text())["quantization_config"]
    assert quant["ignore"] == ["lm_head"]
    # per-tensor scales too (fp8-current), as compressed-tensors decompresses them
    per_tensor = compiler.export_checkpoint(str(source), tmp_path / "pt", "fp8-current")
    for folder, recipe in ((out, "fp8-block"), (per_tensor, "fp8-current")):
        weights = _decompressed(folder)
        for name, tensor in model.state_dict().items():
            if name.endswith("proj.weight"):
                want = compiler.quantize(tensor.numpy(), recipe, role="weight").dequantize()
                np.testing.assert_array_equal(weights[name].numpy(), want, err_msg=name)
    # a recipe compressed-tensors cannot express, a folder in the way: one line each
    capsys.readouterr()  # transformers' progress bars so far
    code, _, stderr = cli(capsys, "export", str(source), "--recipe", "fp8-delayed", "-o", str(out))
    assert code != 0 and len(stderr.strip().splitlines()) == 1
    assert "recipe 'fp8-delayed' does not export to compressed-tensors" in stderr
    code, _, stderr = cli(capsys, "export", str(source), "--recipe", "nvfp4", "-o", str(out))
    assert code != 0 and len(stderr.strip().splitlines()) == 1
    assert "qmlir calibrate --recipe nvfp4" in stderr
    code, _, stderr = cli(capsys, "export", str(source), "-o", str(out))
    assert code != 0 and "exists and is not an empty folder" in stderr


@pytest.mark.parametrize("scheme", ["FP8_BLOCK", "FP8", "NVFP4", "MXFP4"])
def test_import_then_export_is_byte_identical(tmp_path, scheme) -> None:  # type: ignore[no-untyped-def]
    """A compressed-tensors folder (FP8_BLOCK, MXFP4; FP8 and NVFP4 with their static input
    scales) exported again: the same tensors, dtypes and bytes, the same quantization_config."""
    source = checkpoints.save_compressed_tensors(_model(1, seed=3), tmp_path / "src", scheme)
    out = compiler.export_checkpoint(str(source), tmp_path / "again")
    before, after = (safetensors_header(f / "model.safetensors") for f in (source, out))
    names = sorted(k for k in before if k != "__metadata__")
    assert names == sorted(k for k in after if k != "__metadata__")
    with (
        safe_open(str(source / "model.safetensors"), "pt") as a,
        safe_open(str(out / "model.safetensors"), "pt") as b,
    ):
        for name in names:
            x, y = a.get_tensor(name), b.get_tensor(name)
            assert x.dtype == y.dtype and x.shape == y.shape, name
            assert torch.equal(x.view(torch.uint8), y.view(torch.uint8)), name
    quant = [
        json.loads((f / "config.json").read_text())["quantization_config"] for f in (source, out)
    ]
    assert quant[0] == quant[1]


def test_calibrated_scales_export_and_compile_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """calibrate → export fp8-current with static input scales → compile the folder: the same
    artifact as compiling the model with those scales, bit for bit."""
    model = checkpoints.llama(5, torch.float32, num_hidden_layers=1, **SIZES)
    batches = [
        torch.randint(0, 256, (4, 16), generator=torch.Generator().manual_seed(i)) for i in range(2)
    ]
    scales = compiler.calibrate(model, batches)
    folder = compiler.export_checkpoint(
        model, tmp_path / "static", "fp8-current", exclude=["lm_head"], activation_scales=scales
    )
    group = json.loads((folder / "config.json").read_text())["quantization_config"]
    assert group["config_groups"]["group_0"]["input_activations"]["dynamic"] is False
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        stored = f.get_tensor("model.layers.0.mlp.down_proj.input_scale")
    assert stored.tolist() == [scales["model.layers.0.mlp.down_proj"]]
    art = compiler.compile(str(folder), **STATIC)
    wrapped = {f"lm.{k}": v for k, v in scales.items() if k != "lm_head"}
    direct = compiler.compile(
        NextTokenLogits(model),
        (IDS,),
        "fp8-current",
        exclude=["lm.lm_head"],
        activation_scales=wrapped,
    )
    np.testing.assert_array_equal(art(IDS.numpy()), direct(IDS.numpy()))
    with pytest.raises(QmlirError, match="layer 'model.layers.0.self_attn.q_proj' has none"):
        compiler.export_checkpoint(
            model,
            tmp_path / "x",
            "fp8-current",
            activation_scales={"model.layers.0.mlp.up_proj": 1.0},
        )


@pytest.mark.parametrize("recipe", ["mxfp8", "fp8-rowwise", "mxfp4"])
def test_an_export_compiles_back_to_the_same_artifact(tmp_path, recipe) -> None:  # type: ignore[no-untyped-def]
    """An export compiled as a folder: qmlir's own codes and scales come back as stored and the
    logits equal those of the model compiled directly, bit for bit (mxfp4: a compressed-tensors
    MXFP4 folder's activations take the library's E8M0 rule, ``even``: the direct compile too);
    transformers' logits of the fp8-rowwise folder agree (per-token activations: within cosine
    0.999 of the unquantized activations transformers computes with)."""
    model = checkpoints.llama(4, torch.float32, num_hidden_layers=1, **SIZES)
    options = {"e8m0_rounding": "even"} if recipe == "mxfp4" else {}
    folder = compiler.export_checkpoint(
        model, tmp_path / "out", recipe, exclude=["lm_head"], **options
    )
    art = compiler.compile(str(folder), **STATIC)
    assert art.record.recipe == {"name": recipe, "options": art.record.recipe["options"]}
    assert art.record.recipe["name"] == recipe
    direct = compiler.compile(
        NextTokenLogits(model), (IDS,), recipe, exclude=["lm.lm_head"], **options
    )
    got = art(IDS.numpy())
    np.testing.assert_array_equal(got, direct(IDS.numpy()))
    if recipe == "fp8-rowwise":
        cosine = _cosine(got, _transformers_logits(folder, IDS))
        assert (cosine >= 0.999).all(), cosine


def test_a_compressed_tensors_fp8_folder_compiles_with_its_static_input_scales(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The FP8 scheme (per-tensor weights, a calibrated ``input_scale`` per layer): fp8-current
    with each layer's activation cast at its stored scale."""
    folder = checkpoints.save_compressed_tensors(_model(1, seed=7), tmp_path / "static", "FP8")
    art = compiler.compile(str(folder), **STATIC)
    assert art.record.recipe["name"] == "fp8-current"
    assert _check_parameter_file(art, folder, "weight_scale") == 7
    got = art(IDS.numpy())
    cosine = _cosine(got, _transformers_logits(folder, IDS))
    # the FP8 quantizer's error, not the GEMM's: [0.99902, 0.99938] through IREE's data-tiled
    # GEMM, [0.99899, 0.99944] through prefill-gemm's (the same GEMM values; its bf16 outputs
    # rounded before the MLP's product as torch's, which IREE's fused path skips)
    assert (cosine >= 0.998).all(), cosine
    # ModelOpt's FP8 export stores the same tensors (E4M3 weight, weight_scale and input_scale
    # multipliers per tensor) beside hf_quant_config.json: the same artifact, bit for bit
    modelopt = tmp_path / "modelopt"
    shutil.copytree(folder, modelopt)
    config = json.loads((modelopt / "config.json").read_text())
    ignore = config.pop("quantization_config")["ignore"]
    (modelopt / "config.json").write_text(json.dumps(config))
    hf_quant = {"quant_algo": "FP8", "kv_cache_quant_algo": None, "exclude_modules": ignore}
    (modelopt / "hf_quant_config.json").write_text(json.dumps({"quantization": hf_quant}))
    again = compiler.compile(str(modelopt), **STATIC)
    assert again.record.recipe["name"] == "fp8-current"
    np.testing.assert_array_equal(again(IDS.numpy()), got)


@pytest.fixture(scope="module")
def nvfp4_folder(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """compressed-tensors' NVFP4 (W4A4: static activation global scales) of an f32 model, so
    that logits compare with transformers' at the resolution of the quantizer itself."""
    model = checkpoints.llama(3, torch.float32, num_hidden_layers=1, **SIZES)
    folder = tmp_path_factory.mktemp("nvfp4") / "nvfp4"
    return checkpoints.save_compressed_tensors(model, folder, "NVFP4")


def _input_decodes(folder: Path) -> dict[str, float]:
    """Each NVFP4 layer's static activation global decode scale (1 / ``input_global_scale``,
    or ModelOpt's NVFP4 ``input_scale``), by module path."""
    out = {}
    with safe_open(str(folder / "model.safetensors"), "np") as f:
        for key in f.keys():
            module, _, param = key.rpartition(".")
            if param == "input_global_scale":
                out[module] = float(np.float32(1) / f.get_tensor(key).reshape(-1)[0])
            elif param == "input_scale" and f"{module}.weight_scale_2" in f.keys():
                out[module] = float(f.get_tensor(key).reshape(-1)[0])  # ModelOpt NVFP4's
    return out


def _check_nvfp4_parameters(art: compiler.CompiledModule, folder: Path, modelopt: bool) -> int:
    """The parameter file holds every NVFP4 weight's packed codes as stored, its E4M3 block
    scales as stored (the CPU's GEMMs read them compact) and its global decode scale (ModelOpt's
    ``weight_scale_2``, or 1 / compressed-tensors' ``weight_global_scale``); returns how many."""
    assert art.parameter_file is not None
    codes_name, global_name = ("weight", "weight_scale_2") if modelopt else ("weight_packed", "")
    count = 0
    with (
        safe_open(str(folder / "model.safetensors"), "pt") as f,
        safe_open(str(art.parameter_file), "np") as p,
    ):
        for key in f.keys():
            module, _, param = key.rpartition(".")
            if param != codes_name or f.get_tensor(key).dtype != torch.uint8:
                continue
            keys = [k for k in p.keys() if k.startswith(f"lm.{module}.weight") and k.endswith(":0")]
            (prefix,) = [k[:-1] for k in keys]  # an f32 weight's or a bf16 one's (/f32)
            np.testing.assert_array_equal(
                p.get_tensor(prefix + "0").view(np.uint8), f.get_tensor(key).numpy()
            )
            scales = f.get_tensor(f"{module}.weight_scale").view(torch.uint8).numpy()
            np.testing.assert_array_equal(p.get_tensor(prefix + "1#2").view(np.uint8), scales)
            stored = f.get_tensor(f"{module}.{global_name or 'weight_global_scale'}").float()
            decode = stored.numpy() if modelopt else np.float32(1) / stored.numpy()
            assert p.get_tensor(prefix + "1") == np.float32(decode.reshape(-1)[0])
            count += 1
    return count


def test_a_compressed_tensors_nvfp4_folder_compiles_with_its_codes(nvfp4_folder) -> None:  # type: ignore[no-untyped-def]
    """NVFP4 as compressed-tensors' compressor writes it: nvfp4 with the folder's packed codes,
    block and global scales, and each layer's activation at its static global scale. A layer
    alone matches transformers' dequantized weights with the test reference's quantized
    activations to the f32 rounding; the whole model, where FP4 codes flip on those roundings
    from layer to layer, within cosine 0.99."""
    art = compiler.compile(str(nvfp4_folder), **STATIC)
    assert art.record.recipe["name"] == "nvfp4"
    assert _check_nvfp4_parameters(art, nvfp4_folder, modelopt=False) == 7
    decodes = _input_decodes(nvfp4_folder)
    cosine = _cosine(art(IDS.numpy()), _transformers_logits(nvfp4_folder, IDS, decodes))
    assert (cosine >= 0.99).all(), cosine
    keep = "model.layers.0.self_attn.v_proj"
    others = [f"lm.{layer}" for layer in decodes if layer != keep]
    one = compiler.compile(str(nvfp4_folder), exclude=others, **STATIC)
    reference = _transformers_logits(nvfp4_folder, IDS, {keep: decodes[keep]})
    cosine = _cosine(one(IDS.numpy()), reference)
    assert (cosine >= 0.99999).all(), cosine


def test_a_modelopt_nvfp4_folder_compiles_with_its_codes(nvfp4_folder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ModelOpt's NVFP4 export (written from the compressed-tensors folder by the inverse of
    compressed-tensors' own ModelOpt converter, which reads it back to the same tensors):
    nvfp4 with the same codes and scales."""
    from compressed_tensors.entrypoints.convert.converters import ModelOptNvfp4Converter
    from safetensors.torch import load_file

    modelopt = checkpoints.save_modelopt(nvfp4_folder, tmp_path / "modelopt")
    original = load_file(str(nvfp4_folder / "model.safetensors"))
    converter = ModelOptNvfp4Converter(ignore=["lm_head"], targets=["Linear"])
    converted = converter.process(load_file(str(modelopt / "model.safetensors")))
    assert set(converted) == set(original)
    for name, tensor in original.items():
        if tensor.dtype == torch.float32:  # 1 / (1 / x): within one rounding
            torch.testing.assert_close(converted[name].reshape(tensor.shape), tensor)
        else:
            assert torch.equal(converted[name].view(torch.uint8), tensor.view(torch.uint8)), name
    art = compiler.compile(str(modelopt), **STATIC)
    assert art.record.recipe["name"] == "nvfp4"
    assert _check_nvfp4_parameters(art, modelopt, modelopt=True) == 7
    cosine = _cosine(
        art(IDS.numpy()), _transformers_logits(nvfp4_folder, IDS, _input_decodes(modelopt))
    )
    assert (cosine >= 0.99).all(), cosine


def test_fp8_experts_stored_one_per_expert_compile_with_their_codes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A Mixtral saved with FP8 experts one matrix per expert (``w1``, ``w3``, ``w2`` of each,
    128x128 blocks), which transformers stacks into ``gate_up_proj`` / ``down_proj``: each
    expert's slice goes to the parameter file as stored, gate and up joined along the rows
    (their blocks and scales too), never re-quantized; logits as transformers' dequantized
    model gives them."""
    from samples import moe_lm

    folder = checkpoints.save_fp8_blocks(moe_lm.make("mixtral").to(torch.bfloat16), tmp_path / "m")
    art = compiler.compile(str(folder), **STATIC)
    assert art.record.recipe["name"] == "fp8-block"
    stored = _stored_codes(folder, "weight_scale_inv")
    experts = moe_lm.make("mixtral").config.num_local_experts
    checked = 0
    with safe_open(str(art.parameter_file), "np") as f:
        for layer in range(2):
            for e in range(experts):
                source = f"model.layers.{layer}.block_sparse_moe.experts.{e}"
                target = f"lm.model.layers.{layer}.mlp.experts"
                for stack, parts in (("gate_up_proj", ("w1", "w3")), ("down_proj", ("w2",))):
                    codes = np.concatenate([stored[f"{source}.{p}.weight"][0] for p in parts])
                    scale = np.concatenate([stored[f"{source}.{p}.weight"][1] for p in parts])
                    key = f"{target}.{stack}/index({e})/f32:0"
                    np.testing.assert_array_equal(f.get_tensor(key), codes)
                    padded = f.get_tensor(key + "#2")  # the GEMM's: padded to 4 columns
                    np.testing.assert_array_equal(padded[:, : scale.shape[1]], scale)
                    checked += 1
    assert checked == 2 * experts * 2
    cosine = _cosine(art(IDS.numpy()), _transformers_logits(folder, IDS))
    assert (cosine >= 0.999).all(), cosine


def test_fp8_experts_whose_joined_scales_differ_are_refused_unless_kept_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Per-tensor FP8 experts: an expert's gate and up matrices have scales of their own, and
    the joined weight takes one, so it would be re-quantized: one line says so, and how to keep
    the experts whole (dequantized, as transformers runs them)."""
    from samples import moe_lm

    model = moe_lm.make("mixtral").to(torch.bfloat16)
    folder = checkpoints.save_fp8_blocks(model, tmp_path / "m", per_tensor=True)
    with pytest.raises(
        QmlirError,
        match=r"one matrix per expert.*per-tensor scales of their own.*--exclude '\*\.experts\.\*'",
    ):
        compiler.compile(str(folder), **STATIC)


def _bf16(x: np.ndarray) -> np.ndarray:
    return torch.from_numpy(x).to(torch.bfloat16).float().numpy()


def test_an_nvfp4_export_decompresses_and_compiles_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """nvfp4 exports as compressed-tensors' NVFP4 once each layer has its calibrated static
    activation global scale: the library decompresses qmlir's codes and scales (``e2m1 x (d /
    S)`` rounded to bf16; qmlir's ``(e2m1 x d) x S_dec`` to one f32 rounding); compiled back as
    a folder, the logits are the model's compiled directly with the same scales."""
    model = checkpoints.llama(5, torch.float32, num_hidden_layers=1, **SIZES)
    with pytest.raises(QmlirError, match="nvfp4 exports static activation scales and layer"):
        compiler.export_checkpoint(model, tmp_path / "none", "nvfp4", exclude=["lm_head"])
    batch = torch.randint(0, 256, (4, 12), generator=torch.Generator().manual_seed(3))
    scales = compiler.calibrate(model, [batch], recipe="nvfp4")
    scales.pop("lm_head")
    folder = compiler.export_checkpoint(
        model, tmp_path / "nvfp4", "nvfp4", exclude=["lm_head"], activation_scales=scales
    )
    quant = json.loads((folder / "config.json").read_text())["quantization_config"]
    assert quant["format"] == "nvfp4-pack-quantized"
    weights = _decompressed(folder)
    with safe_open(str(folder / "model.safetensors"), "np") as f:
        for name, tensor in model.state_dict().items():
            if not name.endswith("proj.weight"):
                continue
            layer = name.removesuffix(".weight")
            q = compiler.quantize(tensor.numpy(), "nvfp4", role="weight")
            np.testing.assert_array_equal(f.get_tensor(f"{layer}.weight_packed"), q.data)
            encode = f.get_tensor(f"{layer}.weight_global_scale")[0]
            assert np.float32(1) / encode == q.global_scale
            codes = nvfp4.decode_e2m1(nvfp4.unpack(q.data))
            d = np.repeat(fp8_reference.decode_e4m3(q.scale), 16, axis=1)
            want = codes * (d / encode).astype(np.float32)
            got = weights[name].float().numpy()  # compressed-tensors decompresses FP4 to bf16
            np.testing.assert_array_equal(got, _bf16(want), err_msg=name)
            np.testing.assert_allclose(want, q.dequantize(), rtol=2**-22, atol=0)  # 1 ulp
            inputs = f.get_tensor(f"{layer}.input_global_scale")[0]
            assert inputs == np.float32(1) / np.float32(scales[layer])
    art = compiler.compile(str(folder), **STATIC)
    assert art.record.recipe["name"] == "nvfp4"
    direct = compiler.compile(
        NextTokenLogits(model),
        (IDS,),
        "nvfp4",
        exclude=["lm.lm_head"],
        activation_scales={f"lm.{layer}": v for layer, v in scales.items()},
    )
    got = art(IDS.numpy())
    cosine = _cosine(got, direct(IDS.numpy()))
    assert (cosine >= 0.99999).all(), cosine
    cosine = _cosine(got, _transformers_logits(folder, IDS, _input_decodes(folder)))
    assert (cosine >= 0.99).all(), cosine


def test_mixed_precision_folders_compile_each_layer_with_its_own_format(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A compressed-tensors mixed-precision folder (static FP8 for attention, NVFP4 for the
    MLP: one config group each) compiles each layer with its group's recipe and codes; the same
    tensors as ModelOpt's MIXED_PRECISION export (``quantized_layers``) give the same layers
    and logits."""
    model = checkpoints.llama(8, torch.float32, num_hidden_layers=1, **SIZES)
    schemes = {"FP8": ["re:.*self_attn.*"], "NVFP4": ["re:.*mlp.*"]}
    folder = checkpoints.save_compressed_tensors(model, tmp_path / "mixed", schemes)
    art = compiler.compile(str(folder), **STATIC)
    recipes = {layer.layer: layer.recipe for layer in art.record.layers}
    assert recipes["lm.model.layers.0.self_attn.q_proj"] == "fp8-current"
    assert recipes["lm.model.layers.0.mlp.down_proj"] == "nvfp4"
    assert recipes["lm.lm_head"] == "none"
    assert _check_nvfp4_parameters(art, folder, modelopt=False) == 3
    got = art(IDS.numpy())
    cosine = _cosine(got, _transformers_logits(folder, IDS, _input_decodes(folder)))
    assert (cosine >= 0.99).all(), cosine
    modelopt = checkpoints.save_modelopt(folder, tmp_path / "modelopt")
    hf_quant = json.loads((modelopt / "hf_quant_config.json").read_text())["quantization"]
    assert hf_quant["quant_algo"] == "MIXED_PRECISION"
    again = compiler.compile(str(modelopt), **STATIC)
    assert {layer.layer: layer.recipe for layer in again.record.layers} == recipes
    assert _check_nvfp4_parameters(again, modelopt, modelopt=True) == 3
    cosine = _cosine(again(IDS.numpy()), got)  # NVFP4 scales through 1 / (1 / x)
    assert (cosine >= 0.9999).all(), cosine


def _library_mxfp4_input(module: torch.nn.Module, args: tuple[torch.Tensor, ...]) -> tuple:  # type: ignore[type-arg]
    """A linear's input fake-quantized by compressed-tensors itself (its MXFP4 scheme's dynamic
    activation args, ``compute_dynamic_scales_and_zp`` and ``fake_quantize``), in f32."""
    from compressed_tensors.quantization import preset_name_to_scheme
    from compressed_tensors.quantization.lifecycle.forward import fake_quantize
    from compressed_tensors.quantization.utils.helpers import compute_dynamic_scales_and_zp

    inputs = preset_name_to_scheme("MXFP4", ["Linear"]).input_activations
    scale, zero = compute_dynamic_scales_and_zp(args[0], inputs, module=module)
    return (fake_quantize(args[0], scale, zero, inputs),)


@pytest.fixture(scope="module")
def mxfp4_folder(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """compressed-tensors' MXFP4 (W4A4, dynamic activations) of an f32 model."""
    model = checkpoints.llama(3, torch.float32, num_hidden_layers=1, **SIZES)
    folder = tmp_path_factory.mktemp("mxfp4") / "mxfp4"
    return checkpoints.save_compressed_tensors(model, folder, "MXFP4")


MX_SCALE = "model.layers.0.self_attn.q_proj.weight_scale"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t[MX_SCALE].__setitem__((0, 0), 255), rf"'{MX_SCALE}' holds the E8M0 NaN"),
        (
            lambda t: t.update({MX_SCALE: torch.ones(2, 3, dtype=torch.uint8)}),
            rf"scale '{MX_SCALE}' has shape \[2, 3\]; compressed-tensors MXFP4 needs \[256, 8\]",
        ),
        (lambda t: t.pop(MX_SCALE), r"weight 'model.layers.0.self_attn.q_proj.weight_packed' has"),
        (
            lambda t: t.update({MX_SCALE: t[MX_SCALE].float()}),
            rf"scale '{MX_SCALE}' is F32; compressed-tensors MXFP4 stores its scales as U8",
        ),
    ],
    ids=["nan-scale", "scale-shape", "missing-scale", "scale-dtype"],
)
def test_a_bad_mxfp4_checkpoint_is_one_line_naming_the_tensor(  # type: ignore[no-untyped-def]
    mxfp4_folder, tmp_path, capsys, edit, message
) -> None:
    _refused_in_one_line(_broken(mxfp4_folder, tmp_path, edit), tmp_path, capsys, message)


def test_a_compressed_tensors_mxfp4_folder_compiles_with_its_codes(mxfp4_folder) -> None:  # type: ignore[no-untyped-def]
    """MXFP4 as compressed-tensors' compressor writes it (an f32 model): mxfp4 with the library's
    E8M0 rule for activations, the folder's packed codes and E8M0 scales byte for byte in the
    parameter file, and logits equal to those of transformers'
    dequantized f32 model whose linears' inputs go through the library's own MXFP4 fake
    quantizer (to the f32 rounding of the sums); its layers decompress (the library) to
    qmlir's dequantized weights."""
    folder = mxfp4_folder
    art = compiler.compile(str(folder), **STATIC)
    assert art.record.recipe == {"name": "mxfp4", "options": {"e8m0_rounding": "even"}}
    assert art.parameter_file is not None
    count = 0
    with (
        safe_open(str(folder / "model.safetensors"), "np") as f,
        safe_open(str(art.parameter_file), "np") as p,
    ):
        for key in f.keys():
            module, _, param = key.rpartition(".")
            if param != "weight_packed":
                continue
            prefix = f"lm.{module}.weight:"
            np.testing.assert_array_equal(
                p.get_tensor(prefix + "0").view(np.uint8), f.get_tensor(key)
            )
            scales = f.get_tensor(f"{module}.weight_scale")
            np.testing.assert_array_equal(p.get_tensor(prefix + "1").view(np.uint8), scales)
            count += 1
    assert count == 7
    from transformers import AutoModelForCausalLM, CompressedTensorsConfig

    with warnings.catch_warnings():  # "the quantization_config from the model will be used"
        warnings.simplefilter("ignore", UserWarning)
        dequantized = AutoModelForCausalLM.from_pretrained(
            str(folder),
            dtype=torch.float32,
            quantization_config=CompressedTensorsConfig(dequantize=True),
        ).eval()
    for name, sub in dequantized.named_modules():
        if isinstance(sub, torch.nn.Linear) and name != "lm_head":
            sub.register_forward_pre_hook(_library_mxfp4_input)
    with torch.no_grad():
        reference = dequantized(input_ids=IDS).logits[:, -1].numpy()
    got = art(IDS.numpy())
    np.testing.assert_allclose(got, reference, rtol=0, atol=1e-5 * np.abs(reference).max())
    weights = _decompressed(folder)
    layer = "model.layers.0.mlp.down_proj"
    with safe_open(str(folder / "model.safetensors"), "np") as f:
        stored = prequantized.dequantize_mxfp4(
            f.get_tensor(f"{layer}.weight_packed"), f.get_tensor(f"{layer}.weight_scale")
        )
    np.testing.assert_array_equal(weights[f"{layer}.weight"].float().numpy(), stored)
