"""A named op's attributes, read by type: the only place their spelling is parsed.

The recipe pass writes each attribute as ``qmlir.<key>`` on the op's declaration (strings for
the enums below, by value). Lowerings and passes read them through :class:`NamedOp`: a format is
a :class:`~passes.ir.formats.FloatFormat`, a layout a :class:`~passes.ir.layouts.ScaleLayout`,
a block a ``(rows, cols)`` tuple, never a string to compare.
"""

from __future__ import annotations

import enum
from typing import TypeVar

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.formats import FORMATS, FloatFormat, format_with_max
from passes.ir.layouts import ScaleLayout
from passes.ir.named_ops import OP_ATTR, symbol_name
from passes.ir.types import TensorInfo, tensor_info

E = TypeVar("E", bound=enum.Enum)


class Scaling(enum.Enum):
    """One scale per tensor, or one per block."""

    PER_TENSOR = "per_tensor"
    BLOCK = "block"


class ScaleFormat(enum.Enum):
    """How block scales are stored: FP32 ``scale_inv``, E8M0 or E4M3 codes, or NVFP4's E4M3
    codes with a per-tensor FP32 decode scale (``scaled_matmul`` only)."""

    FP32 = "fp32"
    E8M0 = "e8m0"
    E4M3 = "e4m3"
    NVFP4 = "nvfp4"


class ScaleRule(enum.Enum):
    """``compute_scale``'s rule: amax → scale (docs/numerics.md has each one's math)."""

    FP8_PER_TENSOR = "fp8_per_tensor"
    FP8_BLOCK = "fp8_block"
    E8M0_CEIL = "e8m0_ceil"
    E8M0_FLOOR = "e8m0_floor"
    E8M0_RNE = "e8m0_rne"
    NVFP4_GLOBAL = "nvfp4_global"
    NVFP4_GLOBAL_TORCHAO = "nvfp4_global_torchao"
    NVFP4_GLOBAL_DECODE = "nvfp4_global_decode"  # made by fuse-quantize-core (cuda) only
    NVFP4_BLOCK = "nvfp4_block"
    NVFP4_BLOCK_TORCHAO = "nvfp4_block_torchao"
    CUDNN_ROUND_UP = "cudnn_round_up"

    @property
    def is_e8m0(self) -> bool:
        return self in (ScaleRule.E8M0_CEIL, ScaleRule.E8M0_FLOOR, ScaleRule.E8M0_RNE)

    @property
    def e8m0_rounding(self) -> str:
        """``ceil``, ``floor`` or ``rne`` for an E8M0 rule."""
        assert self.is_e8m0, self
        return self.value.removeprefix("e8m0_")


class Nvfp4ScaleOrder(enum.Enum):
    """The order of the two-level scaling's f32 operations.

    ``TE``: S = 2688 / amax, d = cast(block_amax * (S * f32(1/6))), enc = 1 / (d * (1/S)).
    ``TORCHAO``: g = amax / 2688, d = cast(clamp((block_amax / 6) / g, 2^-6, 448)),
    enc = (1 / g) / d, and -0.0 keeps its sign (torchao's ``nvfp4_quantize``).
    """

    TE = "te"
    TORCHAO = "torchao"


class FusedOutputs(enum.Enum):
    """What a ``fused_quantize`` (fuse-quantize-core) writes: the rowwise data and scales, the
    columnwise ones, or both (rowwise first)."""

    ROWWISE = "rowwise"
    COLUMNWISE = "columnwise"
    BOTH = "rowwise+columnwise"


class NamedOp:
    """The declaration of a named op (``func.func private @qmlir.*``), read by type."""

    def __init__(self, decl: ir.Operation) -> None:
        self.decl = decl

    @property
    def kind(self) -> str:
        return ir.StringAttr(self.decl.attributes[OP_ATTR]).value

    @property
    def name(self) -> str:
        return symbol_name(self.decl)

    def has(self, key: str) -> bool:
        return f"qmlir.{key}" in self.decl.attributes

    def _attr(self, key: str) -> ir.Attribute:
        if not self.has(key):
            raise QmlirError(f"named op @{self.name} has no attribute 'qmlir.{key}'")
        return self.decl.attributes[f"qmlir.{key}"]

    def string(self, key: str) -> str:
        return ir.StringAttr(self._attr(key)).value

    def flag(self, key: str) -> bool:
        return ir.BoolAttr(self._attr(key)).value

    def number(self, key: str) -> float:
        return ir.FloatAttr(self._attr(key)).value

    def integer(self, key: str) -> int:
        return int(ir.IntegerAttr(self._attr(key)).value)

    def block(self, key: str = "block") -> tuple[int, int]:
        rows, cols = ir.DenseI64ArrayAttr(self._attr(key))
        return int(rows), int(cols)

    def choice(self, key: str, enum_type: type[E]) -> E:
        value = self.string(key)
        try:
            return enum_type(value)
        except ValueError:
            raise QmlirError(
                f"named op @{self.name}: unknown {enum_type.__name__} '{value}' in qmlir.{key}"
            ) from None

    def format(self, key: str = "format") -> FloatFormat:
        """An element format attribute (``format``, ``a_format``, ``b_format``)."""
        value = self.string(key)
        fmt = FORMATS.get(value)
        if fmt is None:
            raise QmlirError(f"named op @{self.name}: unknown element format '{value}'")
        return fmt

    @property
    def max_format(self) -> FloatFormat:
        """The format whose largest value is ``fp8_max`` (scale rules carry the bound)."""
        return format_with_max(self.number("fp8_max"), self.name)

    @property
    def scaling(self) -> Scaling:
        """``per_tensor`` or ``block`` (a block amax says so with its ``block`` alone)."""
        if self.has("scaling"):
            return self.choice("scaling", Scaling)
        return Scaling.BLOCK if self.has("block") else Scaling.PER_TENSOR

    @property
    def scale_format(self) -> ScaleFormat:
        return self.choice("scale_format", ScaleFormat)

    @property
    def rule(self) -> ScaleRule:
        return self.choice("rule", ScaleRule)

    @property
    def outputs(self) -> FusedOutputs:
        if not self.has("outputs"):
            return FusedOutputs.ROWWISE
        return self.choice("outputs", FusedOutputs)

    @property
    def gemm_operands(self) -> str:
        """A scaled GEMM's decoded operand type: ``bf16`` where the ``gemm-operands`` pass chose
        it, else ``f32``."""
        return self.string("gemm_operands") if self.has("gemm_operands") else "f32"

    @property
    def order(self) -> Nvfp4ScaleOrder:
        return self.choice("order", Nvfp4ScaleOrder)

    def layout(self, key: str = "layout") -> ScaleLayout:
        return self.choice(key, ScaleLayout)

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
            if name.startswith("qmlir."):
                items.append(f'"{name}" = {self.decl.attributes[name]}')
        return ", ".join(items)

    def qmlir_attributes(self) -> dict[str, ir.Attribute]:
        """The ``qmlir.*`` attributes but the op's kind, keyed without the prefix."""
        out: dict[str, ir.Attribute] = {}
        for key in self.decl.attributes:
            name = key if isinstance(key, str) else key.name
            if name.startswith("qmlir.") and name != OP_ATTR:
                out[name.removeprefix("qmlir.")] = self.decl.attributes[name]
        return out
