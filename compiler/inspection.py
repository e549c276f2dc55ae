"""What an artifact carries: weight bytes by format (computed at compile time), and a summary.

After ``fold-constant-quantize`` every weight is a constant: codes and scales feeding a
``scaled_matmul`` are attributed to their format from the call's attributes; other constants
(biases, unquantized weights) count by element type.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from iree.compiler import ir

from passes.ir_types import tensor_info
from passes.named_ops import OP_ATTR, callee_name
from passes.torch_ops import defining_op

_BITS = {"i8": 8, "f32": 32, "bf16": 16, "f16": 16, "f64": 64, "i64": 64, "i32": 32, "i1": 8}
_MIN_BYTES = 64  # scalars and tiny constants (shapes, 0-d scales of activations) are not weights


def _nbytes(t: ir.Type) -> int:
    info = tensor_info(t)
    if info is None:
        return 0
    count = 1
    for d in info.shape:
        count *= d
    return count * _BITS.get(info.dtype, 32) // 8


def _roles(decl: ir.Operation) -> list[str]:
    """What each operand of a scaled_matmul declaration holds."""
    attrs = decl.attributes
    a, b = (ir.StringAttr(attrs[f"qmlir.{k}_format"]).value for k in ("a", "b"))
    scaling = ir.StringAttr(attrs["qmlir.scaling"]).value
    scale = (
        "f32 scale_inv"
        if scaling == "per_tensor"
        else {
            "fp32": "f32 block scale_inv",
            "e8m0": "e8m0 block scales",
            "nvfp4": "e4m3 block scales",
        }[ir.StringAttr(attrs["qmlir.scale_format"]).value]
    )
    data = {"e4m3": "e4m3 data", "e2m1": "e2m1 data (packed)"}
    if scaling == "block" and ir.StringAttr(attrs["qmlir.scale_format"]).value == "nvfp4":
        return [data[a], scale, "f32 global scale", data[b], scale, "f32 global scale"]
    return [data[a], scale, data[b], scale]


def weight_bytes(module: ir.Module) -> dict[str, int]:
    """Bytes of constant data in the module, by format (largest first)."""
    decls = {
        ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
        for op in module.body.operations
        if OP_ATTR in op.operation.attributes
        and ir.StringAttr(op.operation.attributes[OP_ATTR]).value == "scaled_matmul"
    }
    counted: dict[Any, str] = {}
    totals: Counter[str] = Counter()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call" and callee_name(op) in decls:
            for value, role in zip(op.operands, _roles(decls[callee_name(op)]), strict=True):
                source = defining_op(value)
                if source is not None and source.name == "arith.constant":
                    counted[source] = role
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)

    def tally(op: ir.Operation) -> ir.WalkResult:
        if op.name not in ("arith.constant", "torch.vtensor.literal"):
            return ir.WalkResult.ADVANCE
        size = _nbytes(op.results[0].type)
        if op in counted:
            totals[counted[op]] += size
        elif size >= _MIN_BYTES:
            info = tensor_info(op.results[0].type)
            totals[f"{info.dtype if info else '?'} (not quantized)"] += size
        return ir.WalkResult.ADVANCE

    module.operation.walk(tally)
    return dict(totals.most_common())
