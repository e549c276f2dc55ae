"""BatchNorm (issue 34, item 1): in an inference compile it runs in eval mode (the compile
evaluates the model in eval mode: running statistics, never the batch's), decomposed to
elementwise ops; in a training step, a BatchNorm in train mode would update its running
statistics, which a step cannot hold: refused with one line naming the layer, and the same model
with that layer in eval mode trains."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import compiler
from passes.base.errors import QmlirError
from tests.e2e.cli_runner import run

pytestmark = pytest.mark.models


class _Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.bn = nn.BatchNorm1d(64)
        self.fc2 = nn.Linear(64, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


class _Conv(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.bn(self.conv(x)).mean((2, 3)))


class _Loss(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = _Mlp()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return ((self.net(x).sum(-1, keepdim=True) - y) ** 2).mean()


def _with_statistics(model: nn.Module, x: torch.Tensor) -> nn.Module:
    """Running statistics that are not the initial 0 and 1 (two train-mode passes)."""
    model.train()
    with torch.no_grad():
        model(x * 3 + 1)
        model(x * 2 - 1)
    return model


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("build", [_Mlp, _Conv])
def test_eval_mode_batch_norm_compiles_to_the_running_statistics(build: type) -> None:
    torch.manual_seed(0)
    x = torch.randn(8, 32) if build is _Mlp else torch.randn(2, 3, 8, 8)
    model = _with_statistics(build(), x)  # left in train mode: the compile evaluates it
    art = compiler.compile(model, (x,), "none")
    with torch.no_grad():
        evaluated = model.eval()(x).numpy()
        batch = model.train()(x).numpy()  # what train mode would compute: not this
    got = art(x.numpy())
    assert _rel(got, evaluated) < 1e-6
    assert _rel(got, batch) > 1e-2
    if build is _Conv:  # issue 30: a convolution is named as kept in high precision
        assert art.record.convolutions == ("conv",)
        assert art.summary == (
            "recipe none: every matmul in the model's precision; 1 convolution kept in high "
            "precision (recipes quantize matmuls only): conv"
        )


def test_inspect_names_the_convolutions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, 8)
    path = tmp_path / "conv.vmfb"
    compiler.compile(_Conv().eval(), (x,), "fp8-current").save(path)
    code, out, _ = run(capsys, "inspect", str(path))
    assert code == 0
    assert (
        "1 convolution kept in high precision (recipes quantize matmuls only): conv"
        in out.splitlines()
    )


def test_the_report_names_the_convolutions() -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, 8)
    report = compiler.report(_Conv().eval(), (x,), "fp8-current")
    assert report.convolutions == ("conv",)
    assert [entry.layer for entry in report.layers] == ["fc"]  # the table: matmuls only
    from compiler.analysis.report_render import render_html

    page = render_html(report)
    assert "1 convolution kept in high precision (recipes quantize matmuls only): conv." in page


def test_eval_mode_batch_norm_under_a_recipe() -> None:
    torch.manual_seed(0)
    x = torch.randn(8, 32)
    model = _with_statistics(_Mlp(), x).eval()
    art = compiler.compile(model, (x,), "fp8-current")
    assert {layer.layer for layer in art.record.layers} == {"fc1", "fc2"}
    assert all(layer.recipe == "fp8-current" for layer in art.record.layers)
    with torch.no_grad():
        ref = model(x).numpy()
    assert _rel(art(x.numpy()), ref) < 0.1  # FP8's error, not a wrong normalization


def test_a_training_step_names_a_train_mode_batch_norm_and_trains_it_in_eval_mode() -> None:
    torch.manual_seed(0)
    x, y = torch.randn(8, 32), torch.randn(8, 1)
    model = _Loss().train()
    with pytest.raises(QmlirError) as caught:
        compiler.compile_training(model, (x, y), "none")
    assert str(caught.value) == (
        "a training step cannot update buffers: layer 'net.bn' (BatchNorm1d) changes "
        "'net.bn.num_batches_tracked' (and 2 more) in train mode; put it in eval mode "
        "(model.get_submodule('net.bn').eval()) to train with its buffers fixed"
    )
    model.net.bn.eval()
    step = compiler.compile_training(model, (x, y), "none", lr=0.05)
    with torch.no_grad():
        want = float(model(x, y))
    assert float(step(x.numpy(), y.numpy())) == pytest.approx(want, rel=1e-5)
