"""qmlir's passes over IREE's MLIR bindings: the recipe pass, weight folding, lowering."""

from passes import fold_constant_quantize, lower_named_ops, quantize_matmuls  # noqa: F401 (register)
from passes.errors import QmlirError
from passes.pass_registry import PASSES, ModulePass, parse_pass

__all__ = ["PASSES", "ModulePass", "QmlirError", "parse_pass"]
