"""Recipe ``fp8-delayed``: TE ``DelayedScaling``, per-tensor FP8 with scales from past amaxes.

Each quantized activation owns two module globals, ``amax_history[L]`` (zeros) and ``scale``
(1.0). One call of the compiled function is one step: quantize with the current scale (no amax
pass before the cast), then ``amax_history_update`` records this call's amax, computes the next
scale (``max`` or ``most_recent``, ``margin``) and rolls the history; both are stored back.
Weights are constants: they use current scaling, at compile time.

TE's update records every amax, so one outlier call (a single 1e30 element) sets a scale that
quantizes every normal call to zero until the outlier leaves the history. Off by default (TE),
``skip_non_finite_amax`` and ``amax_outlier_factor`` reject such an amax: it is recorded as 0,
as for an all-zero input (docs/recipes.md has the exact rule).
"""

from __future__ import annotations

import dataclasses
import math
import struct

import numpy as np
from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.dialect import Amax, AmaxComputeAlgo, AmaxHistoryUpdate
from passes.ir.formats import FloatFormat, Fp8Format
from passes.ir.named_ops import (
    NamedOpBuilder,
    load_global,
    store_global,
    str_attr,
    variant_suffix,
)
from passes.ir.types import TensorInfo, builtin_tensor_type, tensor_info
from passes.recipes.base import QuantizedOperand, Role, ScalingRecipe, Usage, register_recipe
from passes.recipes.fp8_current import Fp8CurrentScaling, emit_per_tensor_cast

MAX_HISTORY_LEN = 1 << 20


@register_recipe
@dataclasses.dataclass(frozen=True)
class Fp8DelayedScaling(ScalingRecipe):
    name = "fp8-delayed"
    summary = "FP8, per-tensor scales from an amax history kept in the module (TE DelayedScaling)"

    fp8_format: Fp8Format = Fp8Format.E4M3
    amax_history_len: int = 1024
    amax_compute_algo: AmaxComputeAlgo = AmaxComputeAlgo.MAX
    margin: int = 0
    skip_non_finite_amax: bool = False
    amax_outlier_factor: float = 0.0

    @classmethod
    def option_docs(cls) -> dict[str, str]:
        return {
            "fp8_format": "e4m3 | hybrid (E5M2 for gradients in training; inference: as e4m3)",
            "amax_history_len": "length L of each activation's amax history",
            "amax_compute_algo": "max (largest amax in the history) | most_recent",
            "margin": "scale = (fp8_max / amax) / 2^margin",
            "skip_non_finite_amax": "record an infinite amax as 0 (off: TE records it)",
            "amax_outlier_factor": "F >= 1: record as 0 an amax above F x the history's max, "
            "or infinite (0: off, TE)",
        }

    def __post_init__(self) -> None:
        if not 1 <= self.amax_history_len <= MAX_HISTORY_LEN:
            raise QmlirError(
                "option 'amax_history_len' of recipe 'fp8-delayed' must be in "
                f"1..{MAX_HISTORY_LEN} (2^20), not {self.amax_history_len}"
            )
        if not 0 <= self.margin <= 100:
            raise QmlirError("option 'margin' of recipe 'fp8-delayed' must be in 0..100")
        factor = self.amax_outlier_factor
        if not (factor == 0.0 or (1.0 <= factor and math.isfinite(factor))):
            raise QmlirError(
                "option 'amax_outlier_factor' of recipe 'fp8-delayed' must be 0 (off) or a "
                f"finite number >= 1, not {factor:g}"
            )

    def _update_variant(self, fmt: FloatFormat) -> str:
        parts: list[object] = [self.amax_compute_algo.value, f"m{self.margin}", fmt.name]
        if self.skip_non_finite_amax:
            parts.append("skipnf")
        if self.amax_outlier_factor:
            parts.append("out" + struct.pack(">d", self.amax_outlier_factor).hex())
        return variant_suffix(*parts, self.amax_history_len)

    def element_format(self, role: Role) -> FloatFormat:
        if role is Role.GRADIENT:
            return self.fp8_format.gradient_format()
        return self.fp8_format.forward_format()

    def has_scaling_state(self, role: Role) -> bool:
        """An amax history and a scale per quantized activation, and in a training step per
        parameter and gradient too (TE's histories for x, W and dY); constant weights: none."""
        return role is not Role.WEIGHT

    @property
    def weight_recipe(self) -> Fp8CurrentScaling:
        """Weights are constants: current scaling, once, at compile time."""
        return Fp8CurrentScaling(fp8_format=self.fp8_format)

    def emit_swizzle(
        self, ops: NamedOpBuilder, q: QuantizedOperand, layer: str | None = None
    ) -> ir.Value:
        return self.weight_recipe.emit_swizzle(ops, q, layer)

    def emit_scaled_matmul(
        self,
        ops: NamedOpBuilder,
        a: QuantizedOperand,
        b: QuantizedOperand,
        b_transposed: bool,
        out: TensorInfo,
        layer: str | None = None,
    ) -> ir.Value:
        return self.weight_recipe.emit_scaled_matmul(ops, a, b, b_transposed, out, layer)

    def emit_quantize(
        self,
        ops: NamedOpBuilder,
        x: ir.Value,
        role: Role,
        usage: Usage = Usage.ROWWISE,
        layer: str | None = None,
    ) -> QuantizedOperand:
        if not self.has_scaling_state(role):
            return self.weight_recipe.emit_quantize(ops, x, role, usage, layer)
        info = tensor_info(x.type, dynamic=True)
        assert info is not None and info.dtype == "f32", x.type
        fmt = self.element_format(role)
        scalar = builtin_tensor_type((), "f32")
        history_type = builtin_tensor_type((self.amax_history_len,), "f32")
        # an activation's state is its layer's; a training step's parameters and gradients
        # are named for their role too (``l1.parameter``, ``l1.gradient``)
        base_key = _symbol_safe(layer or "matmul")
        if role is not Role.ACTIVATION:
            base_key += f".{role.value}"
        # the n-th quantize of this layer's activation in this function: its n-th state,
        # which another function's n-th shares (a generator's @decode steps and its prefill
        # advance one history, as TE's module does over its forwards)
        n = ops.occurrence(base_key)
        key = base_key if n == 0 else f"{base_key}_{n}"
        base = f"qmlir.state.{key}"
        shared = ops.global_attrs(base + ".scale")
        if shared is not None and ir.StringAttr(shared["layer"]).value != (layer or ""):
            shared, n = None, 1  # the name is another layer's: a new one after the taken ones
            while ops.symbol_taken(f"qmlir.state.{base_key}_{n}.scale"):
                n += 1
            key = f"{base_key}_{n}"
            base = f"qmlir.state.{key}"
        history_name, scale_name = base + ".amax_history", base + ".scale"
        if shared is None:
            ops.add_global(
                history_name,
                ir.DenseElementsAttr.get(np.zeros(self.amax_history_len, np.float32)),
                {
                    "key": str_attr(key),
                    "layer": str_attr(layer or ""),
                    "kind": str_attr("amax_history"),
                },
            )
            ops.add_global(
                scale_name,
                ir.DenseElementsAttr.get(np.array(1.0, np.float32), shape=[]),
                {"key": str_attr(key), "layer": str_attr(layer or ""), "kind": str_attr("scale")},
            )
        scale = load_global(scale_name, scalar)
        history = load_global(history_name, history_type)
        (amax,) = ops.call(Amax(), variant_suffix(info.shape), [x], [scalar], layer=layer)
        q = emit_per_tensor_cast(ops, x, scale, fmt, layer)
        update = AmaxHistoryUpdate(
            algo=self.amax_compute_algo,
            margin=self.margin,
            fp8_max=fmt.max_finite,
            skip_non_finite=self.skip_non_finite_amax,
            outlier_factor=self.amax_outlier_factor,
        )
        new_history, new_scale = ops.call(
            update,
            self._update_variant(fmt),
            [history, amax, scale],
            [history_type, scalar],
            layer=layer,
        )
        store_global(history_name, new_history)
        store_global(scale_name, new_scale)
        return q


def _symbol_safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in text)
