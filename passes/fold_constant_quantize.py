"""Pass ``fold-constant-quantize``: quantizes weights at compile time.

Expects the recipe pass's output. Every named-op call whose operands are all constants (a
``torch.vtensor.literal`` through ``convert_element_type``/``to_builtin_tensor``, or an earlier
folded result) is evaluated by compiling and running that op's own llvm-cpu lowering, and its
results become ``arith.constant``s: FP8 codes as ``i8``, scales as ``f32``. The f32 weight and its
chain are then dead and erased, so the artifact carries FP8 bytes, not f32.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.host.evaluate import NamedOpEvaluator
from passes.ir.constants import constant_value, erase_dead, make_constant
from passes.ir.dialect import decode_kind
from passes.ir.named_ops import (
    callee_name,
    erase_uncalled_declarations,
    is_named_op_decl,
    symbol_name,
)


def _is_named_call(op: ir.Operation, decls: dict[str, ir.Operation]) -> bool:
    return op.name == "func.call" and callee_name(op) in decls


@register_pass
@dataclasses.dataclass(frozen=True)
class FoldConstantQuantize(ModulePass):
    name = "fold-constant-quantize"

    def apply(self, module: ir.Module) -> None:
        decls = {
            symbol_name(op.operation): op.operation
            for op in module.body.operations
            if is_named_op_decl(op.operation)
        }
        calls: list[ir.Operation] = []

        def collect(op: ir.Operation) -> ir.WalkResult:
            if _is_named_call(op, decls):
                calls.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(collect)
        known: dict[ir.Value, np.ndarray] = {}
        foldable: list[tuple[ir.Operation, list[np.ndarray]]] = []
        for call in calls:
            if not decode_kind(decls[callee_name(call)]).pure:
                continue
            args = [constant_value(v, known) for v in call.operands]
            if any(a is None for a in args):
                continue
            foldable.append((call, args))  # type: ignore[arg-type]
            for r in call.results:
                known[r] = np.empty(0)  # placeholder: marks the result constant for later calls
        if not foldable:
            return
        evaluator = NamedOpEvaluator(
            [decls[n] for n in dict.fromkeys(callee_name(c) for c, _ in foldable)]
        )
        for call, _ in foldable:
            args = [known[v] if v in known else constant_value(v, known) for v in call.operands]
            outputs = evaluator(callee_name(call), *args)
            with ir.InsertionPoint(call), call.location:
                for result, array in zip(call.results, outputs, strict=True):
                    const = make_constant(array, result.type)
                    known[const] = array
                    result.replace_all_uses_with(const)
                    known[result] = array
        for call, _ in foldable:
            call.erase()
        erase_dead(module)
        erase_uncalled_declarations(module, set(decls))
