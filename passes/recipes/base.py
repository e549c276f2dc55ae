"""What a recipe is: its options and registry (:class:`Recipe`), and what a quantizing recipe
provides (:class:`ScalingRecipe`): each operand's quantization by role and usage, its GEMM, its
scaling state and its element formats, as abstract methods every recipe implements.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
import typing
from dataclasses import dataclass
from typing import Any, ClassVar

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.base.options import coerce_option
from passes.ir.formats import FloatFormat
from passes.ir.named_ops import NamedOpBuilder
from passes.ir.types import TensorInfo

RECIPES: dict[str, type[Recipe]] = {}


def register_recipe(cls: type[Recipe]) -> type[Recipe]:
    RECIPES[cls.name] = cls
    return cls


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A recipe's options are its dataclass fields; ``name`` is its ``--recipe`` value."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    quantizes: ClassVar[bool] = False  # a ScalingRecipe quantizes; `none` does not

    @classmethod
    def option_docs(cls) -> dict[str, str]:
        return {}

    def rows_apart(self) -> bool:
        """Whether each row of an activation is quantized from that row alone (its codes and
        scales depend on no other row: no quantize, 1 x K-block scales, a scale a row), so that
        a row taken out before the quantize gets the same codes as in the whole tensor. Not so
        for a per-tensor scale (fp8-current, fp8-delayed's history, nvfp4's global scale) or
        blocks spanning rows."""
        return False

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> Recipe:
        fields = {f.name: f for f in dataclasses.fields(cls)}
        hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        for raw_key, raw_value in options.items():
            key = raw_key.replace("-", "_")
            if key not in fields:
                known = ", ".join(sorted(fields)) or "none"
                raise QmlirError(
                    f"recipe '{cls.name}' has no option '{raw_key}' (its options: {known})"
                )
            values[key] = coerce_option(f"recipe '{cls.name}'", key, hints[key], raw_value)
        return cls(**values)

    def options(self) -> dict[str, Any]:
        """Options as JSON-ready values (enums by value)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.value if isinstance(value, enum.Enum) else value
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "options": self.options()}


F32_MAX = 3.4028234663852886e38


def check_amax_epsilon(recipe: str, value: float) -> None:
    """``amax_epsilon`` is a lower bound on an amax, used as an f32: >= 0 and finite in f32."""
    if not 0.0 <= value <= F32_MAX:
        raise QmlirError(
            f"option 'amax_epsilon' of recipe '{recipe}' must be >= 0 and a finite f32 "
            f"(at most {F32_MAX:.8g}), not {value:g}"
        )


def get_recipe(name: str, options: dict[str, Any] | None = None) -> Recipe:
    cls = RECIPES.get(name)
    if cls is None:
        known = ", ".join(sorted(RECIPES))
        raise QmlirError(f"unknown recipe '{name}' (known recipes: {known})")
    return cls.from_options(options or {})


class Role(enum.Enum):
    """What an operand of a matmul is: an activation (quantized at run time), a weight (a
    constant, quantized at compile time), a parameter (a weight a training step updates:
    quantized at run time, as a weight) or a gradient (a training step's backward tensor)."""

    ACTIVATION = "activation"
    WEIGHT = "weight"
    PARAMETER = "parameter"
    GRADIENT = "gradient"

    @property
    def is_weight(self) -> bool:
        """Weights and parameters take the recipe's weight rules (fp8-block's 2-D blocks)."""
        return self in (Role.WEIGHT, Role.PARAMETER)


class Usage(enum.Enum):
    """Which way an operand's blocks run: ``ROWWISE`` along its last dim (``[rows, K]``: the
    contraction dim), ``COLUMNWISE`` down dim 0 (a ``[K, N]`` operand). One scale per tensor
    quantizes both alike."""

    ROWWISE = "rowwise"
    COLUMNWISE = "columnwise"


@dataclass(frozen=True)
class QuantizedOperand:
    """A GEMM operand after quantization: element codes and what dequantizes them.

    ``scale_inv`` is the stored scale: FP32 ``scale_inv`` (per tensor or per block) or block scale
    codes (E8M0, E4M3). ``columnwise``: its blocks run down dim 0 (a ``[K, N]`` operand);
    ``block``: the block shape over ``data`` (block-scaled recipes), ``()`` for one per tensor.
    """

    data: ir.Value
    scale_inv: ir.Value
    fmt: FloatFormat
    columnwise: bool = False
    block: tuple[int, ...] = ()
    global_scale: ir.Value | None = None  # NVFP4's per-tensor decode scale S_dec
    transposed: bool = False  # data holds the operand transposed ([N, K] for a [K, N] operand)


@dataclasses.dataclass(frozen=True)
class ScalingRecipe(Recipe, abc.ABC):
    """A recipe that quantizes: the recipe pass, weight folding and ``compiler.quantize`` call
    only these methods."""

    quantizes: ClassVar[bool] = True
    # Block-scaled recipes quantize 2-D operands: N-D activations are flattened to [M, K].
    two_dimensional: ClassVar[bool] = False
    # why the cuda target does not take this recipe (None: it does)
    cuda_refusal: ClassVar[str | None] = None

    def dynamic_rows_refusal(self) -> str | None:
        """Why this recipe, as configured, does not quantize an activation whose rows are
        dynamic (``[?, K]`` after flattening; its leading dims dynamic); None when it does (the
        templates of its named ops then take a dynamic dim 0, each row quantized as in a static
        compile)."""
        return None

    @abc.abstractmethod
    def element_format(self, role: Role) -> FloatFormat:
        """The element format of an operand in ``role``."""

    @abc.abstractmethod
    def has_scaling_state(self, role: Role) -> bool:
        """Whether quantizing an operand in ``role`` reads and updates state kept in the module
        across calls (fp8-delayed's activations)."""

    @abc.abstractmethod
    def emit_quantize(
        self,
        ops: NamedOpBuilder,
        x: ir.Value,
        role: Role,
        usage: Usage = Usage.ROWWISE,
        layer: str | None = None,
    ) -> QuantizedOperand:
        """Named ops quantizing ``x`` (an f32 builtin tensor; 2-D when ``two_dimensional``)."""

    def emit_quantize_static(
        self, ops: NamedOpBuilder, x: ir.Value, scale_inv: float, layer: str | None = None
    ) -> QuantizedOperand:
        """Named ops quantizing the activation ``x`` with a fixed scale: ``scale_inv``, the
        dequantizing multiplier (a checkpoint's ``input_scale``, or calibrated)."""
        raise QmlirError(
            f"recipe '{self.name}' takes no static activation scale (fp8-current and nvfp4 do)"
        )

    @abc.abstractmethod
    def emit_swizzle(
        self, ops: NamedOpBuilder, q: QuantizedOperand, layer: str | None = None
    ) -> ir.Value:
        """``q``'s scales in the layout the GEMM reads (one scale per tensor: as they are)."""

    @abc.abstractmethod
    def emit_scaled_matmul(
        self,
        ops: NamedOpBuilder,
        a: QuantizedOperand,
        b: QuantizedOperand,
        b_transposed: bool,
        out: TensorInfo,
        layer: str | None = None,
    ) -> ir.Value:
        """The GEMM of two quantized operands, f32 out (``b`` as ``[N, K]`` if ``b_transposed``)."""
