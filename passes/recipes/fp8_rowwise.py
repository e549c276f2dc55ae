"""Recipe ``fp8-rowwise``: FP8 with one FP32 scale per row of each GEMM operand.

An activation ``[M, K]`` gets a scale per row (per token), a weight ``[N, K]`` one per output
channel, each over the whole contraction dim: torchao's rowwise ``Float8Linear`` and
compressed-tensors' FP8_DYNAMIC (per-channel weights, dynamic per-token activations), which is
how most FP8 checkpoints on the Hugging Face hub are stored. The rule per row is fp8-block's with
the block a whole row (``1 x K``; a ``[K, N]`` operand's columns, ``K x 1``): ``scale =
448 / amax`` in FP32 (``amax == 0`` → 1), power-of-2 rounding off by default (torchao's rowwise
recipe rounds scales down to a power of 2: ``pow2_scales=true``), cast to E4M3, ``scale_inv``
stored; the GEMM multiplies each dot product by its row's and column's ``scale_inv``.

On cuda an activation's rowwise quantize and the ``[N, K]``-weight GEMM run on kernels of their
own (``qmlir_quantize_fp8_rowwise``: a warp a row; ``qmlir_gemm_fp8_rowwise``: the FP8 tiles
summing all of K, the two rows' scales multiplied in at the end; its few-rows kernels for a
decode step); a columnwise ``[K, N]`` operand (training, ``--quantize-all-matmuls``) keeps the
llvm-cpu bodies, compiled by IREE's own CUDA code generation.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.formats import FloatFormat, Fp8Format
from passes.ir.layouts import ScaleLayout
from passes.ir.named_ops import NamedOpBuilder
from passes.ir.types import DYNAMIC, TensorInfo, tensor_info
from passes.recipes.base import (
    QuantizedOperand,
    Role,
    ScalingRecipe,
    Usage,
    check_amax_epsilon,
    register_recipe,
)
from passes.recipes.blocks import emit_fp8_block_quantize, emit_fp32_block_gemm, emit_fp32_swizzle


@register_recipe
@dataclasses.dataclass(frozen=True)
class Fp8RowwiseScaling(ScalingRecipe):
    name = "fp8-rowwise"
    summary = "FP8 with an FP32 scale per row: per token, per output channel (FP8_DYNAMIC)"
    two_dimensional = True

    fp8_format: Fp8Format = Fp8Format.E4M3
    pow2_scales: bool = False
    amax_epsilon: float = 0.0

    def rows_apart(self) -> bool:
        return True  # a scale a row

    @classmethod
    def option_docs(cls) -> dict[str, str]:
        return {
            "fp8_format": "e4m3 | hybrid (E5M2 for gradients in training; inference: as e4m3)",
            "pow2_scales": "round each row's scale down to a power of 2 (torchao's rowwise)",
            "amax_epsilon": "lower bound on each row's amax",
        }

    def __post_init__(self) -> None:
        check_amax_epsilon(self.name, self.amax_epsilon)

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
        info = tensor_info(x.type, dynamic=True)
        assert info is not None and info.rank == 2, x.type
        columnwise = usage is Usage.COLUMNWISE
        k = info.shape[0] if columnwise else info.shape[1]
        if k == DYNAMIC:
            raise QmlirError(
                f"recipe '{self.name}' needs a static contraction dim (a row's scale covers it)"
            )
        block = (k, 1) if columnwise else (1, k)
        fmt = self.element_format(role)
        return emit_fp8_block_quantize(
            ops, x, block, fmt, self.amax_epsilon, self.pow2_scales, columnwise, layer
        )

    def emit_swizzle(
        self, ops: NamedOpBuilder, q: QuantizedOperand, layer: str | None = None
    ) -> ir.Value:
        """Compact FP32 scales ``[rows, 1]`` → GEMM-ready ``[1, pad4(rows)]`` (the 1D layout)."""
        return emit_fp32_swizzle(ops, q, ScaleLayout.BLOCK1D, layer)

    def emit_scaled_matmul(
        self,
        ops: NamedOpBuilder,
        a: QuantizedOperand,
        b: QuantizedOperand,
        b_transposed: bool,
        out: TensorInfo,
        layer: str | None = None,
    ) -> ir.Value:
        layouts = (ScaleLayout.BLOCK1D, ScaleLayout.BLOCK1D)
        return emit_fp32_block_gemm(ops, a, b, layouts, b_transposed, out, layer)
