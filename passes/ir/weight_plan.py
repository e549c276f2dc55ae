"""What a module with weights outside it needs in its parameter file, and how each tensor is made.

``externalize-weights`` writes the plan; ``compiler/backend/parameter_file.py`` carries it out,
one checkpoint tensor at a time. The plan is data only: the named ops to evaluate (their llvm-cpu
definitions as MLIR text, the same IR a compiled model runs), each call's arguments (a
checkpoint tensor through its steps, a small constant, or an earlier call's result), and the
parameter file's tensors in the order they are produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from passes.ir.parameters import ParameterRef


@dataclass(frozen=True)
class CallResult:
    """Result ``index`` of the plan's call ``call``."""

    call: int
    index: int


Argument = ParameterRef | CallResult | np.ndarray


@dataclass(frozen=True)
class PlannedCall:
    """A named op evaluated on the host: ``function`` (a key of ``WeightPlan.functions``)."""

    function: str
    arguments: tuple[Argument, ...]


@dataclass(frozen=True)
class PlannedTensor:
    """A tensor of the parameter file: ``key``, its element type (IR name) and shape, made by
    a call's result or read from the checkpoint as it is (``source``); ``gathered``: read only
    a row at a time by gathers (an embedding table), never whole."""

    key: str
    dtype: str
    shape: tuple[int, ...]
    source: CallResult | ParameterRef
    gathered: bool = False

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * _ITEM_BYTES[self.dtype]


_ITEM_BYTES = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "i8": 1, "i32": 4, "i64": 8}


@dataclass(frozen=True)
class Signature:
    """A planned function's argument and result types (MLIR type text)."""

    arguments: tuple[str, ...]
    results: tuple[str, ...]


@dataclass
class WeightPlan:
    functions: dict[str, str] = field(default_factory=dict)  # name -> public func text
    records: dict[str, Any] = field(default_factory=dict)  # name -> its op's record (dialect)
    signatures: dict[str, Signature] = field(default_factory=dict)
    calls: list[PlannedCall] = field(default_factory=list)
    tensors: list[PlannedTensor] = field(default_factory=list)  # in production order

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    def checkpoint_names(self) -> list[str]:
        """Every checkpoint tensor the plan reads, in first-use order."""
        names: dict[str, None] = {}
        for call in self.calls:
            for a in call.arguments:
                if isinstance(a, ParameterRef):
                    names[a.name] = None
        for t in self.tensors:
            if isinstance(t.source, ParameterRef):
                names[t.source.name] = None
        return list(names)
