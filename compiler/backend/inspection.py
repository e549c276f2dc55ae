"""What an artifact carries: weight bytes by format (computed at compile time), and a summary.

After ``fold-constant-quantize`` every weight is a constant, or, with external weights
(``externalize-weights``), a ``util.global`` read from the parameter file: codes and scales
feeding a ``scaled_matmul`` are attributed to their format from the call's attributes; other
constants and parameters (biases, unquantized weights) count by element type.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from iree.compiler import ir

from passes.ir.dialect import NamedOp, OpKind, ScaleFormat, Scaling, decode_kind
from passes.ir.named_ops import callee_name, is_named_op_decl, symbol_name
from passes.ir.torch_ops import defining_op
from passes.ir.types import tensor_info

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


_BLOCK_SCALES = {
    ScaleFormat.FP32: "f32 block scale_inv",
    ScaleFormat.E8M0: "e8m0 block scales",
    ScaleFormat.NVFP4: "e4m3 block scales",
}


def _roles(op: NamedOp) -> list[str]:
    """What each operand of a scaled_matmul declaration holds."""
    a, b = op.attrs.a_format.name, op.attrs.b_format.name
    block = op.attrs.scaling is Scaling.BLOCK
    scale = _BLOCK_SCALES[op.attrs.scale_format] if block else "f32 scale_inv"
    data = {"e4m3": "e4m3 data", "e2m1": "e2m1 data (packed)"}
    if block and op.attrs.scale_format is ScaleFormat.NVFP4:
        return [data[a], scale, "f32 global scale", data[b], scale, "f32 global scale"]
    return [data[a], scale, data[b], scale]


def weight_bytes(module: ir.Module) -> dict[str, int]:
    """Bytes of constant data in the module, by format (largest first)."""
    decls = {
        symbol_name(op.operation): NamedOp(op.operation)
        for op in module.body.operations
        if is_named_op_decl(op.operation) and decode_kind(op.operation) is OpKind.SCALED_MATMUL
    }
    counted: dict[Any, str] = {}
    totals: Counter[str] = Counter()
    parameters = {
        ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
        for op in module.body.operations
        if op.operation.name == "util.global"
        and "initial_value" in op.operation.attributes
        and "flow.parameter.named" in str(op.operation.attributes["initial_value"])
    }

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call" and callee_name(op) in decls:
            for value, role in zip(op.operands, _roles(decls[callee_name(op)]), strict=True):
                source = defining_op(value)
                if source is not None and source.name == "arith.constant":
                    counted[source] = role
                elif source is not None and source.name == "util.global.load":
                    symbol = ir.FlatSymbolRefAttr(source.attributes["global"]).value
                    if symbol in parameters:
                        counted[parameters[symbol]] = role
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)

    def tally(op: ir.Operation) -> ir.WalkResult:
        if op.name == "util.global" and op in parameters.values():
            value_type = ir.TypeAttr(op.attributes["type"]).value
        elif op.name in ("arith.constant", "torch.vtensor.literal"):
            value_type = op.results[0].type
        else:
            return ir.WalkResult.ADVANCE
        size = _nbytes(value_type)
        if op in counted:
            totals[counted[op]] += size
        elif size >= _MIN_BYTES:
            info = tensor_info(value_type)
            totals[f"{info.dtype if info else '?'} (not quantized)"] += size
        return ir.WalkResult.ADVANCE

    module.operation.walk(tally)
    return dict(totals.most_common())
