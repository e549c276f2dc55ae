"""Runs named ops on the host CPU: their llvm-cpu lowering, compiled by IREE, called from Python.

Used to quantize weights at compile time (``fold-constant-quantize``) and by
``compiler.quantize``, so both run exactly the IR a compiled model runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from iree import compiler as iree_compiler
from iree import runtime as iree_runtime
from iree.compiler import ir

from passes.cpu_lowering import lower_text
from passes.errors import QmlirError
from passes.host_call import call, host_copies
from passes.named_ops import symbol_name

# Flags for the llvm-cpu target on the host CPU (TOOLCHAIN.md). bf16 constants need the inline
# limit at 0 to verify on llvm-cpu. Without const-eval, IREE decodes the FP8 weight constants once
# in an initializer at module load (the artifact keeps FP8 bytes; measured in benchmarks/): with
# it, IREE's compile-time evaluation of that decode made every call 2-3x slower on the MLP.
HOST_CPU_FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
    "--iree-flow-inline-constants-max-byte-length=0",
    "--iree-opt-const-eval=false",
    # quantize's scale_inv divides in f64 to keep f32-subnormal results exact (see the template).
    "--iree-input-demote-f64-to-f32=false",
)

_CACHE: dict[str, iree_runtime.SystemContext] = {}


def compile_host_module(text: str) -> iree_runtime.SystemContext:
    """Compiles MLIR text for the host CPU and loads it (cached by text)."""
    key = hashlib.sha256(text.encode()).hexdigest()
    ctx = _CACHE.get(key)
    if ctx is not None:
        return ctx
    try:
        vmfb = iree_compiler.compile_str(text, input_type="auto", extra_args=list(HOST_CPU_FLAGS))
    except iree_compiler.CompilerToolError as e:
        raise QmlirError(
            f"IREE failed to compile the named-op evaluator: {first_error_line(str(e))}"
        ) from e
    ctx = iree_runtime.SystemContext(config=iree_runtime.Config("local-task"))
    ctx.add_vm_module(iree_runtime.VmModule.copy_buffer(ctx.instance, vmfb))
    _CACHE[key] = ctx
    return ctx


def first_error_line(text: str) -> str:
    """The first ``error:`` line of an IREE tool's output, without its location prefix."""
    for line in text.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0].strip() if lines else "no message"


class NamedOpEvaluator:
    """One compiled module holding the public CPU definition of each given declaration."""

    def __init__(self, decls: Sequence[ir.Operation]) -> None:
        bodies = [lower_text(d).replace("func.func private @", "func.func @", 1) for d in decls]
        self._ctx = compile_host_module("module {\n" + "\n".join(bodies) + "\n}\n")
        self._names = {symbol_name(d) for d in decls}

    def __call__(self, name: str, *args: np.ndarray) -> list[np.ndarray]:
        assert name in self._names, name
        return host_copies(call(self._ctx.modules.module[name], *args))
