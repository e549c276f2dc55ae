"""Recipe ``mxfp4``: OCP MXFP4, E2M1 data with an E8M0 scale per 32 elements.

Per operand: ``amax`` per 1x32 block, NaN propagating (a block holding a NaN gets the E8M0 NaN
scale 0xFF, as the OCP MX spec and torchao have it: E2M1 has no NaN code) → ``compute_scale``
(E8M0 code by ``e8m0_rounding``, E2M1's largest value 6) → ``quantize`` (``x * 2^(127-e)`` cast
to E2M1, packed two per byte, low nibble = even element) → ``swizzle`` (the 128x4 GEMM layout,
as MXFP8's) → ``scaled_matmul``. An operand whose blocks would run down dim 0 (a ``[K, N]``
weight) is transposed first, as for NVFP4: packed codes are ``[rows, K / 2]``. There is no
per-tensor scale. No Transformer Engine recipe exists for MXFP4; the numerics follow the OCP
spec and torchao's ``to_mx`` (docs/numerics.md lists where they differ).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.numbers import ceil_div
from passes.ir.dialect import Amax, ComputeScale, Quantize, ScaleFormat, ScaleRule, Scaling
from passes.ir.formats import E2M1, FloatFormat
from passes.ir.named_ops import NamedOpBuilder, variant_suffix
from passes.ir.types import TensorInfo, builtin_tensor_type, tensor_info
from passes.recipes.base import QuantizedOperand, Role, ScalingRecipe, Usage, register_recipe
from passes.recipes.block_scale_ops import transpose_2d
from passes.recipes.blocks import emit_fp4_scaled_matmul, emit_mx_row_swizzle
from passes.recipes.mxfp8 import E8m0Rounding

BLOCK = 32


@register_recipe
@dataclasses.dataclass(frozen=True)
class Mxfp4BlockScaling(ScalingRecipe):
    name = "mxfp4"
    summary = "MXFP4: E2M1 data, one E8M0 scale per 32 elements (OCP MX)"
    two_dimensional = True
    cuda_refusal = "no CUDA kernel takes E2M1 codes with E8M0 scales yet"

    e8m0_rounding: E8m0Rounding = E8m0Rounding.CEIL

    def rows_apart(self) -> bool:
        return True  # 1 x 32 blocks along K

    @classmethod
    def option_docs(cls) -> dict[str, str]:
        return {
            "e8m0_rounding": "ceil (cuBLAS, torchao RCEIL) | floor (OCP, torchao) | rne "
            "(PyTorch cast) | even (compressed-tensors, vLLM, torchao EVEN)",
        }

    def element_format(self, role: Role) -> FloatFormat:
        return E2M1

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
        columnwise = usage is Usage.COLUMNWISE
        if columnwise:
            x = transpose_2d(x)
        info = tensor_info(x.type, dynamic=True)  # rows may be dynamic
        assert info is not None and info.rank == 2 and info.dtype == "f32", x.type
        rows, k = info.shape
        grid = (rows, ceil_div(k, BLOCK))
        block_name = f"block1x{BLOCK}"
        (amax,) = ops.call(
            Amax(block=(1, BLOCK), propagate_nan=True),
            variant_suffix(block_name, "nan", info.shape),
            [x],
            [builtin_tensor_type(grid, "f32")],
            layer=layer,
        )
        rule = ScaleRule(f"e8m0_{self.e8m0_rounding.value}")
        (scale,) = ops.call(
            ComputeScale(rule=rule, fp8_max=E2M1.max_finite),
            variant_suffix(rule.value, E2M1.name, grid),
            [amax],
            [builtin_tensor_type(grid, "i8")],
            layer=layer,
        )
        quantize = Quantize(
            format=E2M1,
            scaling=Scaling.BLOCK,
            block=(1, BLOCK),
            scale_format=ScaleFormat.E8M0,
            packed=True,
        )
        data, stored = ops.call(
            quantize,
            variant_suffix(E2M1.name, block_name, ScaleFormat.E8M0.value, info.shape),
            [x, scale],
            [
                builtin_tensor_type((rows, grid[1] * BLOCK // 2), "i8"),
                builtin_tensor_type(grid, "i8"),
            ],
            layer=layer,
        )
        return QuantizedOperand(data, stored, E2M1, block=(1, BLOCK), transposed=columnwise)

    def emit_swizzle(
        self, ops: NamedOpBuilder, q: QuantizedOperand, layer: str | None = None
    ) -> ir.Value:
        return emit_mx_row_swizzle(ops, q, layer)

    def emit_scaled_matmul(
        self,
        ops: NamedOpBuilder,
        a: QuantizedOperand,
        b: QuantizedOperand,
        b_transposed: bool,
        out: TensorInfo,
        layer: str | None = None,
    ) -> ir.Value:
        assert b_transposed or b.transposed, "MXFP4 operands are [rows, K]"
        return emit_fp4_scaled_matmul(ops, a, b, out, ScaleFormat.E8M0, layer)
