"""Pass ``fuse-quantize-core`` (cuda): one ``fused_quantize`` per quantized activation.

Expects the recipe pass's output after ``fold-constant-quantize`` (only activations still
quantize at run time). Rewrites each chain the hand-written kernels do in one pass over x::

    amax(x){block} → compute_scale → quantize(x, scale) → swizzle(compact scales)

(NVFP4: the block ``compute_scale`` also takes the global ``compute_scale``'s encode scale, and
``quantize`` its decode scale) into ``fused_quantize(x [, global_amax]) → (data, scales)``, whose
declaration carries the attributes of the ops it replaces, so the IR still reads as named ops.
A columnwise chain (blocks down dim 0 and a transposed swizzle: a ``[K, N]`` B operand, fp8-block
1D and mxfp8) fuses too, onto the combined rowwise + columnwise kernel: with the rowwise chain of
the same x into one op, ``→ (data_row, scales_row, data_col, scales_col)``
(``outputs = "rowwise+columnwise"``), or alone (``outputs = "columnwise"``; the kernel's rowwise
outputs are dropped). Chains of other shapes (torchao order, a compact scale used elsewhere,
NVFP4 columnwise) stay as they are and take the per-op lowering.

fp8-delayed casts with a stored scale and records the same x's amax for the next call::

    quantize(x, scale){per_tensor}, amax(x)  →  fused_quantize(x, scale) → (data, scale_inv, amax)

(one read of x: the kernel casts while it reduces). fp8-current's ``quantize`` takes a scale
computed from that amax, so it does not match (the scale must be defined before the amax).

NVFP4 (TE order): once the fused kernel derives the global encode scale from the amax itself,
``compute_scale.nvfp4_global(amax) → (S_enc, S_dec)`` has only S_dec left in use and becomes
``compute_scale.nvfp4_global_decode(amax) → S_dec`` (one thread on cuda). That rule exists only
after this pass, which only the cuda pipeline runs.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls, layer_of
from passes.fusion.chains import fuse_chains, match_chain, pair_up
from passes.fusion.delayed import DelayedPair, fuse_delayed, match_delayed
from passes.ir.dialect import ComputeScale, OpKind, ScaleRule, decode_kind
from passes.ir.named_ops import NamedOpBuilder, callee_name, erase_uncalled_declarations
from passes.ir.walk import ops_where

_FUSED_KINDS = (OpKind.AMAX, OpKind.COMPUTE_SCALE, OpKind.QUANTIZE, OpKind.SWIZZLE)


def _te_global_scale(calls: NamedCalls, op: ir.Operation) -> bool:
    found = calls.of_kind(op, OpKind.COMPUTE_SCALE)
    return found is not None and found.attrs.rule is ScaleRule.NVFP4_GLOBAL


def _to_decode_scale(ops: NamedOpBuilder, g: ir.Operation) -> None:
    """``compute_scale.nvfp4_global(amax) → (S_enc, S_dec)`` with S_enc unused (the fused kernel
    derives it from the amax) becomes ``compute_scale.nvfp4_global_decode(amax) → S_dec``."""
    rule = ScaleRule.NVFP4_GLOBAL_DECODE
    with ir.InsertionPoint(g), g.location:
        (s_dec,) = ops.call(
            ComputeScale(rule=rule),
            rule.value,
            [g.operands[0]],
            [g.results[1].type],
            layer=layer_of(g),
        )
    g.results[1].replace_all_uses_with(s_dec)
    g.erase()


@register_pass
@dataclasses.dataclass(frozen=True)
class FuseQuantizeCore(ModulePass):
    name = "fuse-quantize-core"

    def apply(self, module: ir.Module) -> None:
        calls = NamedCalls(module)
        found = ops_where(module.operation, lambda op: op.name == "func.call")
        chains = [c for c in (match_chain(calls, op) for op in found) if c is not None]
        taken = {op for c in chains for op in c.ops}
        pairs: list[DelayedPair] = []
        for op in found:
            pair = None if op in taken else match_delayed(calls, op, taken)
            if pair is not None:
                pairs.append(pair)
                taken |= {pair.quantize, pair.amax}
        if not chains and not pairs:
            return
        ops = NamedOpBuilder(module)
        touched = {callee_name(op) for op in taken}
        te_globals = [op for op in found if op not in taken and _te_global_scale(calls, op)]
        with module.context:
            for row, col in pair_up(calls, chains):
                fuse_chains(calls, ops, row, col)
            for pair in pairs:
                fuse_delayed(calls, ops, pair)
            for op in te_globals:
                if not list(op.results[0].uses):  # S_enc's readers were fused away
                    touched.add(callee_name(op))
                    _to_decode_scale(ops, op)
        erase_uncalled_declarations(
            module, {n for n in touched if decode_kind(calls.decls[n]) in _FUSED_KINDS}
        )
