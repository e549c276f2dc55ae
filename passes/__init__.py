"""qmlir's passes over IREE's MLIR bindings: the recipe pass, weight folding, lowering."""

from passes import (  # noqa: F401 (registers the passes)
    expose_scaling_state,
    fold_constant_quantize,
    fuse_quantize_core,
    lower_named_ops,
    quantize_matmuls,
)
from passes.errors import QmlirError
from passes.pass_registry import PASSES, ModulePass, parse_pass

__all__ = ["PASSES", "ModulePass", "QmlirError", "parse_pass"]
