"""Pass ``lower-named-ops``: gives every named-op declaration its body for the target.

Expects declarations from the recipe pass (``func.func private @qmlir.* attributes {qmlir.op}``);
leaves definitions, same names, types and attributes, so calls are untouched and IREE inlines
them. ``llvm-cpu``: plain linalg/arith from ``lowering/cpu/templates/``. ``cuda`` (``cuda-arch``
sm_89, sm_90 or sm_100): the quantize core and the GEMMs become ``hal.dispatch.extern`` calls into
the hand-written kernels of ``runtime_kernels/`` (``lowering/cuda/templates/``, PTX embedded);
every other op keeps its llvm-cpu body, which IREE compiles for cuda as well (without the
``compilation_info`` tiling some of them carry for llvm-cpu, see ``lowering/cpu/tiling.py``).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.host.flags import TARGETS
from passes.lowering.cuda.targets import DEFAULT_CUDA_ARCH, check_cuda_arch
from passes.lowering.declarations import lower_declarations, named_op_declarations


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
