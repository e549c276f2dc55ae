"""``check_globs``: an ``--exclude`` / ``--layer-recipe`` glob matching no layer is a one-line
error naming the nearest layers, and a glob matches exactly when the recipe pass's does."""

from __future__ import annotations

import pytest

from compiler.pipeline.layer_globs import check_globs, nearest
from passes.base.errors import QmlirError
from passes.quantize_matmuls import QuantizeMatmuls
from passes.recipes import get_recipe

LAYERS = [
    "layers.0.attn.qkv",
    "layers.0.mlp.fc1",
    "layers.1.attn.qkv",
    "layers.1.mlp.fc1",
    "layers.10.mlp.fc1",
    "lm_head",
    "",  # a matmul the importer gave no module path
]


def test_matching_globs_pass() -> None:
    check_globs(["lm_head", "*.attn.*", "layers.1?.*"], ["layers.[01].mlp.*", "*"], LAYERS)


@pytest.mark.parametrize(
    ("exclude", "layer_recipes", "message"),
    [
        (["lyaers.*"], [], "--exclude 'lyaers.*' matches no layer; nearest: layers.0.attn.qkv, "),
        (["lm_haed"], [], "--exclude 'lm_haed' matches no layer; nearest: lm_head, "),
        (["Lm_head"], [], "--exclude 'Lm_head' matches no layer"),  # case-sensitive, as the pass
        (["layers.0"], [], "--exclude 'layers.0' matches no layer"),  # a module, not a layer
        (["lm_head"], ["*.atn.*"], "--layer-recipe '*.atn.*' matches no layer; nearest: layers."),
    ],
)
def test_unmatched_glob_is_one_line_error(
    exclude: list[str], layer_recipes: list[str], message: str
) -> None:
    with pytest.raises(QmlirError) as info:
        check_globs(exclude, layer_recipes, LAYERS)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_first_unmatched_glob_is_named() -> None:
    with pytest.raises(QmlirError, match="--exclude 'nope'"):
        check_globs(["lm_head", "nope"], ["other"], LAYERS)


def test_no_layers_no_check() -> None:
    check_globs(["anything"], ["else"], [])  # --recipe none: the pass looked at no layer


def test_empty_name_matches_star_only() -> None:
    check_globs(["*"], [], [""])
    with pytest.raises(QmlirError, match="nearest: \\(only layers without a module path\\)"):
        check_globs(["fc1"], [], [""])


def test_nearest_order() -> None:
    assert nearest("lm_haed", LAYERS)[0] == "lm_head"
    assert nearest("layers.1.mlp.fc2", LAYERS)[0] == "layers.1.mlp.fc1"
    assert nearest("*.atn.*", LAYERS, n=2) == ["layers.0.attn.qkv", "layers.1.attn.qkv"]
    assert len(nearest("x", LAYERS)) == 5 and "" not in nearest("x", LAYERS)


@pytest.mark.parametrize(
    "glob",
    ["lm_head", "lm_*", "*head", "*", "layers.?.mlp.fc1", "layers.[1].*", "LM_HEAD", "layers.0",
     "*.attn", "layers.1*", "[!l]*", "", "layers.0.attn.qkv ", "*mlp*"],
)  # fmt: skip
def test_agrees_with_the_recipe_pass(glob: str) -> None:
    """A glob passes exactly when the recipe pass applies it to some layer."""
    recipe = get_recipe("fp8-current")
    excluding = QuantizeMatmuls(recipe, exclude=(glob,))
    picking = QuantizeMatmuls(recipe, layer_recipes=((glob, get_recipe("mxfp8")),))
    for flag, chooser, check in (
        ("--exclude", excluding, lambda: check_globs([glob], [], LAYERS)),
        ("--layer-recipe", picking, lambda: check_globs([], [glob], LAYERS)),
    ):
        applied = any(chooser.choose(name)[1] != "the default recipe" for name in LAYERS)
        if applied:
            check()
        else:
            with pytest.raises(QmlirError, match=f"{flag} '"):
                check()
