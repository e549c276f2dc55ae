"""Recipes and passes: registration, option parsing and validation, serialization."""

import math

import numpy as np
import pytest

import passes.__main__  # noqa: F401 (imports, so registers, every pass)
from compiler.analysis.metrics import compare, top1_agreement
from passes.base.errors import QmlirError
from passes.base.module_pass import PASSES, parse_pass
from passes.ir.formats import E4M3, E5M2, Fp8Format
from passes.quantize_matmuls import QuantizeMatmuls
from passes.recipes import RECIPES, Fp8CurrentScaling, get_recipe


def test_recipes_registered_by_name() -> None:
    assert {"none", "fp8-current", "fp8-delayed"} <= set(RECIPES)
    assert get_recipe("none").quantizes is False


def test_recipe_options_parse_from_strings_and_serialize() -> None:
    r = get_recipe("fp8-current", {"force-pow2-scales": "yes", "amax_epsilon": "1e-3"})
    assert r == Fp8CurrentScaling(force_pow2_scales=True, amax_epsilon=1e-3)
    assert r.to_dict() == {
        "name": "fp8-current",
        "options": {"fp8_format": "e4m3", "force_pow2_scales": True, "amax_epsilon": 1e-3},
    }
    assert get_recipe("fp8-current", {"fp8_format": "HYBRID"}).fp8_format is Fp8Format.HYBRID


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"nope": "1"}, "has no option 'nope'"),
        ({"amax_epsilon": "abc"}, "must be a number"),
        ({"amax_epsilon": "-1"}, "must be >= 0"),
        ({"amax_epsilon": "nan"}, "must be >= 0"),
        ({"fp8_format": "e5m2"}, "must be one of e4m3, hybrid"),
    ],
)
def test_bad_recipe_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(QmlirError, match=message):
        get_recipe("fp8-current", options)


@pytest.mark.parametrize("recipe", ["fp8-current", "fp8-block"])
@pytest.mark.parametrize("value", ["inf", "-inf", "1e39"])
def test_amax_epsilon_must_be_a_finite_f32(recipe: str, value: str) -> None:
    """1e39 is finite in Python but inf as the f32 the scale is computed in."""
    with pytest.raises(QmlirError, match=f"'amax_epsilon' of recipe '{recipe}' must be >= 0 and"):
        get_recipe(recipe, {"amax_epsilon": value})
    assert get_recipe(recipe, {"amax_epsilon": "3.4e38"}).options()["amax_epsilon"] == 3.4e38


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"amax_history_len": "0"},
            r"'amax_history_len' .* must be in 1\.\.1048576 \(2\^20\), not 0",
        ),
        ({"amax_history_len": str((1 << 20) + 1)}, r"must be in 1\.\.1048576"),
        ({"amax_outlier_factor": "0.5"}, "must be 0 \\(off\\) or a finite number >= 1, not 0.5"),
        ({"amax_outlier_factor": "-1"}, "must be 0 \\(off\\) or a finite number >= 1"),
        ({"amax_outlier_factor": "inf"}, "must be 0 \\(off\\) or a finite number >= 1, not inf"),
        ({"amax_outlier_factor": "nan"}, "must be 0 \\(off\\) or a finite number >= 1, not nan"),
        ({"skip_non_finite_amax": "maybe"}, "must be true or false"),
    ],
)
def test_bad_delayed_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(QmlirError, match=message):
        get_recipe("fp8-delayed", options)


def test_delayed_outlier_options_default_off() -> None:
    r = get_recipe("fp8-delayed")
    assert r.options()["skip_non_finite_amax"] is False
    assert r.options()["amax_outlier_factor"] == 0.0
    r = get_recipe("fp8-delayed", {"skip-non-finite-amax": "yes", "amax_outlier_factor": "1"})
    assert r.options()["skip_non_finite_amax"] is True
    assert r.options()["amax_outlier_factor"] == 1.0
    assert get_recipe("fp8-delayed", {"amax_history_len": str(1 << 20)})


def test_pass_registry_and_spec_parsing() -> None:
    assert {"quantize-matmuls", "fold-constant-quantize", "lower-named-ops"} <= set(PASSES)
    p = parse_pass("quantize-matmuls{recipe=fp8-current quantize-all-matmuls=true}")
    assert p == QuantizeMatmuls(recipe=Fp8CurrentScaling(), quantize_all_matmuls=True)
    with pytest.raises(QmlirError, match="unknown pass"):
        parse_pass("fold-everything")
    with pytest.raises(QmlirError, match="not key=value"):
        parse_pass("lower-named-ops{target}")


def test_format_parameters() -> None:
    assert (E4M3.bias, E4M3.emin, E4M3.max_finite) == (7, -6, 448.0)
    assert (E5M2.bias, E5M2.emin, E5M2.max_finite) == (15, -14, 57344.0)


def test_metrics() -> None:
    ref = np.array([1.0, -2.0, 3.0, 4.0])
    same = compare(ref, ref)
    assert same.sqnr_db == math.inf and same.rel_l2_error == 0 and same.cosine == pytest.approx(1)
    noisy = compare(ref, ref + np.array([0.1, 0, 0, 0]))
    assert noisy.sqnr_db == pytest.approx(10 * math.log10(30 / 0.01))
    assert noisy.max_abs_error == pytest.approx(0.1)


def test_top1_agreement() -> None:
    ref = np.array([[0.0, 2.0, 1.0], [3.0, 0.0, 1.0], [0.0, 0.0, 5.0], [1.0, 2.0, 0.0]])
    out = ref.copy()
    out[1, 2] = 4.0  # row 1's argmax moves; the others keep theirs
    assert top1_agreement(ref, out) == 0.75
    assert compare(ref, out).top1 == 0.75
    assert compare(ref[0], out[0]).top1 is None  # a vector has no rows
    assert ("top-1 agreement (last axis)", "0.7500") in compare(ref, out).rows()
