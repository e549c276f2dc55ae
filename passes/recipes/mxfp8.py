"""Recipe ``mxfp8``: TE ``MXFP8BlockScaling`` (OCP MX), E4M3 data with an E8M0 scale per 32.

Per operand: ``amax`` per 1x32 block (32x1 when the blocks run down dim 0, e.g. a ``[K, N]``
weight) → ``compute_scale`` (E8M0 code by ``e8m0_rounding``) → ``quantize`` (``x * 2^(127-e)``
cast to E4M3); then ``swizzle`` (the 128x4 GEMM layout) → ``scaled_matmul``. Weights go through
the same chain, folded at compile time.
"""

from __future__ import annotations

import dataclasses
import enum

from iree.compiler import ir

from passes.ir.dialect import ComputeScale, ScaleFormat, ScaleRule
from passes.ir.formats import FloatFormat, Fp8Format
from passes.ir.layouts import ScaleLayout, swizzled_shape
from passes.ir.named_ops import NamedOpBuilder
from passes.ir.types import TensorInfo, tensor_info
from passes.recipes.base import QuantizedOperand, Role, ScalingRecipe, Usage, register_recipe
from passes.recipes.blocks import emit_block_quantize, emit_block_scaled_matmul, emit_swizzle

BLOCK = 32


class E8m0Rounding(enum.Enum):
    """How a block's E8M0 scale comes from its amax (v = amax / fp8_max).

    ``CEIL``: TE/cuBLAS: v's exponent, one more if v is not a power of two (never overflows).
    ``FLOOR``: OCP MX spec, torchao's default: floor(log2(amax)) - emax_elem (may saturate).
    ``RNE``: PyTorch's ``.to(torch.float8_e8m0fnu)`` of v.
    ``EVEN``: compressed-tensors, vLLM's MX reference, torchao EVEN: amax rounded half up to the
    element's mantissa bits, then ``FLOOR``'s rule on it.
    """

    CEIL = "ceil"
    FLOOR = "floor"
    RNE = "rne"
    EVEN = "even"


@register_recipe
@dataclasses.dataclass(frozen=True)
class Mxfp8BlockScaling(ScalingRecipe):
    name = "mxfp8"
    summary = "MXFP8: E4M3 data, one E8M0 scale per 32 elements (TE MXFP8BlockScaling)"
    two_dimensional = True

    fp8_format: Fp8Format = Fp8Format.E4M3
    e8m0_rounding: E8m0Rounding = E8m0Rounding.CEIL

    def rows_apart(self) -> bool:
        return True  # 1 x 32 blocks along K

    @classmethod
    def option_docs(cls) -> dict[str, str]:
        return {
            "fp8_format": "e4m3 | hybrid (E5M2 for gradients in training; inference: as e4m3)",
            "e8m0_rounding": "ceil (TE, cuBLAS) | floor (OCP, torchao) | rne (PyTorch cast) | "
            "even (compressed-tensors, torchao EVEN)",
        }

    def element_format(self, role: Role) -> FloatFormat:
        if role is Role.GRADIENT:
            return self.fp8_format.gradient_format()
        return self.fp8_format.forward_format()

    def has_scaling_state(self, role: Role) -> bool:
        return False

    def emit_quantize(
        self,
        ops: NamedOpBuilder,
        x: ir.Value,
        role: Role,
        usage: Usage = Usage.ROWWISE,
        layer: str | None = None,
    ) -> QuantizedOperand:
        fmt = self.element_format(role)
        columnwise = usage is Usage.COLUMNWISE
        return emit_block_quantize(
            ops,
            x,
            (BLOCK, 1) if columnwise else (1, BLOCK),
            fmt,
            ComputeScale(
                rule=ScaleRule(f"e8m0_{self.e8m0_rounding.value}"), fp8_max=fmt.max_finite
            ),
            ScaleFormat.E8M0,
            columnwise,
            layer,
        )

    def emit_swizzle(
        self, ops: NamedOpBuilder, q: QuantizedOperand, layer: str | None = None
    ) -> ir.Value:
        """Compact block scales → the 128x4 GEMM layout of S[row, k_block]."""
        grid = tensor_info(q.scale_inv.type, dynamic=True)
        assert grid is not None
        rows, cols = (grid.shape[1], grid.shape[0]) if q.columnwise else grid.shape
        layout = ScaleLayout.MX
        return emit_swizzle(
            ops, q.scale_inv, layout, q.columnwise, swizzled_shape(layout, rows, cols), layer
        )

    def emit_scaled_matmul(
        self,
        ops: NamedOpBuilder,
        a: QuantizedOperand,
        b: QuantizedOperand,
        b_transposed: bool,
        out: TensorInfo,
        layer: str | None = None,
    ) -> ir.Value:
        scales = (self.emit_swizzle(ops, a, layer), self.emit_swizzle(ops, b, layer))
        return emit_block_scaled_matmul(
            ops, a, b, scales, b_transposed, out, ScaleFormat.E8M0, (ScaleLayout.MX,) * 2, layer
        )
