"""Weights held outside the IR: placeholder literals that name a parameter, and the globals that
read one from a parameter file.

With external weights the importer gives each weight a ``torch.vtensor.literal`` whose value is
a zero *splat* (no bytes, whatever the shape) and whose ``qmlir.parameter`` attribute names the
tensor (its state-dict name); ``qmlir.steps`` lists what the passes did to it on the way (a
view folded by ``fold-weight-views``, an expert's slice, a transpose, the cast to f32), as
:class:`Step`s. The recipe passes treat it as any weight literal; ``externalize-weights`` plans
the compile-time quantize of each one and replaces it by ``util.global`` parameters
(``#flow.parameter.named<"model"::"name">``) that IREE reads from the parameter file at load
time. Values are only ever read by :class:`ParameterRef.read`, one tensor at a time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from iree.compiler import ir

from passes.ir.types import TensorInfo

PARAMETER_ATTR = "qmlir.parameter"
STEPS_ATTR = "qmlir.steps"
SCOPE = "model"  # the parameter scope of every qmlir module (``--parameters=model=FILE``)

Reader = Callable[[str], np.ndarray]  # a tensor of the checkpoint by name, as stored


@dataclass(frozen=True)
class Step:
    """One thing done to a tensor: ``reshape`` (to ``args``), ``permute`` (axes ``args``),
    ``index`` (``tensor[args]``: leading dims), ``f32`` (a cast)."""

    kind: str
    args: tuple[int, ...] = ()

    def apply(self, array: np.ndarray) -> np.ndarray:
        if self.kind == "reshape":
            return array.reshape(self.args)
        if self.kind == "permute":
            return np.ascontiguousarray(np.transpose(array, self.args))
        if self.kind == "index":
            return array[self.args]
        if self.kind == "f32":
            return array.astype(np.float32)
        raise ValueError(f"unknown step {self.kind!r}")


@dataclass(frozen=True)
class ParameterRef:
    """A tensor of the checkpoint (``name``) as the model's ``dtype`` (its literal's element
    type), after ``steps``."""

    name: str
    dtype: str
    steps: tuple[Step, ...] = ()

    def then(self, step: Step) -> ParameterRef:
        return ParameterRef(self.name, self.dtype, (*self.steps, step))

    def read(self, reader: Reader) -> np.ndarray:
        """The values: the stored tensor cast to ``dtype`` first (a stored f32 read into a bf16
        model rounds, as ``Module.to(torch.bfloat16)`` does), then the steps."""
        array = reader(self.name).astype(NUMPY_DTYPES[self.dtype], copy=False)
        for step in self.steps:
            array = step.apply(array)
        return np.ascontiguousarray(array)

    def key(self) -> str:
        """A readable, unique name for this view of the tensor."""
        if not self.steps:
            return self.name
        return self.name + "".join(
            f"/{s.kind}" + ("" if not s.args else "(" + ",".join(map(str, s.args)) + ")")
            for s in self.steps
        )


NUMPY_DTYPES = {
    "f32": np.dtype(np.float32),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f16": np.dtype(np.float16),
    "f64": np.dtype(np.float64),
    "i8": np.dtype(np.int8),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
}


def parameter_ref(op: ir.Operation | None) -> ParameterRef | None:
    """The parameter a placeholder literal stands for; None for any other op."""
    if op is None or op.name != "torch.vtensor.literal" or PARAMETER_ATTR not in op.attributes:
        return None
    name = ir.StringAttr(op.attributes[PARAMETER_ATTR]).value
    dtype = str(ir.ShapedType(ir.DenseElementsAttr(op.attributes["value"]).type).element_type)
    steps: tuple[Step, ...] = ()
    if STEPS_ATTR in op.attributes:
        raw = json.loads(ir.StringAttr(op.attributes[STEPS_ATTR]).value)
        steps = tuple(Step(kind, tuple(args)) for kind, args in raw)
    return ParameterRef(name, dtype, steps)


def placeholder_attributes(ref: ParameterRef, info: TensorInfo) -> dict[str, ir.Attribute]:
    """A placeholder literal's attributes: a zero splat of ``info`` and the parameter."""
    attrs = {
        "value": ir.DenseElementsAttr.get_splat(info.builtin(), _zero(ir.Type.parse(info.dtype))),
        PARAMETER_ATTR: ir.StringAttr.get(ref.name),
    }
    if ref.steps:
        attrs[STEPS_ATTR] = ir.StringAttr.get(
            json.dumps([[s.kind, list(s.args)] for s in ref.steps])
        )
    return attrs


def placeholder_literal(ref: ParameterRef, info: TensorInfo) -> ir.Value:
    """A placeholder ``torch.vtensor.literal`` for ``ref`` of type ``info``, at the current
    insertion point."""
    return ir.Operation.create(
        "torch.vtensor.literal",
        results=[info.vtensor()],
        attributes=placeholder_attributes(ref, info),
    ).result


def _zero(element: ir.Type) -> ir.Attribute:
    if str(element).startswith(("i", "si", "ui")):
        return ir.IntegerAttr.get(element, 0)
    return ir.FloatAttr.get(element, 0.0)


def parameter_global(module: ir.Module, symbol: str, key: str, info: TensorInfo) -> None:
    """A private immutable ``util.global @symbol`` read from parameter ``key`` of
    :data:`SCOPE`, placed first in the module."""
    initial = ir.Attribute.parse(
        f'#flow.parameter.named<"{SCOPE}"::{json.dumps(key)}> : {info.builtin()}'
    )
    body = module.body
    first = next(iter(body.operations), None)
    point = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(body)
    with point, ir.Location.unknown():
        ir.Operation.create(
            "util.global",
            attributes={
                "sym_name": ir.StringAttr.get(symbol),
                "sym_visibility": ir.StringAttr.get("private"),
                "type": ir.TypeAttr.get(info.builtin()),
                "initial_value": initial,
            },
        )
