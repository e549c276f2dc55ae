"""A quantized checkpoint's format from its config alone, its FP8 weights and scales checked
from the shards' headers, and its weights dequantized as transformers does (no model built)."""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from compiler.frontend.prequantized import check_scale, dequantize, find_stored
from compiler.frontend.quantized_formats import folder_recipe, stored_format
from passes.base.errors import QmlirError


def _folder(tmp_path: Path, quant: object) -> Path:
    (tmp_path / "config.json").write_text(json.dumps({"quantization_config": quant}))
    return tmp_path


def _ct(weights: dict, inputs: dict | None, fmt: str = "float-quantized", **extra) -> dict:  # type: ignore[type-arg]
    fp8 = {"num_bits": 8, "type": "float", "symmetric": True}
    group = {
        "targets": ["Linear"],
        "weights": {**fp8, "dynamic": False, **weights},
        "input_activations": None if inputs is None else {**fp8, **inputs},
        "format": fmt,
    }
    return {"quant_method": "compressed-tensors", "config_groups": {"g": group}, **extra}


BLOCK_W = {"strategy": "block", "block_structure": [128, 128]}
GROUP_A = {"strategy": "group", "group_size": 128, "dynamic": True}
MX4 = {"num_bits": 4, "strategy": "group", "group_size": 32, "scale_dtype": "torch.uint8"}


def _ct_mxfp4(inputs: dict | None) -> dict:  # type: ignore[type-arg]
    """compressed-tensors' MXFP4 (``inputs`` None: MXFP4A16) config, as its presets write it."""
    return _ct(MX4, inputs, "mxfp4-pack-quantized")


@pytest.mark.parametrize(
    ("quant", "recipe", "scale", "block"),
    [
        (
            {"quant_method": "fp8", "weight_block_size": [128, 128]},
            "fp8-block",
            "weight_scale_inv",
            (128, 128),
        ),
        (
            {"quant_method": "fp8", "weight_block_size": None},
            "fp8-current",
            "weight_scale_inv",
            None,
        ),
        (_ct(BLOCK_W, GROUP_A), "fp8-block", "weight_scale", (128, 128)),
        (
            _ct({"strategy": "tensor"}, {"strategy": "tensor", "dynamic": True}),
            "fp8-current",
            "weight_scale",
            None,
        ),
        (
            _ct(
                {"strategy": "group", "group_size": 32},
                {"strategy": "group", "group_size": 32, "dynamic": True},
                "mxfp8-quantized",
            ),
            "mxfp8",
            "weight_scale",
            (1, 32),
        ),
        (
            _ct({"strategy": "channel"}, {"strategy": "token", "dynamic": True}),
            "fp8-rowwise",
            "weight_scale",
            (1, 0),
        ),
    ],
    ids=["deepseek", "fp8-per-tensor", "ct-fp8-block", "ct-fp8-tensor", "ct-mxfp8", "ct-dynamic"],
)
def test_formats_qmlir_takes(tmp_path, quant, recipe, scale, block) -> None:  # type: ignore[no-untyped-def]
    fmt = stored_format(_folder(tmp_path, quant))
    assert fmt is not None
    assert (fmt.recipe, fmt.scale_name, fmt.block) == (recipe, scale, block)
    assert folder_recipe(tmp_path, None, {})[0] == recipe
    with pytest.raises(QmlirError, match=f"compiles with recipe '{recipe}'"):
        folder_recipe(tmp_path, "nvfp4", {})


def test_compressed_tensors_mxfp4_is_mxfp4_with_the_librarys_scale_rule(tmp_path) -> None:  # type: ignore[no-untyped-def]
    fmt = stored_format(_folder(tmp_path, _ct_mxfp4({**MX4, "dynamic": True})))
    assert fmt is not None and (fmt.recipe, fmt.block, fmt.scale_kind) == ("mxfp4", (1, 32), "e8m0")
    assert fmt.packed and fmt.codes_name == "weight_packed" and fmt.global_name is None
    assert folder_recipe(tmp_path, None, {}) == ("mxfp4", {"e8m0_rounding": "even"})


@pytest.mark.parametrize(
    ("quant", "message"),
    [
        ({"quant_method": "gptq", "bits": 4}, "quant_method 'gptq' is not supported"),
        (
            {"quant_method": "fp8", "activation_scheme": "static", "weight_block_size": [128, 128]},
            "with static activations and 128x128 weight blocks",
        ),
        ({"quant_method": "fp8", "weight_block_size": [64, 64]}, r"weight_block_size \[64, 64\]"),
        (_ct(BLOCK_W, {**GROUP_A, "dynamic": False}), "static group activation scales"),
        (
            _ct({"strategy": "channel"}, {"strategy": "tensor", "dynamic": True}),
            "channel weights and tensor activations",
        ),
        (_ct(BLOCK_W, None), "unquantized input activations"),
        (_ct_mxfp4(None), r"MXFP4 weights with unquantized activations \(MXFP4A16\)"),
        (
            _ct_mxfp4({"strategy": "group", "group_size": 32, "dynamic": True}),
            "MXFP4 activations other than 4-bit float groups of 32",
        ),
        (
            _ct_mxfp4({**MX4, "dynamic": False}),
            "MXFP4 with static activation scales",
        ),
        (_ct(BLOCK_W, GROUP_A, "pack-quantized"), "format 'pack-quantized'"),
        (_ct(BLOCK_W, GROUP_A, kv_cache_scheme={"num_bits": 8}), "quantized KV cache"),
        ({"quant_method": "compressed-tensors"}, "without config_groups"),
    ],
)
def test_formats_qmlir_does_not_take_are_named(tmp_path, quant, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QmlirError, match=message) as caught:
        stored_format(_folder(tmp_path, quant))
    assert "qmlir compiles transformers fp8" in str(caught.value)  # and what it does take


@pytest.mark.parametrize(
    ("quant", "name"),
    [
        (
            {"quant_method": "fp8", "activation_scheme": "static", "weight_block_size": None},
            "activation_scale",
        ),
        (_ct({"strategy": "tensor"}, {"strategy": "tensor", "dynamic": False}), "input_scale"),
    ],
    ids=["transformers", "compressed-tensors"],
)
def test_static_activation_scales_per_tensor(tmp_path, quant, name) -> None:  # type: ignore[no-untyped-def]
    fmt = stored_format(_folder(tmp_path, quant))
    assert fmt is not None and fmt.recipe == "fp8-current" and fmt.input_scale_name == name


def test_a_plain_folder_has_no_format_and_compiles_with_the_given_recipe(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "config.json").write_text("{}")
    assert stored_format(tmp_path) is None
    assert folder_recipe(tmp_path, None, {}) == ("fp8-current", {})
    assert folder_recipe(None, "mxfp8", {"x": 1}) == ("mxfp8", {"x": 1})


def test_stored_weights_are_checked_from_the_headers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    fmt = stored_format(_folder(tmp_path, {"quant_method": "fp8", "weight_block_size": [128, 128]}))
    assert fmt is not None
    shapes = {"a.weight": (300, 130), "a.weight_scale_inv": (3, 2), "b.weight": (4, 4)}
    dtypes = {"a.weight": "F8_E4M3", "a.weight_scale_inv": "F32", "b.weight": "BF16"}
    files = dict.fromkeys(shapes, "model.safetensors")
    (found,) = find_stored(fmt, shapes, dtypes, files).items()
    assert found == ("a.weight", found[1]) and found[1].scale == "a.weight_scale_inv"
    with pytest.raises(QmlirError, match=r"has shape \[3, 3\]; .* needs \[3, 2\]"):
        find_stored(fmt, {**shapes, "a.weight_scale_inv": (3, 3)}, dtypes, files)
    with pytest.raises(QmlirError, match="'a.weight' has no scale 'a.weight_scale_inv'"):
        find_stored(
            fmt,
            {k: v for k, v in shapes.items() if "scale" not in k},
            {k: v for k, v in dtypes.items() if "scale" not in k},
            files,
        )


def test_scales_must_be_finite_and_positive() -> None:
    assert check_scale("s", np.array([0.5, 2.0]), "f").dtype == np.float32
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(QmlirError, match=f"scale 's' holds {bad}"):
            check_scale("s", np.array([1.0, bad]), "f")
    assert check_scale("s", np.array([0, 127, 254], np.uint8), "f", "e8m0").dtype == np.uint8
    with pytest.raises(QmlirError, match="E8M0 NaN code 0xFF"):
        check_scale("s", np.array([127, 255], np.uint8), "f", "e8m0")


def test_dequantize_is_code_times_its_blocks_scale() -> None:
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 256, (130, 260), dtype=np.uint8)
    codes[(codes & 0x7F) == 0x7F] = 0  # no NaN codes
    values = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    block_scale = rng.uniform(0.01, 2, (2, 3)).astype(np.float32)
    rows, cols = np.arange(130)[:, None] // 128, np.arange(260)[None, :] // 128
    want = values * block_scale[rows, cols].astype(np.float64)  # each element's block's scale
    got = dequantize(codes.view(np.int8), block_scale, (128, 128))
    np.testing.assert_array_equal(got, want.astype(np.float32))  # one rounding of the product
    e8m0 = rng.integers(100, 150, (130, 9), dtype=np.uint8)
    got = dequantize(codes, e8m0.view(np.int8), (1, 32))
    exps = np.repeat(e8m0.astype(np.int64) - 127, 32, axis=1)[:, :260]
    np.testing.assert_array_equal(
        got, (values * np.exp2(exps.astype(np.float64))).astype(np.float32)
    )
    np.testing.assert_array_equal(
        dequantize(codes, np.array(0.25, np.float32), None), (values * 0.25).astype(np.float32)
    )
