"""Issue 34's unclear messages, each now one line that says what is wrong and what to do: a
model output that is not a tensor, a non-array input, ``qmlir run -o`` where it cannot write
(refused before the model runs), a text file named ``.npy`` (no advice to load pickles), a
``.npz`` holding Python objects, fp8-delayed's activation quantize in the CLI's terms, and no
numpy warning from dequantizing an overflowing block."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import compiler
from passes.base.errors import QmlirError
from tests.e2e.cli_runner import run

pytestmark = pytest.mark.models


class _WithNone(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return self.fc(x), None


def test_an_output_that_is_not_a_tensor_is_named() -> None:
    with pytest.raises(QmlirError) as caught:
        compiler.compile(_WithNone().eval(), (torch.randn(2, 16),), "fp8-current")
    assert str(caught.value) == (
        "the model's output 1 is None, not a tensor: return tensors only "
        "(drop it from forward's result)"
    )


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("art") / "linear.vmfb"
    compiler.compile(nn.Linear(16, 8).eval(), (torch.randn(2, 16),), "none").save(path)
    return path


def test_inputs_that_are_not_arrays(artifact: Path) -> None:
    art = compiler.load(artifact)
    hint = "not an array: pass a numpy array (np.asarray(x, dtype=np.float32)) or a tensor"
    with pytest.raises(QmlirError, match=r"^input 0 \(.*\) is a list, " + re.escape(hint) + "$"):
        art(np.zeros((2, 16), np.float32).tolist())
    with pytest.raises(QmlirError, match=r"^input 0 \(.*\) is None, not an array"):
        art(None)
    assert art(np.zeros((2, 16), np.float32)).shape == (2, 8)  # arrays still run


def test_run_output_refused_before_running(capsys, artifact: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, "run", str(artifact), "--random-inputs", "-o", str(tmp_path))
    assert code != 0
    assert err == f"qmlir: error: output '{tmp_path}' is a directory\n"
    assert "output 0" not in out  # the model did not run first


def test_text_named_npy_and_object_npz(capsys, artifact: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = tmp_path / "x.npy"
    text.write_text("1 2 3\n")
    code, _, err = run(capsys, "run", str(artifact), "--inputs", str(text))
    assert code != 0 and "pickle" in err and "allow_pickle" not in err
    assert err == (
        f"qmlir: error: inputs file '{text}' is not a numpy .npy or .npz file "
        "(qmlir reads no pickled data)\n"
    )
    objects = tmp_path / "x.npz"
    np.savez(objects, x=np.array([{"a": 1}, None], dtype=object))
    code, _, err = run(capsys, "run", str(artifact), "--inputs", str(objects))
    assert code != 0
    assert err == (
        f"qmlir: error: '{objects}': array 'x' holds Python objects (dtype object): save "
        "numeric arrays (qmlir reads no pickled data)\n"
    )


def test_fp8_delayed_activation_quantize_names_the_cli_option(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "x.npy"
    np.save(source, np.ones((4, 32), np.float32))
    out = tmp_path / "q.npz"
    code, _, err = run(capsys, "quantize", str(source), "--recipe", "fp8-delayed", "-o", str(out))
    assert code != 0 and "--role weight" in err, err
    assert not out.exists()


def test_mxfp8_dequantize_of_inf_warns_nothing() -> None:
    x = np.ones((1, 32), np.float32)
    x[0, 0] = np.inf
    quantized = compiler.quantize(x, "mxfp8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = quantized.dequantize()
    assert np.isposinf(values[0, 0])


@pytest.mark.parametrize("recipe", ["fp8-current", "fp8-block", "mxfp8", "mxfp4", "nvfp4"])
def test_quantize_keeps_the_input_shape_for_every_rank(recipe: str) -> None:
    """Issue 34, item 4: data and dequantize() keep the input's shape (nvfp4's packed data: its
    leading dims, then the packed K), a 0-d and a 1-D input included, the same values as the
    2-D row they are; empty tensors round-trip."""
    rng = np.random.default_rng(0)
    row = rng.standard_normal(130).astype(np.float32)
    packed = recipe in ("nvfp4", "mxfp4")
    as_row = compiler.quantize(row[None], recipe)
    one_d = compiler.quantize(row, recipe)
    assert one_d.data.shape == ((80,) if recipe == "mxfp4" else (72,) if packed else (130,))
    np.testing.assert_array_equal(one_d.data, as_row.data[0])
    np.testing.assert_array_equal(one_d.dequantize(), as_row.dequantize()[0])
    scalar = compiler.quantize(np.array(1.75, np.float32), recipe)
    assert scalar.data.shape == ((16,) if recipe == "mxfp4" else (8,) if packed else ())
    assert scalar.dequantize().shape == ()
    assert (
        scalar.dequantize()
        == compiler.quantize(np.full((1, 1), 1.75, np.float32), recipe).dequantize()[0, 0]
    )
    empty = compiler.quantize(np.zeros((0, 128), np.float32), recipe)
    assert empty.data.shape == ((0, 64) if packed else (0, 128))
    assert empty.dequantize().shape == (0, 128)
    three_d = compiler.quantize(rng.standard_normal((2, 3, 40)).astype(np.float32), recipe)
    assert three_d.dequantize().shape == (2, 3, 40)


def test_the_api_warns_once_on_non_finite_inputs(artifact: Path) -> None:
    """Issue 34, item 5: as ``qmlir run`` prints it, once per module."""
    from compiler.runtime import NonFiniteInputWarning

    art = compiler.load(artifact)
    x = np.zeros((2, 16), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        art(x)  # finite: no warning
    x[0, 0], x[1, 3] = np.nan, np.inf
    with pytest.warns(NonFiniteInputWarning) as caught:
        art(x)
    assert [str(w.message) for w in caught] == [
        "input 0 holds 1 NaN and 1 inf; they propagate as docs/numerics.md says"
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        art(x)  # once per module


def test_cli_run_prints_its_line_not_the_api_warning(capsys, tmp_path, artifact) -> None:  # type: ignore[no-untyped-def]
    x = np.zeros((2, 16), np.float32)
    x[0, 0] = np.nan
    np.save(tmp_path / "x.npy", x)
    code, _, err = run(capsys, "run", str(artifact), "--inputs", str(tmp_path / "x.npy"))
    assert code == 0
    assert err == (
        "qmlir: warning: input 0 holds 1 NaN and 0 inf; they propagate as docs/numerics.md says\n"
    )


def test_a_model_returning_its_kv_cache_is_told_what_to_do() -> None:
    """Issue 30: torch.export's "Found DynamicCache in output" becomes the fix."""
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    lm = transformers.LlamaForCausalLM(config).eval()

    class WithCache(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lm = lm

        def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, object]:
            out = self.lm(input_ids=ids, use_cache=True)
            return out.logits, out.past_key_values

    with pytest.raises(QmlirError, match=r"^the model returns its KV cache .*use_cache = False"):
        compiler.compile(WithCache(), (torch.randint(0, 64, (1, 8)),), "none")
