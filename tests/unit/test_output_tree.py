"""The output tree: recorded from torch.export's output spec (dicts, ``OrderedDict``, a
transformers ``ModelOutput``, namedtuples, lists, nesting), rebuilt without torch, and a forged
one refused by the metadata schema."""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any

import pytest
import torch
from torch import nn

from compiler.frontend.output_tree import output_structure
from compiler.runtime.outputs import rebuild, valid_tree

Pair = namedtuple("Pair", ["low", "high"])


class _Returns(nn.Module):
    def __init__(self, make: Any) -> None:
        super().__init__()
        self.make = make

    def forward(self, x: torch.Tensor) -> Any:
        return self.make(x)


def _structure(make: Any) -> tuple[Any, list[str]]:
    program = torch.export.export(_Returns(make), (torch.randn(2, 3),), strict=False)
    leaves = len(torch.utils._pytree.tree_leaves(make(torch.randn(2, 3))))
    return output_structure(program, leaves)


def test_a_tensor_or_a_flat_tuple_needs_no_tree() -> None:
    assert _structure(lambda x: x * 2) == (None, [])
    assert _structure(lambda x: (x * 2, x + 1)) == (None, [])


def test_dicts_lists_and_nesting_are_recorded_with_names() -> None:
    tree, names = _structure(lambda x: {"b": x * 2, "a": [x + 1, (x - 1, x * 3)]})
    assert tree == {
        "dict": [
            ["b", "tensor"],
            ["a", {"list": ["tensor", {"tuple": ["tensor", "tensor"]}]}],
        ]
    }
    assert names == ["b", "a.0", "a.1.0", "a.1.1"]
    tree, names = _structure(lambda x: OrderedDict(z=x * 2, y=x + 1))
    assert names == ["z", "y"] and "dict" in tree


def test_namedtuples_and_model_outputs() -> None:
    tree, names = _structure(lambda x: Pair(x - 1, x + 1))
    assert tree == {"tuple": ["tensor", "tensor"], "fields": ["low", "high"]}
    assert names == ["low", "high"]
    transformers = pytest.importorskip("transformers")
    output = transformers.modeling_outputs.BaseModelOutput
    tree, names = _structure(lambda x: output(last_hidden_state=x * 2, hidden_states=(x, x)))
    assert names == ["last_hidden_state", "hidden_states.0", "hidden_states.1"]


def test_rebuild() -> None:
    tree = {"dict": [["b", "tensor"], ["a", {"list": ["tensor", {"tuple": ["tensor"]}]}]]}
    assert rebuild(tree, [1, 2, 3]) == {"b": 1, "a": [2, (3,)]}
    assert rebuild({"tuple": ["tensor", "tensor"], "fields": ["low", "high"]}, [1, 2]) == (1, 2)
    with pytest.raises(ValueError, match="fewer outputs"):
        rebuild(tree, [1, 2])
    with pytest.raises(ValueError, match="more outputs"):
        rebuild(tree, [1, 2, 3, 4])


@pytest.mark.parametrize(
    "forged",
    [
        {"dict": [["a"]]},
        {"dict": [[1, "tensor"]]},
        {"list": "tensor"},
        {"tuple": ["tensor"], "evil": 1},
        {"list": ["tensor"], "fields": ["a"]},
        "array",
        [],
    ],
)
def test_a_forged_tree_is_refused(forged: Any) -> None:
    assert not valid_tree(forged)
