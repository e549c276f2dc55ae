"""No crash from an input the compiled signature accepts: an index the model computes outside
its table fails the call with one line naming the layer (``passes/check_indices.py``).

RoBERTa's positions start at ``pad_token_id + 1``: a folder whose config allows 20 positions
compiles to sequences 1..20, but only 1..18 fit the position table. IREE reads past a table
without a check (the artifact segfaulted at the last two sizes); torch raises IndexError.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import compiler
from passes.base.errors import QmlirError
from tests.e2e import checkpoints
from tests.e2e.cli_runner import run as cli

pytestmark = pytest.mark.models  # compiles a model: not in `make test-fast`

POSITIONS = 20  # the config's max_position_embeddings; RoBERTa uses 2..19 of them
VOCAB = 64


def _roberta() -> torch.nn.Module:
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(0)
    config = RobertaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=POSITIONS,
    )
    return RobertaModel(config).eval()


@pytest.fixture(scope="module")
def roberta(tmp_path_factory) -> tuple[torch.nn.Module, Path]:  # type: ignore[no-untyped-def]
    model = _roberta()
    folder = checkpoints.save(model, tmp_path_factory.mktemp("ckpt") / "roberta")
    out = folder.parent / "roberta.vmfb"
    compiled = compiler.compile(folder, recipe="fp8-current")
    compiled.save(out)
    return model, out


def test_every_accepted_sequence_length_runs_or_fails_in_one_line(roberta) -> None:  # type: ignore[no-untyped-def]
    model, path = roberta
    art = compiler.load(path)
    seq = art.signature["inputs"][0]["dims"][1]
    assert seq["max"] == POSITIONS  # the folder's bound: the config's, not what the model uses
    rng = np.random.default_rng(0)
    usable = POSITIONS - model.config.pad_token_id - 1
    for n in range(seq["min"], seq["max"] + 1):
        ids = rng.integers(2, VOCAB, size=(2, n))  # no padding: positions 2..n+1
        if n <= usable:
            out = art(ids)
            want = model(input_ids=torch.from_numpy(ids)).last_hidden_state.detach().numpy()
            cosine = np.sum(out * want) / np.linalg.norm(out) / np.linalg.norm(want)
            assert cosine > 0.99, (n, cosine)
            continue
        with pytest.raises((IndexError, RuntimeError)):  # torch fails on the same input
            model(input_ids=torch.from_numpy(ids))
        with pytest.raises(QmlirError) as error:
            art(ids)
        message = str(error.value)
        assert "\n" not in message
        assert message.startswith("model.embeddings: an index into its ")  # the layer
        assert f"outside 0..{POSITIONS - 1}" in message
    # the failed calls left the module usable
    ids = rng.integers(2, VOCAB, size=(1, 5))
    want = model(input_ids=torch.from_numpy(ids)).last_hidden_state.detach().numpy()
    out = art(ids)
    assert np.sum(out * want) / np.linalg.norm(out) / np.linalg.norm(want) > 0.99


def test_the_cli_says_it_in_one_line(roberta, capsys) -> None:  # type: ignore[no-untyped-def]
    _, path = roberta
    code, out, err = cli(capsys, "run", str(path), "--random-inputs", "--shape", "input_ids=1x20")
    assert code != 0
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("qmlir: error: model.embeddings: an index into its "), lines
    code, out, err = cli(capsys, "run", str(path), "--random-inputs", "--shape", "input_ids=1x18")
    assert code == 0, err


class _MaskedWrite(torch.nn.Module):
    """``x[mask] = 0`` (an index_put with a boolean index) and a gather by computed indices."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[x < 0] = 0.0
        order = torch.argsort(x[:, 0])  # computed row indices, within bounds
        return y[order]


def test_boolean_masks_are_left_alone_and_computed_indices_still_run() -> None:
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
    art = compiler.compile(_MaskedWrite(), (x,), "none")
    np.testing.assert_array_equal(art(x.numpy()), _MaskedWrite()(x).numpy())
