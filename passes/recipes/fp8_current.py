"""Recipe ``fp8-current``: TE ``Float8CurrentScaling``, one FP32 scale per tensor.

Per quantized tensor: ``amax = max|x|`` (NaN ignored) → ``compute_scale`` (TE's
``compute_scale_from_amax``) → ``quantize`` (saturating RNE cast of ``x * scale`` to E4M3,
``scale_inv = 1 / scale``). The GEMM is ``scaled_matmul`` with f32 accumulation and
``alpha = scale_inv_a * scale_inv_b``. Weights go through the same chain, folded at compile time.
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np
from iree.compiler import ir

from passes.ir.constants import make_constant
from passes.ir.dialect import Amax, ComputeScale, Quantize, ScaledMatmul, ScaleRule, Scaling
from passes.ir.formats import FloatFormat, Fp8Format
from passes.ir.named_ops import NamedOpBuilder, variant_suffix
from passes.ir.types import TensorInfo, builtin_tensor_type, tensor_info
from passes.recipes.base import (
    QuantizedOperand,
    Role,
    ScalingRecipe,
    Usage,
    check_amax_epsilon,
    register_recipe,
)


@register_recipe
@dataclasses.dataclass(frozen=True)
class Fp8CurrentScaling(ScalingRecipe):
    name = "fp8-current"
    summary = (
        "FP8 with one FP32 scale per tensor from the tensor's own amax (TE Float8CurrentScaling)"
    )

    fp8_format: Fp8Format = Fp8Format.E4M3
    force_pow2_scales: bool = False
    amax_epsilon: float = 0.0

    @classmethod
    def option_docs(cls) -> dict[str, str]:
        return {
            "fp8_format": "e4m3 | hybrid (hybrid = E4M3 for every forward tensor, E5M2 for "
            "gradients, which only a training step has)",
            "force_pow2_scales": "round each scale down to a power of 2 (mantissa zeroed)",
            "amax_epsilon": "lower bound on amax before the scale is computed",
        }

    def __post_init__(self) -> None:
        check_amax_epsilon(self.name, self.amax_epsilon)

    def element_format(self, role: Role) -> FloatFormat:
        if role is Role.GRADIENT:
            return self.fp8_format.gradient_format()
        return self.fp8_format.forward_format()

    def has_scaling_state(self, role: Role) -> bool:
        return False

    def _scale_variant(self, fmt: FloatFormat) -> str:
        parts = [fmt.name]
        if self.force_pow2_scales:
            parts.append("pow2")
        if self.amax_epsilon:
            parts.append("eps" + struct.pack(">f", self.amax_epsilon).hex())
        return ".".join(parts)

    def emit_quantize(
        self,
        ops: NamedOpBuilder,
        x: ir.Value,
        role: Role,
        usage: Usage = Usage.ROWWISE,
        layer: str | None = None,
    ) -> QuantizedOperand:
        """amax → compute_scale → quantize on an f32 builtin tensor (weights and either usage:
        the same, one scale for the tensor and its transpose)."""
        info = tensor_info(x.type, dynamic=True)
        assert info is not None and info.dtype == "f32", x.type
        fmt = self.element_format(role)
        scalar = builtin_tensor_type((), "f32")
        (amax,) = ops.call(Amax(), variant_suffix(info.shape), [x], [scalar], layer=layer)
        rule = ComputeScale(
            rule=ScaleRule.FP8_PER_TENSOR,
            fp8_max=fmt.max_finite,
            epsilon=self.amax_epsilon,
            pow2=self.force_pow2_scales,
        )
        (scale,) = ops.call(
            rule, "fp8_per_tensor." + self._scale_variant(fmt), [amax], [scalar], layer=layer
        )
        return emit_per_tensor_cast(ops, x, scale, fmt, layer)

    def emit_quantize_static(
        self, ops: NamedOpBuilder, x: ir.Value, scale_inv: float, layer: str | None = None
    ) -> QuantizedOperand:
        """The cast with the fixed ``scale = 1 / scale_inv`` (f32): no amax pass. The stored
        ``scale_inv`` is ``1 / scale`` as always, ``scale_inv`` itself to within one rounding."""
        scale = np.float32(1) / np.float32(scale_inv)
        value = make_constant(np.array(scale, np.float32), builtin_tensor_type((), "f32"))
        return emit_per_tensor_cast(ops, x, value, self.element_format(Role.ACTIVATION), layer)

    def emit_swizzle(
        self, ops: NamedOpBuilder, q: QuantizedOperand, layer: str | None = None
    ) -> ir.Value:
        """One FP32 ``scale_inv`` per tensor: the GEMM reads it as it is."""
        return q.scale_inv

    def emit_scaled_matmul(
        self,
        ops: NamedOpBuilder,
        a: QuantizedOperand,
        b: QuantizedOperand,
        b_transposed: bool,
        out: TensorInfo,
        layer: str | None = None,
    ) -> ir.Value:
        a_info, b_info = (
            tensor_info(a.data.type, dynamic=True),
            tensor_info(b.data.type, dynamic=True),
        )
        assert a_info is not None and b_info is not None
        layout = "nt" if b_transposed else "nn"
        gemm = ScaledMatmul(
            a_format=a.fmt, b_format=b.fmt, scaling=Scaling.PER_TENSOR, b_transposed=b_transposed
        )
        (result,) = ops.call(
            gemm,
            variant_suffix(
                f"{a.fmt.name}x{b.fmt.name}", "per_tensor", layout, a_info.shape, b_info.shape
            ),
            [a.data, a.scale_inv, b.data, b.scale_inv],
            [out.with_dtype("f32").builtin()],
            layer=layer,
        )
        return result


def emit_per_tensor_cast(
    ops: NamedOpBuilder, x: ir.Value, scale: ir.Value, fmt: FloatFormat, layer: str | None
) -> QuantizedOperand:
    """``quantize``: ``data = cast(x * scale)``, ``scale_inv = 1 / scale`` (one scale per tensor,
    computed from this tensor's amax or, with fp8-delayed, carried in the module's state)."""
    info = tensor_info(x.type, dynamic=True)
    assert info is not None
    data, scale_inv = ops.call(
        Quantize(format=fmt, scaling=Scaling.PER_TENSOR),
        variant_suffix(fmt.name, "per_tensor", info.shape),
        [x, scale],
        [builtin_tensor_type(info.shape, "i8"), builtin_tensor_type((), "f32")],
        layer=layer,
    )
    return QuantizedOperand(data, scale_inv, fmt)
