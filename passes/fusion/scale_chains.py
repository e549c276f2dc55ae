"""Where a scaled GEMM's block scales come from: followed back through ``swizzle`` and
``quantize`` to the ``compute_scale`` that made them, to prove them powers of two (``qmlir.pow2``)
and so every decoded operand value exact in bf16 (``gemm-operands``) and a one-row GEMM's
products exact when its sums are multiplied by them (``decode-gemv``). The proof reads the
chains before ``fold-constant-quantize`` turns a weight's into literals."""

from __future__ import annotations

from iree.compiler import ir

from passes.fusion.calls import NamedCalls, producer
from passes.ir.dialect import NamedOp, OpKind, ScaleFormat, Scaling
from passes.ir.named_ops import callee_name


def _pow2_scales(calls: NamedCalls, value: ir.Value) -> bool:
    """Whether ``value`` (a GEMM's block scales) comes from a ``compute_scale`` that rounds to
    powers of two, through the ``swizzle`` and ``quantize`` (its scale_inv result) between."""
    owner = producer(value)
    if owner is None or owner.name != "func.call":  # a block argument: not provable
        return False
    if calls.of_kind(owner, OpKind.SWIZZLE) is not None:
        return _pow2_scales(calls, owner.operands[0])
    if calls.of_kind(owner, OpKind.QUANTIZE) is not None:
        return _pow2_scales(calls, owner.operands[1])
    rule = calls.of_kind(owner, OpKind.COMPUTE_SCALE)
    return rule is not None and bool(rule.attrs.pow2)


def exact_in_bf16(op: NamedOp, calls: NamedCalls, sites: list[ir.Operation]) -> bool:
    """Whether every decoded operand value of the GEMM ``op`` (called at ``sites``) is exact in
    bf16."""
    if op.attrs.scaling is not Scaling.BLOCK:
        return True  # per-tensor FP8 codes
    if op.attrs.scale_format in (ScaleFormat.E8M0, ScaleFormat.NVFP4):
        return True  # FP8 x 2^k; E2M1 x E4M3
    return bool(sites) and all(
        _pow2_scales(calls, call.operands[1]) and _pow2_scales(calls, call.operands[3])
        for call in sites
    )


def scaled_matmul_sites(module: ir.Module, calls: NamedCalls) -> dict[str, list[ir.Operation]]:
    """Each ``scaled_matmul`` declaration's calls, by the declaration's name."""
    sites: dict[str, list[ir.Operation]] = {}

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call" and calls.of_kind(op, OpKind.SCALED_MATMUL) is not None:
            sites.setdefault(callee_name(op), []).append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    return sites
