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
from passes.base.target import DEFAULT_CUDA_ARCH, DEVICES, Target
from passes.lowering.declarations import lower_declarations, named_op_declarations


@register_pass
@dataclasses.dataclass(frozen=True)
class LowerNamedOps(ModulePass):
    name = "lower-named-ops"

    target: Target = Target()

    @classmethod
    def from_options(cls, options: dict[str, str]) -> LowerNamedOps:
        """``target=llvm-cpu`` (default) or ``target=cuda cuda-arch=ARCH`` (default sm_90)."""
        opts = {k.replace("-", "_"): v for k, v in options.items()}
        device = opts.pop("target", "llvm-cpu")
        arch = opts.pop("cuda_arch", DEFAULT_CUDA_ARCH)
        if opts:
            raise QmlirError(f"pass '{cls.name}' has no option '{next(iter(options))}'")
        if device not in DEVICES:
            known = ", ".join(DEVICES)
            raise QmlirError(
                f"named ops have no lowering for target '{device}' (available: {known})"
            )
        return cls(Target.for_cuda(arch) if device == "cuda" else Target())

    def options(self) -> dict[str, str]:
        if not self.target.is_cuda:
            return {}
        return {"target": "cuda", "cuda-arch": str(self.target.cuda_arch)}

    def apply(self, module: ir.Module) -> None:
        lower_declarations(module, named_op_declarations(module), self.target.cuda_arch)
