"""Fuzzing (issue 34, item 6; hypothesis, bounded): what a caller can hand an artifact, and what
a model can return, on the CPU target. Each call gives a result or a :class:`QmlirError` of one
line; nothing else escapes (no numpy or IREE exception, no crash), and a result has the model's
structure and values."""

from __future__ import annotations

import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import compiler
from passes.base.errors import QmlirError

pytestmark = pytest.mark.models

DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int64, np.int32, np.bool_]
VALUES = [0.0, -0.0, 1.0, -3.5, 1e-45, 3e38, np.inf, -np.inf, np.nan]


def _one_line_or_result(call: Any) -> Any:
    """The call's result, or None after a one-line QmlirError; any other exception fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NaN/inf inputs warn once, by design
        try:
            return call()
        except QmlirError as e:
            assert "\n" not in str(e) and str(e), repr(e)
            return None


@pytest.fixture(scope="module")
def dynamic_mlp() -> Any:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)).eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    return compiler.compile(
        model, (torch.randn(4, 16),), "mxfp8", dynamic_shapes=({0: batch},)
    ), model


def _array(draw: st.DrawFn) -> Any:
    dtype = draw(st.sampled_from(DTYPES))
    if draw(st.booleans()):  # the module's shape, a batch in range or not (0..70 of 1..64)
        shape: tuple[int, ...] = (draw(st.integers(0, 70)), 16)
    else:
        rank = draw(st.integers(0, 3))
        shape = tuple(draw(st.lists(st.integers(0, 20), min_size=rank, max_size=rank)))
    base = draw(st.sampled_from(VALUES))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = np.random.default_rng(draw(st.integers(0, 9))).standard_normal(shape) + base
        return values.astype(dtype)


@st.composite
def _inputs(draw: st.DrawFn) -> list[Any]:
    count = draw(st.sampled_from([1, 1, 1, 0, 2]))
    kinds = st.sampled_from(["array", "array", "array", "torch", "list", "none", "scalar", "str"])
    out: list[Any] = []
    for _ in range(count):
        kind = draw(kinds)
        if kind in ("array", "torch"):
            array = _array(draw)
            if kind == "torch" and array.dtype != ml_dtypes.bfloat16:
                array = torch.from_numpy(np.ascontiguousarray(array))
            out.append(array)
        else:
            out.append({"list": [[1.0] * 16], "none": None, "scalar": 2.5, "str": "x"}[kind])
    return out


@settings(max_examples=80)
@given(args=_inputs())
def test_any_call_is_a_result_or_one_line(dynamic_mlp: Any, args: list[Any]) -> None:
    art, model = dynamic_mlp
    result = _one_line_or_result(lambda: art(*args))
    if result is None:
        return
    (x,) = args
    x = np.asarray(x.numpy() if isinstance(x, torch.Tensor) else x, np.float32)
    assert x.shape[1:] == (16,) and 1 <= x.shape[0] <= 64  # only a valid call runs
    got = result.numpy() if isinstance(result, torch.Tensor) else result
    assert got.shape == (x.shape[0], 8)
    if np.isfinite(x).all() and np.abs(x).max() < 1e4:
        with torch.no_grad():
            ref = model(torch.from_numpy(x)).numpy()
        assert np.isfinite(got).all()
        assert np.linalg.norm(got - ref) <= 0.1 * np.linalg.norm(ref) + 1e-3


def _structures() -> st.SearchStrategy[Any]:
    leaf = st.just("tensor")
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.lists(inner, min_size=1, max_size=3).map(lambda xs: ("list", xs)),
            st.lists(inner, min_size=1, max_size=3).map(lambda xs: ("tuple", xs)),
            st.dictionaries(st.sampled_from(["a", "b", "logits"]), inner, min_size=1).map(
                lambda d: ("dict", d)
            ),
        ),
        max_leaves=4,
    )


class _Returns(nn.Module):
    def __init__(self, structure: Any) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.structure = structure

    def forward(self, x: torch.Tensor) -> Any:
        y = self.fc(x)
        counter = iter(range(1, 100))

        def build(node: Any) -> Any:
            if node == "tensor":
                return y * float(next(counter))
            kind, children = node
            if kind == "dict":
                return {k: build(v) for k, v in children.items()}
            built = [build(c) for c in children]
            return built if kind == "list" else tuple(built)

        return build(self.structure)


def _same_structure(got: Any, want: Any) -> None:
    if isinstance(want, torch.Tensor):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want)
        for key in want:
            _same_structure(got[key], want[key])
    else:
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same_structure(g, w)


@settings(max_examples=4)
@given(structure=_structures())
def test_any_output_structure_comes_back(structure: Any) -> None:
    torch.manual_seed(0)
    model = _Returns(structure).eval()
    x = torch.randn(2, 8)
    art = _one_line_or_result(lambda: compiler.compile(model, (x,), "none"))
    if art is None:
        return
    with torch.no_grad():
        want = model(x)
    _same_structure(art(x.numpy()), want)
