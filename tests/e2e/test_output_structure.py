"""A model that returns a dict, a list or a nested structure gets it back from its artifact
(issue 34, item 5): keys in the model's order, tuples and lists as built, torch in -> torch out;
``run_numpy`` stays the flat list; the CLI names each output by its path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import compiler
from tests.e2e.cli_runner import run

pytestmark = pytest.mark.models


class _Structured(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> dict[str, object]:
        h = self.fc1(x)
        y = self.fc2(h)
        return {"logits": y, "hidden": (h, h * 2.0), "extra": [y.sum(-1)]}


NAMES = ["logits", "hidden.0", "hidden.1", "extra.0"]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[nn.Module, Path]:
    torch.manual_seed(0)
    model = _Structured().eval()
    path = tmp_path_factory.mktemp("structured") / "model.vmfb"
    compiler.compile(model, (torch.randn(8, 64),), "fp8-current").save(path)
    return model, path


def test_the_artifact_returns_the_models_structure(compiled: tuple[nn.Module, Path]) -> None:
    model, path = compiled
    art = compiler.load(path)
    assert [o["name"] for o in art.signature["outputs"]] == NAMES
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    out = art(x)
    assert list(out) == ["logits", "hidden", "extra"]
    assert isinstance(out["hidden"], tuple) and len(out["hidden"]) == 2
    assert isinstance(out["extra"], list) and len(out["extra"]) == 1
    flat = art.run_numpy(x)
    leaves = [out["logits"], *out["hidden"], *out["extra"]]
    for got, want in zip(leaves, flat, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out["hidden"][1], out["hidden"][0] * np.float32(2.0))
    with torch.no_grad():
        ref = model(torch.from_numpy(x))
    cos = np.dot(out["logits"].ravel(), ref["logits"].numpy().ravel()) / (
        np.linalg.norm(out["logits"]) * np.linalg.norm(ref["logits"].numpy())
    )
    assert cos > 0.99  # the quantized model, not a shuffled output
    as_torch = art(torch.from_numpy(x))
    assert isinstance(as_torch["hidden"][0], torch.Tensor)
    assert isinstance(as_torch["extra"][0], torch.Tensor)


def test_the_cli_names_each_output(
    compiled: tuple[nn.Module, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, path = compiled
    out = tmp_path / "out.npz"
    code, stdout, _ = run(capsys, "run", str(path), "--random-inputs", "-o", str(out))
    assert code == 0
    lines = [line.split(":")[0] for line in stdout.splitlines() if line.startswith("output ")]
    assert lines == [f"output {i} ({name})" for i, name in enumerate(NAMES)]
    with np.load(out) as saved:
        assert list(saved.keys()) == NAMES
        assert saved["hidden.0"].shape == (8, 64) and saved["extra.0"].shape == (8,)
