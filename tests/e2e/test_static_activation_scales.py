"""Static activation scales (fp8-current, nvfp4's global): ``compiler.calibrate`` measures them
by max calibration, ``compile(..., activation_scales=...)`` casts each layer's activation with
its fixed scale and no amax pass, values past the calibrated range saturating."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import compiler
from passes.base.errors import QmlirError
from tests.e2e import emulation_blocks
from tests.e2e.cli_runner import run as cli
from tests.reference import fp8

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`


def _linear() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 32))


def test_calibrate_is_the_inputs_amax_over_448() -> None:
    model = _linear()
    batches = [torch.randn(8, 64) for _ in range(3)]
    batches[1][2, 5] = float("nan")  # left out of the amax
    scales = compiler.calibrate(model, batches)
    amax = max(float(np.nanmax(np.abs(b.numpy()))) for b in batches)
    assert scales == {"0": float(np.float32(amax) / np.float32(448))}
    assert compiler.calibrate(model, [torch.zeros(2, 64)]) == {"0": float(np.float32(1 / 448))}
    with pytest.raises(QmlirError, match="at least one batch"):
        compiler.calibrate(model, [])
    nvfp4 = compiler.calibrate(model, batches, recipe="nvfp4")
    assert nvfp4 == {"0": float(np.float32(amax) / np.float32(2688))}
    with pytest.raises(QmlirError, match="recipe 'mxfp8' takes no static activation scale"):
        compiler.calibrate(model, batches, recipe="mxfp8")


def _cast_error(x: np.ndarray, top: float) -> float:
    """The squared error of the E4M3 cast of ``x`` with the range ``top`` (saturating)."""
    scale = np.float32(448) / np.float32(top)
    scaled = np.clip(x * scale, -448, 448).astype(np.float32)
    back = fp8.decode_e4m3(fp8.encode_e4m3(scaled)) / scale
    return float(((back - x).astype(np.float64) ** 2).sum())


def test_percentile_and_mse_choose_the_range_by_their_rules() -> None:
    model = _linear()
    rng = np.random.default_rng(1)
    batches = [torch.from_numpy(rng.standard_normal((64, 64)).astype(np.float32)) for _ in range(2)]
    batches[0][3, 7] = 60.0  # one outlier: max calibration spends the whole range on it
    data = np.abs(np.concatenate([b.numpy().reshape(-1) for b in batches]))
    amax = compiler.calibrate(model, batches)["0"] * 448
    assert amax == pytest.approx(60.0, rel=1e-6)
    width = 60.0 / 2048
    p99 = compiler.calibrate(model, batches, method="percentile", percentile=99.0)["0"] * 448
    assert abs(p99 - np.percentile(data, 99.0)) <= 2 * width, p99
    # E4M3's error is relative: cutting the range buys little and the outlier's saturation
    # costs much, so the least-error range keeps the outlier here, and beats the percentile's
    top = compiler.calibrate(model, batches, method="mse")["0"] * 448
    x = np.concatenate([b.numpy().reshape(-1) for b in batches])
    assert _cast_error(x, top) <= 1.01 * min(_cast_error(x, 60.0), _cast_error(x, p99))
    assert _cast_error(x, top) < _cast_error(x, 60.0 / 8)  # the search's lowest candidate
    nvfp4 = compiler.calibrate(model, batches, recipe="nvfp4", method="percentile", percentile=99.0)
    assert nvfp4["0"] * 2688 == pytest.approx(np.percentile(data, 99.0), abs=2 * width)
    with pytest.raises(QmlirError, match="nvfp4's global scale takes max or percentile"):
        compiler.calibrate(model, batches, recipe="nvfp4", method="mse")
    with pytest.raises(QmlirError, match="method 'entropy' is not one of max, percentile, mse"):
        compiler.calibrate(model, batches, method="entropy")


def _emulated(model: torch.nn.Module, x: np.ndarray, scale_inv: float) -> np.ndarray:
    """The linear with a static activation scale, in numpy: codes = cast(x * (1 / scale_inv)),
    the f64 dot product scaled by 1 / scale and the weight's scale_inv, plus the bias."""
    scale = np.float32(1) / np.float32(scale_inv)
    codes = fp8.encode_e4m3((x * scale).astype(np.float32))
    w_codes, w_scale_inv = fp8.quantize_per_tensor(model[0].weight.detach().numpy())
    dot = fp8.decode_e4m3(codes).astype(np.float64) @ fp8.decode_e4m3(w_codes).T.astype(np.float64)
    return dot * float(np.float32(1) / scale) * float(w_scale_inv) + model[0].bias.detach().numpy()


def test_a_static_scale_casts_with_its_fixed_scale_and_saturates() -> None:
    model = _linear()
    scales = compiler.calibrate(model, [torch.randn(8, 64) for _ in range(3)])
    x = torch.randn(8, 64) * 1.5  # past the calibrated range in places
    art = compiler.compile(model, (x,), "fp8-current", activation_scales=scales)
    got = art(x.numpy())
    scaled = x.numpy() / np.float32(scales["0"])
    assert (np.abs(scaled) > 448).sum() > 0  # these saturate, not rescale (no amax pass)
    want = _emulated(model, x.numpy(), scales["0"])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max())
    with pytest.raises(QmlirError, match="recipe 'mxfp8' takes no static activation scale"):
        compiler.compile(model, (x,), "mxfp8", activation_scales=scales)


class _WithDeadHead(torch.nn.Module):
    """A linear the output never reads (as a BERT pooler under a sentence encoder)."""

    def __init__(self) -> None:
        super().__init__()
        self.live = torch.nn.Linear(64, 32)
        self.dead = torch.nn.Linear(64, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.dead(x)
        return self.live(x)


def test_a_calibrated_layer_the_compiled_function_drops_is_no_typo() -> None:
    torch.manual_seed(0)
    model = _WithDeadHead().eval()
    x = torch.randn(8, 64)
    scales = compiler.calibrate(model, [x])
    assert set(scales) == {"live", "dead"}  # torch ran both
    art = compiler.compile(model, (x,), "fp8-current", activation_scales=scales)
    assert [layer["layer"] for layer in art.metadata["layers"]] == ["live"]
    with pytest.raises(QmlirError, match="--activation-scales 'lve' matches no layer"):
        compiler.compile(model, (x,), "fp8-current", activation_scales={"lve": 0.1})


def test_nvfp4_takes_a_static_global_scale_its_block_scales_stay_dynamic() -> None:
    model = _linear()
    scales = compiler.calibrate(model, [torch.randn(8, 64)], recipe="nvfp4")
    x = torch.randn(8, 64) * 2  # past the calibrated range: block scales saturate at 448
    art = compiler.compile(model, (x,), "nvfp4", activation_scales=scales)
    got = art(x.numpy())
    w = model[0].weight.detach().numpy()
    want = emulation_blocks.matmul("nvfp4", x.numpy(), w, False, static=scales["0"])
    want += model[0].bias.detach().numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())
    dynamic = emulation_blocks.matmul("nvfp4", x.numpy(), w, False)
    assert np.abs(dynamic + model[0].bias.detach().numpy() - want).max() > 1e-3  # not the amax's


def test_qmlir_calibrate_writes_the_scales_compile_reads(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    model = _linear()
    path = tmp_path / "linear.py"
    path.write_text(
        "import torch\n"
        "def build():\n"
        "    torch.manual_seed(0)\n"
        "    return torch.nn.Sequential(torch.nn.Linear(64, 32)), (torch.randn(8, 64),)\n"
    )
    batches = []
    for i in range(2):
        batch = np.random.default_rng(i).standard_normal((8, 64)).astype(np.float32)
        np.savez(tmp_path / f"b{i}.npz", input=batch)
        batches.append(torch.from_numpy(batch))
    out = tmp_path / "scales.json"
    flags = ["--inputs", str(tmp_path / "b0.npz"), "--inputs", str(tmp_path / "b1.npz")]
    code, stdout, _ = cli(capsys, "calibrate", f"{path}:build", *flags, "-o", str(out))
    assert code == 0 and "static activation scales of 1 layers" in stdout, stdout
    assert json.loads(out.read_text()) == compiler.calibrate(model, batches)
    mse = tmp_path / "mse.json"
    code, stdout, _ = cli(
        capsys, "calibrate", f"{path}:build", *flags, "--method", "mse", "-o", str(mse)
    )
    assert code == 0 and json.loads(mse.read_text()) == compiler.calibrate(
        model, batches, method="mse"
    )
    (row,) = [line for line in stdout.splitlines() if line.startswith("0 ")]
    assert row.endswith("%") and "clipped" in stdout, stdout  # the share past the range
    art = tmp_path / "a.vmfb"
    code, stdout, _ = cli(
        capsys, "compile", str(path), "--activation-scales", str(out), "-o", str(art)
    )
    assert code == 0, stdout
    x = np.random.default_rng(5).standard_normal((8, 64)).astype(np.float32)
    want = _emulated(model, x, json.loads(out.read_text())["0"])
    np.testing.assert_allclose(compiler.load(art)(x), want, rtol=0, atol=1e-6 * np.abs(want).max())
    out.write_text('{"0": -1}')
    code, _, stderr = cli(
        capsys, "compile", str(path), "--activation-scales", str(out), "-o", str(art)
    )
    assert code != 0 and "is not {layer: positive scale} JSON" in stderr
    with pytest.raises(QmlirError, match="--activation-scales '1' matches no layer"):
        compiler.compile(model, (torch.from_numpy(x),), "fp8-current", activation_scales={"1": 0.1})
