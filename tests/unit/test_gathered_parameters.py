"""A weight that only gathers read (an embedding table) is planned as gathered and written to the
parameter file in pieces of at most 64 KiB (``compiler/backend/parameter_file.py``: the page
cache's folios are as large as the writes that made them, and a fault maps its whole folio);
every other tensor in one piece."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from iree.compiler import ir

from compiler.backend.parameter_file import GATHERED_WRITE, _emit_tensor
from passes.externalize_weights import ExternalizeWeights
from passes.ir.parameters import ParameterRef
from passes.ir.weight_plan import PlannedTensor

# a table only gathered, a tied one gathered and read whole by a matmul, a norm's weight
MODULE = Path(__file__).parent / "data" / "gathered_parameters.mlir"


def test_only_a_table_that_gathers_alone_read_is_planned_gathered() -> None:
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = False
        module = ir.Module.parse(MODULE.read_text())
        externalize = ExternalizeWeights()
        externalize.apply(module)
    gathered = {t.source.name: t.gathered for t in externalize.plan.tensors}  # type: ignore[union-attr]
    assert gathered == {"embed": True, "tied": False, "norm": False}


def _pieces(tensor: PlannedTensor, data: np.ndarray) -> list[bytes]:
    pieces: list[bytes] = []
    assert _emit_tensor(lambda view, owner: pieces.append(bytes(view)), tensor, data) == data.nbytes
    assert b"".join(pieces) == data.tobytes()
    return pieces


@pytest.mark.parametrize("rows", [1, 100, 4096])
def test_a_gathered_tensor_is_written_in_pieces_of_at_most_64_kib(rows: int) -> None:
    data = np.random.default_rng(0).standard_normal((rows, 1000)).astype(np.float32)
    ref = ParameterRef("embed", "f32")
    pieces = _pieces(PlannedTensor("embed", "f32", data.shape, ref, gathered=True), data)
    assert max(len(p) for p in pieces) <= GATHERED_WRITE == 64 << 10
    assert len(pieces) == -(-data.nbytes // GATHERED_WRITE)
    whole = _pieces(PlannedTensor("w", "f32", data.shape, ref), data)
    assert [len(p) for p in whole] == [data.nbytes]
