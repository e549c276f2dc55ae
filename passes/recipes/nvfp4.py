"""Recipe ``nvfp4``: TE ``NVFP4BlockScaling``, E2M1 data, E4M3 scale per 16, FP32 global scale.

Per operand (two-level scaling, TE's reference order of operations, all in f32):
``amax`` of the tensor → ``compute_scale`` (global: S, S_dec) → ``amax`` per 1x16 block →
``compute_scale`` (block: E4M3 decode scale d) → ``quantize`` (E2M1, packed two per byte, low
nibble = even element) → ``swizzle`` (128x4 tiles) → ``scaled_matmul`` (S_dec_a * S_dec_b as the
GEMM's alpha). An operand whose blocks would run down dim 0 (a ``[K, N]`` weight) is transposed
first, as TE quantizes NVFP4 columnwise data. Random Hadamard transforms and stochastic rounding
are training features: not applied.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.numbers import ceil_div
from passes.ir.attributes import Nvfp4ScaleOrder, ScaleFormat, Scaling
from passes.ir.formats import E2M1, FloatFormat
from passes.ir.layouts import ScaleLayout, swizzled_shape
from passes.ir.named_ops import NamedOpBuilder, bool_attr, i64_array_attr, str_attr, variant_suffix
from passes.ir.types import TensorInfo, builtin_tensor_type, tensor_info
from passes.recipes.base import QuantizedOperand, Role, ScalingRecipe, Usage, register_recipe
from passes.recipes.block_scale_ops import transpose_2d
from passes.recipes.blocks import emit_block_scaled_matmul, emit_swizzle

BLOCK = 16


@register_recipe
@dataclasses.dataclass(frozen=True)
class Nvfp4BlockScaling(ScalingRecipe):
    name = "nvfp4"
    summary = "NVFP4: E2M1 data, E4M3 scale per 16 elements, FP32 global scale (TE NVFP4)"
    two_dimensional = True

    scale_order: Nvfp4ScaleOrder = Nvfp4ScaleOrder.TE

    @classmethod
    def option_docs(cls) -> dict[str, str]:
        return {"scale_order": "te (TE's reference) | torchao (torchao's nvfp4_quantize)"}

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
        scalar = builtin_tensor_type((), "f32")
        (amax,) = ops.call("amax", variant_suffix(info.shape), [x], [scalar], layer=layer)
        torchao = self.scale_order is Nvfp4ScaleOrder.TORCHAO
        suffix = "_torchao" if torchao else ""
        # TE: (S, S_dec); torchao: (1 / g, g). The second is the decode scale in both.
        to_encode, decode = ops.call(
            "compute_scale",
            f"nvfp4_global{suffix}",
            [amax],
            [scalar, scalar],
            {"rule": str_attr(f"nvfp4_global{suffix}")},
            layer=layer,
        )
        (block_amax,) = ops.call(
            "amax",
            variant_suffix(f"block1x{BLOCK}", info.shape),
            [x],
            [builtin_tensor_type(grid, "f32")],
            {"block": i64_array_attr((1, BLOCK))},
            layer=layer,
        )
        (d,) = ops.call(
            "compute_scale",
            variant_suffix(f"nvfp4_block{suffix}", grid),
            [block_amax, decode if torchao else to_encode],
            [builtin_tensor_type(grid, "i8")],
            {"rule": str_attr(f"nvfp4_block{suffix}")},
            layer=layer,
        )
        data, scale = ops.call(
            "quantize",
            variant_suffix("e2m1", f"block1x{BLOCK}", "e4m3", self.scale_order.value, info.shape),
            [x, d, to_encode if torchao else decode],
            [
                builtin_tensor_type((rows, grid[1] * BLOCK // 2), "i8"),
                builtin_tensor_type(grid, "i8"),
            ],
            {
                "format": str_attr("e2m1"),
                "scaling": str_attr(Scaling.BLOCK.value),
                "block": i64_array_attr((1, BLOCK)),
                "scale_format": str_attr("e4m3"),
                "packed": bool_attr(True),
                "order": str_attr(self.scale_order.value),
            },
            layer=layer,
        )
        return QuantizedOperand(
            data, scale, E2M1, block=(1, BLOCK), global_scale=decode, transposed=columnwise
        )

    def emit_swizzle(
        self, ops: NamedOpBuilder, q: QuantizedOperand, layer: str | None = None
    ) -> ir.Value:
        grid = tensor_info(q.scale_inv.type, dynamic=True)
        assert grid is not None
        layout = ScaleLayout.MX
        return emit_swizzle(
            ops, q.scale_inv, layout, False, swizzled_shape(layout, *grid.shape), layer
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
        assert b_transposed or b.transposed, "NVFP4 operands are [rows, K]"
        assert a.global_scale is not None and b.global_scale is not None
        scales = (self.emit_swizzle(ops, a, layer), self.emit_swizzle(ops, b, layer))
        layouts = (ScaleLayout.MX,) * 2
        return emit_block_scaled_matmul(
            ops, a, b, scales, True, out, ScaleFormat.NVFP4, layouts, layer
        )
