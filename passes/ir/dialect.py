"""qmlir's named-op dialect, defined once: the op kinds, each op's attributes as a typed record,
and their one spelling in the IR.

A named op is a call to a private ``func.func @qmlir.<kind>.<variant>`` whose declaration
carries ``qmlir.op = "<kind>"`` and one ``qmlir.<field>`` attribute per field of the op's record
that is not None (an enum by value, a :class:`FloatFormat` by name, a block as ``array<i64>``,
a float as ``f32`` unless the field says ``f64``, an int as ``i64``). Recipes build records and
``NamedOpBuilder.call`` encodes them; lowerings, fusion and passes read ``NamedOp(decl).attrs``.
No other module spells an op kind or an attribute key (``tests/unit/test_dialect_strings.py``);
``docs/dialect.md`` documents each op and is checked against this module. The enums its
attributes take are defined in ``passes/ir/choices.py`` and read from here.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, ClassVar, Union

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.choices import (
    AmaxComputeAlgo,
    FusedOutputs,
    GemmOperandType,
    GemvIsa,
    Nvfp4ScaleOrder,
    ScaleFormat,
    ScaleRule,
    Scaling,
)
from passes.ir.formats import FORMATS, FloatFormat, format_with_max
from passes.ir.layouts import ScaleLayout
from passes.ir.types import TensorInfo, tensor_info

OP_ATTR = "qmlir.op"
_PREFIX = "qmlir."


class OpKind(enum.Enum):
    """What a named op computes (``qmlir.op``); docs/dialect.md has each one's operands."""

    AMAX = "amax"
    COMPUTE_SCALE = "compute_scale"
    QUANTIZE = "quantize"
    SCALED_MATMUL = "scaled_matmul"
    SWIZZLE = "swizzle"
    AMAX_HISTORY_UPDATE = "amax_history_update"
    BLOCK_SCALE_DEQUANTIZE = "block_scale_dequantize"
    FUSED_QUANTIZE = "fused_quantize"

    @property
    def pure(self) -> bool:
        """Whether its calls have no side effects: an unused call may be erased, a call on
        constants folded (``fused_quantize``, made for the cuda kernels only after folding, is
        not folded)."""
        return self is not OpKind.FUSED_QUANTIZE


Block = tuple[int, int]


def _f64() -> Any:
    """An optional float field stored as ``f64`` (not the default ``f32``)."""
    return dataclasses.field(default=None, metadata={"f64": True})


@dataclass(frozen=True, kw_only=True)
class Amax:
    """``amax(x) → max|x|`` (NaN ignored), of the tensor or, with ``block``, per block;
    ``propagate_nan``: a block holding a NaN has a NaN amax (MXFP4's NaN scale)."""

    kind: ClassVar[OpKind] = OpKind.AMAX
    block: Block | None = None
    propagate_nan: bool | None = None

    @property
    def scaling(self) -> Scaling:
        return Scaling.BLOCK if self.block is not None else Scaling.PER_TENSOR


@dataclass(frozen=True, kw_only=True)
class ComputeScale:
    """``compute_scale(amax[, s]) → scale(s)`` by ``rule``."""

    kind: ClassVar[OpKind] = OpKind.COMPUTE_SCALE
    rule: ScaleRule
    fp8_max: float | None = None
    epsilon: float | None = None
    pow2: bool | None = None
    scale_format: ScaleFormat | None = None


@dataclass(frozen=True, kw_only=True)
class Quantize:
    """``quantize(x, scale[, s]) → (codes, stored scale)``."""

    kind: ClassVar[OpKind] = OpKind.QUANTIZE
    format: FloatFormat
    scaling: Scaling
    block: Block | None = None
    scale_format: ScaleFormat | None = None
    divide: bool | None = None
    packed: bool | None = None
    order: Nvfp4ScaleOrder | None = None


@dataclass(frozen=True, kw_only=True)
class ScaledMatmul:
    """``scaled_matmul(a, scale_a, [global_a], b, scale_b, [global_b]) → f32`` (bf16, the f32
    result rounded, where ``rounded``: ``round-gemm-outputs``)."""

    kind: ClassVar[OpKind] = OpKind.SCALED_MATMUL
    a_format: FloatFormat
    b_format: FloatFormat
    scaling: Scaling
    b_transposed: bool
    scale_format: ScaleFormat | None = None
    a_layout: ScaleLayout | None = None
    b_layout: ScaleLayout | None = None
    a_block: Block | None = None
    b_block: Block | None = None
    gemm_operands: GemmOperandType | None = None
    gemv: GemvIsa | None = None  # llvm-cpu: one row, B's codes decoded in a matrix-vector product
    codes_gemm: GemvIsa | None = None  # llvm-cpu: many rows, B's codes decoded in a GEMM's loop
    stored_b: bool | None = None  # codes_gemm "avx2": B's codes laid out in each call, as stored
    rounded: bool | None = None  # codes_gemm's result bf16: its sums rounded as it stores them
    bf16_gemm: GemvIsa | None = None  # llvm-cpu: dynamic rows, prefill-gemm's GEMM over decoded

    @property
    def operand_type(self) -> str:
        """The decoded operands' element type on llvm-cpu: ``bf16`` where ``gemm-operands``
        chose it, else ``f32``."""
        return (self.gemm_operands or GemmOperandType.F32).value


@dataclass(frozen=True, kw_only=True)
class Swizzle:
    """``swizzle(compact scales) → scales in the GEMM's layout``."""

    kind: ClassVar[OpKind] = OpKind.SWIZZLE
    layout: ScaleLayout
    transpose: bool


@dataclass(frozen=True, kw_only=True)
class AmaxHistoryUpdate:
    """``amax_history_update(history, amax, scale) → (history, scale)`` (fp8-delayed)."""

    kind: ClassVar[OpKind] = OpKind.AMAX_HISTORY_UPDATE
    algo: AmaxComputeAlgo
    margin: int
    fp8_max: float
    skip_non_finite: bool | None = None
    outlier_factor: float | None = _f64()


@dataclass(frozen=True, kw_only=True)
class BlockScaleDequantize:
    """``block_scale_dequantize(codes, scales) → f32`` (cuDNN's)."""

    kind: ClassVar[OpKind] = OpKind.BLOCK_SCALE_DEQUANTIZE
    format: FloatFormat
    scale_format: ScaleFormat
    block: Block


@dataclass(frozen=True, kw_only=True)
class FusedQuantize:
    """``fused_quantize(x [, scale | global_amax]) → (data, scales[, data, scales] | amax)``:
    the fields of the ``quantize``, ``compute_scale`` and ``swizzle`` it replaces."""

    kind: ClassVar[OpKind] = OpKind.FUSED_QUANTIZE
    format: FloatFormat
    scaling: Scaling
    block: Block | None = None
    scale_format: ScaleFormat | None = None
    divide: bool | None = None
    packed: bool | None = None
    order: Nvfp4ScaleOrder | None = None
    rule: ScaleRule | None = None
    fp8_max: float | None = None
    epsilon: float | None = None
    pow2: bool | None = None
    layout: ScaleLayout | None = None
    transpose: bool | None = None
    outputs: FusedOutputs | None = None

    @classmethod
    def of(
        cls,
        quantize: Quantize,
        scale: ComputeScale | None = None,
        swizzle: Swizzle | None = None,
        outputs: FusedOutputs | None = None,
    ) -> FusedQuantize:
        """The fused op of a chain: ``quantize``'s fields, then ``scale``'s and ``swizzle``'s
        (a ``scale_format`` on both: the ``compute_scale``'s)."""
        fields = _present(quantize)
        for part in (scale, swizzle):
            if part is not None:
                fields.update(_present(part))
        return cls(**fields, outputs=outputs)

    @property
    def writes(self) -> FusedOutputs:
        """Which outputs it writes (absent: the rowwise ones)."""
        return self.outputs or FusedOutputs.ROWWISE


Attrs = Union[  # noqa: UP007 (a runtime union of the records, for isinstance and docs)
    Amax,
    ComputeScale,
    Quantize,
    ScaledMatmul,
    Swizzle,
    AmaxHistoryUpdate,
    BlockScaleDequantize,
    FusedQuantize,
]
RECORDS: dict[OpKind, type[Attrs]] = {r.kind: r for r in typing.get_args(Attrs)}

A = typing.TypeVar("A", bound=Attrs)


def _present(record: Attrs) -> dict[str, Any]:
    return {
        f.name: getattr(record, f.name)
        for f in dataclasses.fields(record)
        if getattr(record, f.name) is not None
    }


# --- the encoding: one codec per field type ------------------------------------------------


@dataclass(frozen=True)
class _Codec:
    what: str  # for an error: "a string", "an element format", ...
    encode: Callable[[Any], ir.Attribute]
    decode: Callable[[ir.Attribute], Any]  # ValueError on a value of another type


def _enum_codec(choice: type[enum.Enum]) -> _Codec:
    return _Codec(
        choice.__name__,
        lambda v: ir.StringAttr.get(v.value),
        lambda a: choice(ir.StringAttr(a).value),
    )


def _format_decode(attr: ir.Attribute) -> FloatFormat:
    name = ir.StringAttr(attr).value
    if name not in FORMATS:
        raise ValueError(name)
    return FORMATS[name]


def _block_decode(attr: ir.Attribute) -> Block:
    values = [int(v) for v in ir.DenseI64ArrayAttr(attr)]
    if len(values) != 2:
        raise ValueError(values)
    return values[0], values[1]


_CODECS: dict[Any, _Codec] = {
    FloatFormat: _Codec("element format", lambda v: ir.StringAttr.get(v.name), _format_decode),
    bool: _Codec("bool", ir.BoolAttr.get, lambda a: ir.BoolAttr(a).value),
    int: _Codec(
        "i64",
        lambda v: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v),
        lambda a: int(ir.IntegerAttr(a).value),
    ),
    float: _Codec(
        "f32", lambda v: ir.FloatAttr.get(ir.F32Type.get(), v), lambda a: ir.FloatAttr(a).value
    ),
    "f64": _Codec(
        "f64", lambda v: ir.FloatAttr.get(ir.F64Type.get(), v), lambda a: ir.FloatAttr(a).value
    ),
    Block: _Codec("(rows, cols) block", lambda v: ir.DenseI64ArrayAttr.get(list(v)), _block_decode),
}


@dataclass(frozen=True)
class _Field:
    key: str
    codec: _Codec
    required: bool


@cache
def record_fields(record: type[Attrs]) -> tuple[_Field, ...]:
    """Each field of ``record``: its key (``qmlir.<key>``), codec, and whether it is required
    (an optional field, typed ``X | None``, is absent when None)."""
    hints = typing.get_type_hints(record)
    out = []
    for f in dataclasses.fields(record):
        hint = hints[f.name]
        args = typing.get_args(hint)
        optional = isinstance(hint, types.UnionType) and type(None) in args
        base = next(a for a in args if a is not type(None)) if optional else hint
        if f.metadata.get("f64"):
            codec = _CODECS["f64"]
        elif isinstance(base, type) and issubclass(base, enum.Enum):
            codec = _enum_codec(base)
        else:
            codec = _CODECS[base]
        out.append(_Field(f.name, codec, not optional))
    return tuple(out)


def encode(record: Attrs) -> dict[str, ir.Attribute]:
    """The ``qmlir.*`` attributes of ``record``'s declaration, its kind first."""
    attrs = {OP_ATTR: ir.StringAttr.get(record.kind.value)}
    for f in record_fields(type(record)):
        value = getattr(record, f.key)
        if value is not None:
            attrs[_PREFIX + f.key] = f.codec.encode(value)
    return attrs


def decode_kind(decl: ir.Operation) -> OpKind:
    value = ir.StringAttr(decl.attributes[OP_ATTR]).value
    try:
        return OpKind(value)
    except ValueError:
        raise QmlirError(f"named op @{_symbol(decl)}: unknown op kind '{value}'") from None


def decode(decl: ir.Operation) -> Attrs:
    """The record of a named op's declaration (other ``qmlir.*`` attributes are ignored)."""
    record = RECORDS[decode_kind(decl)]
    values: dict[str, Any] = {}
    for f in record_fields(record):
        key = _PREFIX + f.key
        if key not in decl.attributes:
            if f.required:
                raise QmlirError(f"named op @{_symbol(decl)} has no attribute '{key}'")
            continue
        attr = decl.attributes[key]
        try:
            values[f.key] = f.codec.decode(attr)
        except ValueError:
            shown = ir.StringAttr(attr).value if isinstance(attr, ir.StringAttr) else attr
            raise QmlirError(
                f"named op @{_symbol(decl)}: unknown {f.codec.what} '{shown}' in {key}"
            ) from None
    return record(**values)


def _symbol(decl: ir.Operation) -> str:
    return ir.StringAttr(decl.attributes["sym_name"]).value


def is_named_op_decl(op: ir.Operation) -> bool:
    return op.name == "func.func" and OP_ATTR in op.attributes


class NamedOp:
    """The declaration of a named op (``func.func private @qmlir.*``), read as its record."""

    def __init__(self, decl: ir.Operation) -> None:
        self.decl = decl

    @cached_property
    def kind(self) -> OpKind:
        return decode_kind(self.decl)

    @cached_property
    def attrs(self) -> Any:
        """The op's record (:data:`Attrs`; typed ``Any`` so a lowering reads its own fields)."""
        return decode(self.decl)

    def record(self, record: type[A]) -> A:
        """The op's record, which must be a ``record``."""
        attrs = self.attrs
        if not isinstance(attrs, record):
            raise QmlirError(
                f"named op @{self.name} is a {self.kind.value}, not a {record.kind.value}"
            )
        return attrs

    def update(self, **changes: Any) -> None:
        """Sets fields of the op's record on its declaration."""
        attrs = dataclasses.replace(self.attrs, **changes)
        for key, value in encode(attrs).items():
            self.decl.attributes[key] = value
        self.__dict__["attrs"] = attrs

    @property
    def name(self) -> str:
        return _symbol(self.decl)

    @property
    def max_format(self) -> FloatFormat:
        """The format whose largest value is the op's ``fp8_max`` (scale rules carry the bound)."""
        return format_with_max(self.attrs.fp8_max, self.name)

    def signature(self, dynamic: bool = False) -> tuple[list[TensorInfo], list[TensorInfo]]:
        """Static shapes and element types of the op's operands and results (with ``dynamic``,
        for a lowering that takes dynamic dims: those too)."""
        ftype = ir.FunctionType(ir.TypeAttr(self.decl.attributes["function_type"]).value)
        ins = [tensor_info(t, dynamic) for t in ftype.inputs]
        outs = [tensor_info(t, dynamic) for t in ftype.results]
        known_ins = [i for i in ins if i is not None]
        known_outs = [o for o in outs if o is not None]
        if len(known_ins) != len(ins) or len(known_outs) != len(outs):
            raise QmlirError(f"named op @{self.name} has a non-static tensor type")
        return known_ins, known_outs

    def attr_text(self) -> str:
        """The ``qmlir.*`` attributes as MLIR attribute-dictionary entries (for a definition)."""
        items = []
        for key in self.decl.attributes:
            name = key if isinstance(key, str) else key.name
            if name.startswith(_PREFIX):
                items.append(f'"{name}" = {self.decl.attributes[name]}')
        return ", ".join(items)
