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

import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import iree_tensor_ext

from passes.base.numbers import ceil_div
from passes.ir.constants import make_constant
from passes.ir.dialect import (
    Amax,
    ComputeScale,
    Nvfp4ScaleOrder,
    Quantize,
    ScaleFormat,
    ScaleRule,
    Scaling,
)
from passes.ir.formats import E2M1, E4M3, FloatFormat
from passes.ir.named_ops import NamedOpBuilder, variant_suffix
from passes.ir.types import TensorInfo, builtin_tensor_type, tensor_info
from passes.recipes.base import QuantizedOperand, Role, ScalingRecipe, Usage, register_recipe
from passes.recipes.block_scale_ops import transpose_2d
from passes.recipes.blocks import emit_fp4_scaled_matmul, emit_mx_row_swizzle

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
        scalar = builtin_tensor_type((), "f32")
        (amax,) = ops.call(Amax(), variant_suffix(info.shape), [x], [scalar], layer=layer)
        global_rule = (
            ScaleRule.NVFP4_GLOBAL_TORCHAO
            if self.scale_order is Nvfp4ScaleOrder.TORCHAO
            else ScaleRule.NVFP4_GLOBAL
        )
        # TE: (S, S_dec); torchao: (1 / g, g). The second is the decode scale in both.
        to_encode, decode = ops.call(
            ComputeScale(rule=global_rule),
            global_rule.value,
            [amax],
            [scalar, scalar],
            layer=layer,
        )
        return self._quantize_blocks(ops, x, info, to_encode, decode, columnwise, layer)

    def emit_quantize_static(
        self, ops: NamedOpBuilder, x: ir.Value, scale_inv: float, layer: str | None = None
    ) -> QuantizedOperand:
        """The activation with a fixed global scale: ``scale_inv`` is the global decode scale
        ``S_dec`` (ModelOpt's ``input_scale``, ``amax / (448 * 6)`` of calibration), ``S = 1 /
        S_dec`` (f32; compressed-tensors stores ``S`` as ``input_global_scale``, which this is
        to within one rounding); the block scales stay dynamic, as in vLLM's and TE's kernels."""
        info = tensor_info(x.type, dynamic=True)
        assert info is not None and info.rank == 2 and info.dtype == "f32", x.type
        decode = np.float32(scale_inv)
        encode = np.float32(1) / decode  # TE's (S, S_dec) and torchao's (1 / g, g) alike
        scalar = builtin_tensor_type((), "f32")
        to_encode = _opaque(make_constant(np.array(encode, np.float32), scalar))
        dec = _opaque(make_constant(np.array(decode, np.float32), scalar))
        return self._quantize_blocks(ops, x, info, to_encode, dec, False, layer)

    def _quantize_blocks(
        self,
        ops: NamedOpBuilder,
        x: ir.Value,
        info: TensorInfo,
        to_encode: ir.Value,
        decode: ir.Value,
        columnwise: bool,
        layer: str | None,
    ) -> QuantizedOperand:
        """Block amax, E4M3 block scales and E2M1 codes of ``x`` ``[rows, K]`` under the global
        scale pair (``to_encode``, ``decode``)."""
        rows, k = info.shape
        grid = (rows, ceil_div(k, BLOCK))
        torchao = self.scale_order is Nvfp4ScaleOrder.TORCHAO
        block_rule = ScaleRule.NVFP4_BLOCK_TORCHAO if torchao else ScaleRule.NVFP4_BLOCK
        (block_amax,) = ops.call(
            Amax(block=(1, BLOCK)),
            variant_suffix(f"block1x{BLOCK}", info.shape),
            [x],
            [builtin_tensor_type(grid, "f32")],
            layer=layer,
        )
        (d,) = ops.call(
            ComputeScale(rule=block_rule),
            variant_suffix(block_rule.value, grid),
            [block_amax, decode if torchao else to_encode],
            [builtin_tensor_type(grid, "i8")],
            layer=layer,
        )
        quantize = Quantize(
            format=E2M1,
            scaling=Scaling.BLOCK,
            block=(1, BLOCK),
            scale_format=ScaleFormat.E4M3,
            packed=True,
            order=self.scale_order,
        )
        data, scale = ops.call(
            quantize,
            variant_suffix(
                E2M1.name, f"block1x{BLOCK}", E4M3.name, self.scale_order.value, info.shape
            ),
            [x, d, to_encode if torchao else decode],
            [
                builtin_tensor_type((rows, grid[1] * BLOCK // 2), "i8"),
                builtin_tensor_type(grid, "i8"),
            ],
            layer=layer,
        )
        return QuantizedOperand(
            data, scale, E2M1, block=(1, BLOCK), global_scale=decode, transposed=columnwise
        )

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
        assert b_transposed or b.transposed, "NVFP4 operands are [rows, K]"
        assert a.global_scale is not None and b.global_scale is not None
        return emit_fp4_scaled_matmul(ops, a, b, out, ScaleFormat.NVFP4, layer)


def _opaque(value: ir.Value) -> ir.Value:
    """``value`` through a compute barrier: IREE does not fold what the quantize derives from
    it (its 256-entry table of encode scales, one per E4M3 block-scale code), which it gets
    wrong when the global decode scale is a constant (measured: 40% of the codes with the wrong
    sign); the barrier is gone before IREE builds the host program."""
    return iree_tensor_ext.compute_barrier_start(value.type, value, [])
