"""``passes/lowering/dims.py``: a static dim leaves a template's text as it was; a dynamic one is
read once by ``tensor.dim`` and the sizes derived from it parse and verify."""

from __future__ import annotations

import pytest
from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.types import DYNAMIC, TensorInfo
from passes.lowering.dims import Dim, Dims

X = TensorInfo((DYNAMIC, 64), "f32")


def _verifies(args: str, body: str, result: str) -> None:
    text = f"func.func @f({args}) -> index {{{body}\n  return {result} : index\n}}"
    with ir.Context():
        module = ir.Module.parse(text)
        assert module.operation.verify()


def test_a_static_dim_is_its_number() -> None:
    rows = Dim.rows("%x", TensorInfo((8, 64), "f32"))
    assert (str(rows), rows.size, rows.value, rows.empty, rows.braces) == ("8", "8", 8, "", "")
    assert rows.defs(("s", 1, 128, 4)) == ""
    assert rows.scaled("s", 1, 128, 4) == "512"
    assert rows.scaled_dim("s", 3, 4).count == 24  # ceil(8 * 3 / 4) * 4
    assert rows.scaled_type(3) == "24"
    assert Dims.read("%x", TensorInfo((8, 64), "f32")).defs() == ""


def test_dynamic_rows_are_read_once_and_derived() -> None:
    with ir.Context():
        rows = Dim.rows("%x", X)
    assert (str(rows), rows.size, rows.value, rows.empty, rows.braces) == (
        "?",
        "%dyn_m",
        "%dyn_m",
        "%dyn_m",
        "{%dyn_m}",
    )
    defs = rows.defs(("scales", 1, 128, 4), ("blocks", 2, 1))
    assert defs.startswith("\n  %dyn_m_at = arith.constant 0 : index\n")
    assert defs.count("tensor.dim") == 1
    assert rows.scaled_dim("scales", 1, 128, 4).name == "%dyn_scales"
    _verifies("%x: tensor<?x64xf32>", defs, "%dyn_scales")
    _verifies("%x: tensor<?x64xf32>", defs, "%dyn_blocks")


def test_a_tensors_dims_size_its_empty_and_output_shape() -> None:
    info = TensorInfo((DYNAMIC, 4, DYNAMIC), "f32")
    with ir.Context():
        dims = Dims.read("%a", info)
    assert dims.empty(info) == "%a_dim0, %a_dim2"
    assert dims.shape(info) == "%a_dim0, 4, %a_dim2"
    assert dims.braces(info) == "{%a_dim0, %a_dim2}"
    assert dims.empty(TensorInfo((DYNAMIC, 9), "i8")) == "%a_dim0"
    _verifies("%a: tensor<?x4x?xf32>", dims.defs(), "%a_dim2")
    with pytest.raises(QmlirError, match=r"no size for dynamic dim 1 of tensor<4x\?>"):
        dims.empty(TensorInfo((4, DYNAMIC), "f32"))
    assert Dims().empty(TensorInfo((4, 8), "f32")) == ""
