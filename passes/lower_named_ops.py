"""Pass ``lower-named-ops``: gives every named-op declaration its body for the target.

Expects declarations from the recipe pass (``func.func private @qmlir.* attributes {qmlir.op}``);
leaves definitions built from ``templates/<target>/`` (plain linalg/arith on llvm-cpu), same
names, types and attributes, so calls are untouched and IREE inlines them.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.cpu_lowering import lower_text
from passes.errors import QmlirError
from passes.named_ops import is_named_op_decl
from passes.pass_registry import ModulePass, register_pass

TARGETS = ("llvm-cpu",)


def lower_declarations(module: ir.Module, decls: list[ir.Operation]) -> None:
    """Replaces each declaration in ``module`` by its lowered definition, in place."""
    if not decls:
        return
    text = "\n".join(lower_text(d) for d in decls)
    with module.context:
        lowered = ir.Module.parse(text)  # kept alive while its ops move (see TOOLCHAIN.md)
        definitions = list(lowered.body.operations)
        for decl, definition in zip(decls, definitions, strict=True):
            definition.operation.move_before(decl)
            decl.erase()
        del lowered


def named_op_declarations(module: ir.Module) -> list[ir.Operation]:
    return [
        op.operation
        for op in module.body.operations
        if is_named_op_decl(op.operation) and len(op.operation.regions[0].blocks) == 0
    ]


@register_pass
@dataclasses.dataclass(frozen=True)
class LowerNamedOps(ModulePass):
    name = "lower-named-ops"

    target: str = "llvm-cpu"

    def apply(self, module: ir.Module) -> None:
        if self.target not in TARGETS:
            raise QmlirError(
                f"named ops have no lowering for target '{self.target}' "
                f"(available: {', '.join(TARGETS)})"
            )
        lower_declarations(module, named_op_declarations(module))
