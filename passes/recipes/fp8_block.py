"""Recipe ``fp8-block``: TE ``Float8BlockScaling`` (DeepSeek-V3 style), FP32 scale per block.

Activations: 1x128 blocks along the contraction dim (``x_block_scaling_dim=1``); weights:
128x128 tiles (``w_block_scaling_dim=2``); a ``[K, N]`` operand's 1-D blocks run down dim 0
(columnwise). Per block TE's ``compute_scale_from_amax`` (power-of-2 scales by default), cast to
E4M3, ``scale_inv`` stored; ``swizzle`` to the GEMM-ready layouts (1D: transposed and padded,
2D: padded); ``scaled_matmul``. Shapes not divisible by 128 are zero-padded inside the core.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.formats import FloatFormat, Fp8Format
from passes.ir.layouts import ScaleLayout
from passes.ir.named_ops import NamedOpBuilder
from passes.ir.types import TensorInfo
from passes.recipes.base import (
    QuantizedOperand,
    Role,
    ScalingRecipe,
    Usage,
    check_amax_epsilon,
    register_recipe,
)
from passes.recipes.blocks import emit_fp8_block_quantize, emit_fp32_block_gemm, emit_fp32_swizzle

BLOCK = 128


@register_recipe
@dataclasses.dataclass(frozen=True)
class Fp8BlockScaling(ScalingRecipe):
    name = "fp8-block"
    summary = "FP8 with an FP32 scale per 1x128 / 128x128 block (TE Float8BlockScaling)"
    two_dimensional = True

    fp8_format: Fp8Format = Fp8Format.E4M3
    x_block_scaling_dim: int = 1
    w_block_scaling_dim: int = 2
    grad_block_scaling_dim: int = 1
    pow2_scales: bool = True
    amax_epsilon: float = 0.0

    def rows_apart(self) -> bool:
        return self.x_block_scaling_dim == 1  # 1 x 128 blocks, not 128 x 128

    @classmethod
    def option_docs(cls) -> dict[str, str]:
        return {
            "fp8_format": "e4m3 | hybrid (E5M2 for gradients in training; inference: as e4m3)",
            "x_block_scaling_dim": "1 (1x128 blocks) or 2 (128x128) for activations",
            "w_block_scaling_dim": "1 (1x128 blocks) or 2 (128x128) for weights",
            "grad_block_scaling_dim": "1 (1x128 blocks) or 2 (128x128) for a training step's "
            "gradients",
            "pow2_scales": "round each block scale down to a power of 2",
            "amax_epsilon": "lower bound on each block's amax",
        }

    def __post_init__(self) -> None:
        keys = ("x_block_scaling_dim", "w_block_scaling_dim", "grad_block_scaling_dim")
        for key in keys:
            if getattr(self, key) not in (1, 2):
                raise QmlirError(f"option '{key}' of recipe 'fp8-block' must be 1 or 2")
        # each pair of these meets in a GEMM (fprop x.W, dgrad dY.W, wgrad dY.x)
        for first, second in ((0, 1), (0, 2), (1, 2)):
            if getattr(self, keys[first]) == 2 and getattr(self, keys[second]) == 2:
                raise QmlirError(
                    "recipe 'fp8-block' does not support 2D x 2D block scaling "
                    f"({keys[first]}=2 with {keys[second]}=2), as TE does not"
                )
        check_amax_epsilon(self.name, self.amax_epsilon)

    def dynamic_rows_refusal(self) -> str | None:
        if self.x_block_scaling_dim == 2:
            return "dynamic rows with 128x128 activation blocks (x_block_scaling_dim=2)"
        return None

    def element_format(self, role: Role) -> FloatFormat:
        if role is Role.GRADIENT:
            return self.fp8_format.gradient_format()
        return self.fp8_format.forward_format()

    def has_scaling_state(self, role: Role) -> bool:
        return False

    def block_shape(self, role: Role, usage: Usage) -> tuple[int, int]:
        dim = self.x_block_scaling_dim
        if role.is_weight:
            dim = self.w_block_scaling_dim
        elif role is Role.GRADIENT:
            dim = self.grad_block_scaling_dim
        if dim == 2:
            return (BLOCK, BLOCK)
        return (BLOCK, 1) if usage is Usage.COLUMNWISE else (1, BLOCK)

    def emit_quantize(
        self,
        ops: NamedOpBuilder,
        x: ir.Value,
        role: Role,
        usage: Usage = Usage.ROWWISE,
        layer: str | None = None,
    ) -> QuantizedOperand:
        fmt = self.element_format(role)
        block = self.block_shape(role, usage)
        columnwise = usage is Usage.COLUMNWISE
        return emit_fp8_block_quantize(
            ops, x, block, fmt, self.amax_epsilon, self.pow2_scales, columnwise, layer
        )

    def emit_swizzle(
        self, ops: NamedOpBuilder, q: QuantizedOperand, layer: str | None = None
    ) -> ir.Value:
        return emit_fp32_swizzle(ops, q, _layout(q), layer)

    def emit_scaled_matmul(
        self,
        ops: NamedOpBuilder,
        a: QuantizedOperand,
        b: QuantizedOperand,
        b_transposed: bool,
        out: TensorInfo,
        layer: str | None = None,
    ) -> ir.Value:
        layouts = (_layout(a), _layout(b))
        return emit_fp32_block_gemm(ops, a, b, layouts, b_transposed, out, layer)


def _layout(q: QuantizedOperand) -> ScaleLayout:
    """128x128 tiles keep their grid (padded); 1x128 / 128x1 blocks are transposed."""
    return ScaleLayout.BLOCK2D if q.block == (BLOCK, BLOCK) else ScaleLayout.BLOCK1D
