"""Pass ``lower-named-ops``: gives every named-op declaration its body for the target.

Expects declarations from the recipe pass (``func.func private @qmlir.* attributes {qmlir.op}``);
leaves definitions, same names, types and attributes, so calls are untouched and IREE inlines
them. ``llvm-cpu``: plain linalg/arith from ``templates/cpu/``. ``cuda`` (``cuda-arch`` sm_89,
sm_90 or sm_100): the quantize core and the GEMMs become ``hal.dispatch.extern`` calls into the
hand-written kernels of ``runtime_kernels/`` (``templates/cuda/``, PTX embedded); every other
op keeps its ``templates/cpu/`` body, which IREE compiles for cuda as well (without the
``compilation_info`` tiling some of them carry for llvm-cpu, see ``cpu_tiling.py``).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.cpu_lowering import lower_text
from passes.cpu_tiling import strip_cpu_tiling
from passes.cuda_targets import DEFAULT_CUDA_ARCH, check_cuda_arch
from passes.errors import QmlirError
from passes.named_ops import is_named_op_decl
from passes.pass_registry import ModulePass, register_pass

TARGETS = ("llvm-cpu", "cuda")


def lower_declarations(module: ir.Module, decls: list[ir.Operation], cuda_arch: str = "") -> None:
    """Replaces each declaration in ``module`` by its lowered definition, in place.

    ``cuda_arch`` empty: the llvm-cpu lowering; else the cuda lowering for that architecture.
    """
    if not decls:
        return
    text = "\n".join(_lower_one(d, cuda_arch) for d in decls)
    with module.context:
        lowered = ir.Module.parse(text)  # kept alive while its ops move (see TOOLCHAIN.md)
        definitions = list(lowered.body.operations)
        if cuda_arch:  # the llvm-cpu templates' tiling means nothing to the cuda backend
            for definition in definitions:
                strip_cpu_tiling(definition.operation)
        for decl, definition in zip(decls, definitions, strict=True):
            definition.operation.move_before(decl)
            decl.erase()
        del lowered


def _lower_one(decl: ir.Operation, cuda_arch: str) -> str:
    if cuda_arch:
        from passes.cuda_lowering import lower_text_cuda

        text = lower_text_cuda(decl, cuda_arch)
        if text is not None:
            return text
    return lower_text(decl)


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
    cuda_arch: str = DEFAULT_CUDA_ARCH

    def apply(self, module: ir.Module) -> None:
        if self.target not in TARGETS:
            raise QmlirError(
                f"named ops have no lowering for target '{self.target}' "
                f"(available: {', '.join(TARGETS)})"
            )
        arch = check_cuda_arch(self.cuda_arch) if self.target == "cuda" else ""
        lower_declarations(module, named_op_declarations(module), arch)
