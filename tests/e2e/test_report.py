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
from compiler.analysis.metrics import compare
from compiler.cli import main
from passes.base.errors import QmlirError
from tests.e2e.cli_runner import run as _cli
from tests.e2e.models import tiny

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

TINY = str(Path(__file__).parent / "models" / "tiny.py")


@pytest.mark.parametrize("recipe", ["fp8-current", "fp8-block", "mxfp8", "mxfp4", "nvfp4"])
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
    from compiler.analysis.report_render import suggestion_line

    assert suggestion_line(report, math.inf) == "--exclude 'lin' --exclude ''"
    excluded = compiler.compile(model, inputs, exclude=["lin", ""])
    assert all(e["recipe"] == "none" for e in excluded.metadata["layers"])


def _tagger_batches(*sizes: tuple[int, int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(9)
    return [
        (torch.randint(0, 50, size, generator=g), (torch.rand(size, generator=g) > 0.2).long())
        for size in sizes
    ]


def test_several_batches_figures_are_over_all_their_elements() -> None:
    """A dynamic model on batches of two sizes: each SQNR is that of every element of both
    batches together (computed here from the quantize cores), not any one batch's; the weight
    is quantized once, the activation once per batch."""
    model, example, dims = tiny.tagger_dynamic()
    batches = _tagger_batches((1, 5), (4, 17))
    report = compiler.report(model, example, "fp8-current", inputs=batches, dynamic_shapes=dims)
    (layer,) = report.layers
    assert report.batches == 2 and layer.shapes == (("1..4", "5..17", 32), (8, 32))
    w = model.head.weight.detach()
    w_deq = torch.from_numpy(
        compiler.quantize(w.numpy(), "fp8-current", role="weight").dequantize()
    )
    x, x_deq, ref, out = [], [], [], []
    with torch.no_grad():
        for ids, mask in batches:
            h = model.embed(ids) * mask.unsqueeze(-1).float()
            h_deq = torch.from_numpy(compiler.quantize(h.numpy(), "fp8-current").dequantize())
            x.append(h.numpy().ravel())
            x_deq.append(h_deq.numpy().ravel())
            ref.append(model.head(h).numpy().ravel())
            out.append(torch.nn.functional.linear(h_deq, w_deq, model.head.bias).numpy().ravel())
    both = compare(np.concatenate(ref), np.concatenate(out)).sqnr_db
    each = [compare(r, o).sqnr_db for r, o in zip(ref, out, strict=True)]
    assert layer.output_sqnr_db == pytest.approx(both, rel=1e-9)
    assert all(abs(layer.output_sqnr_db - db) > 0.05 for db in each)
    assert layer.activation.sqnr_db == pytest.approx(
        compare(np.concatenate(x), np.concatenate(x_deq)).sqnr_db, rel=1e-9
    )
    assert layer.weight.sqnr_db == compare(w.numpy(), w_deq.numpy()).sqnr_db
    assert layer.activation.scale_exponents.size == 2 and layer.weight.scale_exponents.size == 1


def test_several_batches_shares_count_every_element() -> None:
    """10 underflowing elements in a batch of 512 and none in one of 256: 10/768, not the mean
    of the two batches' shares. fp8-delayed takes each batch in its own steady state: its
    activation scales are each batch's amax / 448, as fp8-current's."""
    model, (x,) = tiny.single()
    a = torch.full((8, 64), 0.5)
    a[0, 0] = 1.0
    a[1, :10] = 1e-12
    b = torch.full((4, 64), 0.25)
    dims = {"input": {0: torch.export.Dim("batch", min=1, max=16)}}
    for recipe in ("fp8-current", "fp8-delayed"):
        report = compiler.report(model, (x,), recipe, inputs=[(a,), (b,)], dynamic_shapes=dims)
        activation = report.layers[0].activation
        assert activation.underflow == pytest.approx(10 / 768)
        # floor(log2(1 / 448)), floor(log2(0.25 / 448))
        np.testing.assert_array_equal(activation.scale_exponents, [-9, -11])


def test_calibration_sizes_the_artifact_would_refuse_are_one_line_errors() -> None:
    model, example, dims = tiny.tagger_dynamic()
    ok, too_long = _tagger_batches((2, 3), (2, 65))
    with pytest.raises(
        QmlirError, match=r"^inputs\[1\]: input 0 \(input_ids\) dim 1 \(seq\) is 65, .* 2\.\.64$"
    ):
        compiler.report(model, example, inputs=[ok, too_long], dynamic_shapes=dims)
    single, (x,) = tiny.single()
    # a static model from Python is exported at its calibration batches' shape, if they share one
    assert compiler.report(single, (x,), inputs=[(x[:4],), (x[4:],)]).layers[0].shapes[0] == (4, 64)
    with pytest.raises(
        QmlirError,
        match=r"^inputs\[0\]: input 0 \(input\) has shape \[4, 64\], .* \(the model is static",
    ):
        compiler.report(single, (x,), inputs=[(x[:4],), (x,)])
    with pytest.raises(QmlirError, match=r"^inputs: 2 inputs, .* several batches are a list of"):
        compiler.report(single, (x,), inputs=[x, x])


def test_cli_inputs_repeat_one_batch_per_file(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``--inputs`` twice: one table over both files, as the Python API gives; a file of a size
    out of range names itself, the input, the dim and the range."""
    model, example, dims = tiny.tagger_dynamic()
    batches = _tagger_batches((1, 5), (4, 17))
    files = []
    for n, (ids, mask) in enumerate(batches):
        files += ["--inputs", str(tmp_path / f"b{n}.npz")]
        np.savez(files[-1], input_ids=ids.numpy(), attention_mask=mask.numpy())
    spec = f"{TINY}:tagger_dynamic"
    code, out, _ = _cli(capsys, "report", spec, *files, "--no-html")
    assert code == 0 and "tiny:tagger_dynamic, 2 calibration batches" in out
    (row,) = [line.split() for line in out.splitlines() if line.startswith("head")]
    want = compiler.report(model, example, inputs=batches, dynamic_shapes=dims)
    assert row[2:5] == ["[1..4,5..17,32]", "x", "[8,32]"]
    assert float(row[-1]) == pytest.approx(want.layers[0].output_sqnr_db, abs=0.005)
    big = tmp_path / "big.npz"
    np.savez(big, input_ids=np.zeros((17, 3), np.int64), attention_mask=np.ones((17, 3), np.int64))
    code, _, err = _cli(capsys, "report", spec, *files, "--inputs", str(big), "--no-html")
    assert code == 1 and err.count("\n") == 1
    assert f"'{big}': input 0 (input_ids) dim 0 (batch) is 17, the module takes 1..16" in err
