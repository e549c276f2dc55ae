"""``qmlir report`` / ``compiler.report``: per-layer figures that agree with compiled artifacts,
exact underflow/saturation counts, a --suggest that fixes the model, a self-contained HTML."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from compiler.cli import main
from compiler.metrics import compare
from tests.e2e.models import tiny

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

TINY = str(Path(__file__).parent / "models" / "tiny.py")


@pytest.mark.parametrize("recipe", ["fp8-current", "fp8-block", "mxfp8", "nvfp4"])
@pytest.mark.parametrize("builder", [tiny.single, tiny.matmul_kn])
def test_output_sqnr_is_the_compiled_layers(recipe: str, builder) -> None:  # type: ignore[no-untyped-def]
    """A one-matmul model: the report's output SQNR is the compiled artifact's, so the report
    quantizes exactly as the artifact does (rowwise linear weights and [K, N] weights alike)."""
    model, inputs = builder()
    report = compiler.report(model, inputs, recipe)
    (layer,) = report.layers
    assert layer.recipe == recipe and layer.weight is not None and layer.activation is not None
    reference = model(*inputs).detach().numpy()
    artifact = compiler.compile(model, inputs, recipe)
    compiled = compare(reference, artifact(*inputs)).sqnr_db
    assert layer.output_sqnr_db == pytest.approx(compiled, abs=0.02)


def test_weight_and_activation_sqnr_are_the_quantize_cores() -> None:
    model, (x,) = tiny.single()
    (layer,) = compiler.report(model, (x,), "mxfp8").layers
    w = model.weight.detach().numpy()
    q_w = compiler.quantize(w, "mxfp8", role="weight")
    q_x = compiler.quantize(x.numpy(), "mxfp8")
    assert layer.weight.sqnr_db == compare(w, q_w.dequantize()).sqnr_db
    assert layer.activation.sqnr_db == compare(x.numpy(), q_x.dequantize()).sqnr_db
    # one E8M0 exponent per 1x32 block of each operand
    assert layer.weight.scale_exponents.size == w.size // 32
    np.testing.assert_array_equal(
        np.sort(layer.activation.scale_exponents), np.sort(q_x.scale.ravel().astype(int) - 127)
    )


def test_underflow_share_is_exact() -> None:
    """fp8-current: with amax 1, a 1e-12 input scales to 4.5e-10, far below E4M3's smallest
    subnormal (2^-9): exactly those elements underflow."""
    model, _ = tiny.single()
    x = torch.full((8, 64), 0.5)
    x[0, 0] = 1.0
    x[1, :10] = 1e-12
    (layer,) = compiler.report(model, (x,), "fp8-current").layers
    assert layer.activation.underflow == pytest.approx(10 / 512)
    assert layer.activation.saturated == 0.0


def test_saturated_share_is_exact() -> None:
    """mxfp8 with floor E8M0 scales (OCP: 2^(floor(log2 amax) - 8)): a block of 0.875 maps
    exactly onto 448; blocks whose amax lies in [256, 512) get scale 1, so 480, -470 and 500
    (past 448 by more than half of E4M3's top step, 16) are clipped to ±448, and nothing else
    is; 460 there rounds to 448 as it would in a wider format: not clipped."""
    model, _ = tiny.single()
    x = torch.full((8, 64), 0.875)
    x[2, 0], x[2, 5], x[5, 40], x[5, 41] = 480.0, -470.0, 500.0, 460.0
    (layer,) = compiler.report(model, (x,), "mxfp8", e8m0_rounding="floor").layers
    assert layer.activation.saturated == pytest.approx(3 / 512)
    assert layer.activation.underflow == 0.0


def test_decisions_are_the_compilers() -> None:
    model, inputs = tiny.variants()
    # the top-level matmuls (mm, addmm) have the empty layer name
    options = {"exclude": ["lin"], "layer_recipes": {"": "nvfp4"}}
    report = compiler.report(model, inputs, "fp8-block", **options)
    artifact = compiler.compile(model, inputs, "fp8-block", **options)
    got = [(e.layer, e.recipe, e.note) for e in report.layers]
    want = [(e["layer"], e["recipe"], e["note"]) for e in artifact.metadata["layers"]]
    assert got == want
    assert [e.quantized for e in report.layers] == [False, True, True]
    assert report.layers[0].output_sqnr_db is None and report.layers[0].weight is None


def test_calibration_inputs_move_activation_scales() -> None:
    """Inputs 1024x larger: every activation scale exponent moves up by 10, weights stay."""
    model, (x,) = tiny.single()
    base = compiler.report(model, (x,), "fp8-block").layers[0]
    scaled = compiler.report(model, (x,), "fp8-block", inputs=(x * 1024,)).layers[0]
    np.testing.assert_array_equal(
        scaled.activation.scale_exponents, base.activation.scale_exponents + 10
    )
    np.testing.assert_array_equal(scaled.weight.scale_exponents, base.weight.scale_exponents)


def test_cli_suggest_names_the_weak_layer_and_excluding_it_recovers(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    spec = f"{TINY}:outlier"
    html = tmp_path / "r.html"
    assert main(["report", spec, "--suggest", "25", "--html", str(html)]) == 0
    out = capsys.readouterr().out
    line = out.split("exclude:\n", 1)[1].splitlines()[0].strip()
    assert line == "--exclude 'fc2'"
    rows = {r.split()[0]: r.split() for r in out.splitlines() if r.startswith("fc")}
    assert float(rows["fc2"][-1]) < 1.0 < 25.0 < float(rows["fc1"][-1])

    model, inputs = tiny.outlier()
    reference = model(*inputs).detach().numpy()
    before = compare(reference, compiler.compile(model, inputs)(*inputs)).sqnr_db
    after = compare(reference, compiler.compile(model, inputs, exclude=["fc2"])(*inputs)).sqnr_db
    assert before < 1.0 and after > 25.0


def test_html_is_self_contained_with_two_plots(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    html = tmp_path / "r.html"
    assert main(["report", f"{TINY}:variants", "--recipe", "nvfp4", "--html", str(html)]) == 0
    assert f"wrote {html}" in capsys.readouterr().out
    text = html.read_text()
    assert "<script" not in text and not re.search(r"(src|href)\s*=", text)
    assert "http://" not in text and "https://" not in text
    svgs = re.findall(r"<svg.*?</svg>", text, flags=re.S)
    assert len(svgs) == 2
    bars = ET.fromstring(svgs[0])
    titles = [t.text for t in bars.iter("title")]
    assert len(titles) == 3 * 3  # output, weight and activation SQNR of each of 3 matmuls
    histogram = ET.fromstring(svgs[1])
    assert any("weight, 2^" in (t.text or "") for t in histogram.iter("title"))
    assert text.count("<tr") == 1 + 3


def test_report_errors_are_one_line(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    spec = f"{TINY}:build"
    assert main(["report", spec, "--recipe", "none", "--no-html"]) == 1
    assert "quantizes nothing" in capsys.readouterr().err
    two = tmp_path / "two.npz"
    np.savez(two, a=np.zeros((8, 64), np.float32), b=np.zeros((8, 64), np.float32))
    assert main(["report", spec, "--inputs", str(two), "--no-html"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds 'a', which is not an input of the module (x)" in err
    named = tmp_path / "named.npz"
    np.savez(named, x=np.zeros((8, 64), np.float32))
    assert main(["report", spec, "--inputs", str(named), "--no-html"]) == 0
    capsys.readouterr()
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.zeros((8, 63), np.float32))
    assert main(["report", spec, "--inputs", str(wrong), "--no-html"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("qmlir: error:") and err.count("\n") == 1
    assert not list(Path.cwd().glob("tiny.*.report.html"))


def test_suggest_threshold_above_everything_lists_every_quantized_layer() -> None:
    """Top-level matmuls have the empty module path: ``--exclude ''`` is their glob."""
    model, inputs = tiny.variants()
    report = compiler.report(model, inputs, "fp8-current")
    assert report.suggest_excludes(math.inf) == ["lin", ""]
    assert report.suggest_excludes(-math.inf) == []
    from compiler.report_render import suggestion_line

    assert suggestion_line(report, math.inf) == "--exclude 'lin' --exclude ''"
    excluded = compiler.compile(model, inputs, exclude=["lin", ""])
    assert all(e["recipe"] == "none" for e in excluded.metadata["layers"])
