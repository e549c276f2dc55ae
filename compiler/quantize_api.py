"""``compiler.quantize``: one tensor through a recipe's compiled quantize core.

It builds a module whose body is exactly what the recipe pass emits for an activation
(``recipe.emit_quantize``), lowers it with the same CPU lowering, compiles and runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from iree.compiler import ir
from iree.compiler.dialects import func

from compiler.runtime import to_numpy
from passes.errors import QmlirError
from passes.evaluate import compile_host_module
from passes.ir_types import builtin_tensor_type
from passes.lower_named_ops import lower_declarations, named_op_declarations
from passes.named_ops import NamedOpBuilder
from passes.recipes import Recipe, get_recipe

ENTRY = "quantize"


@dataclass(frozen=True)
class QuantizedTensor:
    """``data``: uint8 element codes (same shape as the input); ``scale``: float32 ``scale_inv``."""

    data: np.ndarray
    scale: np.ndarray
    recipe: dict[str, Any]

    def dequantize(self) -> np.ndarray:
        values = self.data.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
        return values * self.scale


def quantize(x: Any, recipe: str | Recipe = "fp8-current", **options: Any) -> QuantizedTensor:
    chosen = recipe if isinstance(recipe, Recipe) else get_recipe(recipe, options)
    if not hasattr(chosen, "emit_quantize"):
        raise QmlirError(f"recipe '{chosen.name}' does not quantize tensors")
    array = _as_f32(to_numpy(x))
    shape = array.shape if array.ndim else (1,)
    ctx = compile_host_module(quantize_module_text(chosen, shape))
    data, scale_inv = ctx.modules.module[ENTRY](array.reshape(shape))
    codes = np.asarray(data.to_host()).view(np.uint8).reshape(array.shape)
    return QuantizedTensor(codes, np.asarray(scale_inv.to_host(), np.float32), chosen.to_dict())


def quantize_module_text(recipe: Recipe, shape: tuple[int, ...]) -> str:
    """The lowered module ``@quantize(x: f32) -> (codes, scale_inv)`` for ``recipe``."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        x_type = builtin_tensor_type(shape, "f32")
        with ir.InsertionPoint(module.body):
            entry = func.FuncOp(ENTRY, ir.FunctionType.get([x_type], []))
        block = entry.add_entry_block()
        with ir.InsertionPoint(block):
            q = recipe.emit_quantize(NamedOpBuilder(module), block.arguments[0])  # type: ignore[attr-defined]
            func.ReturnOp([q.data, q.scale_inv])
        entry.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([x_type], [q.data.type, q.scale_inv.type])
        )
        lower_declarations(module, named_op_declarations(module))
        return str(module)


def _as_f32(array: np.ndarray) -> np.ndarray:
    if array.dtype in (np.float32, np.float16, np.dtype(ml_dtypes.bfloat16)):
        return np.ascontiguousarray(array.astype(np.float32))
    raise QmlirError(f"quantize takes a float32, float16 or bfloat16 tensor, not {array.dtype}")
