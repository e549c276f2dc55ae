"""Runs named ops on the host CPU: their llvm-cpu lowering, compiled by IREE, called from Python.

Used to quantize weights at compile time (``fold-constant-quantize``) and by
``compiler.quantize``, so both run exactly the IR a compiled model runs.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

import numpy as np
from iree import compiler as iree_compiler
from iree import runtime as iree_runtime
from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.host.call import call, host_copies
from passes.host.compile_cache import cached_compile
from passes.host.flags import HOST_CPU_FLAGS, first_error_line
from passes.ir.named_ops import symbol_name
from passes.lowering.cpu.lower import lower_cpu

_CACHE: dict[str, iree_runtime.SystemContext] = {}


def compile_host_module(text: str) -> iree_runtime.SystemContext:
    """Compiles MLIR text for the host CPU and loads it (cached by text: a module with state
    keeps it across calls; :func:`load_host_module` gives a fresh one)."""
    key = hashlib.sha256(text.encode()).hexdigest()
    ctx = _CACHE.get(key)
    if ctx is None:
        ctx = _CACHE[key] = load_host_module(compile_host_vmfb(text))
    return ctx


@functools.lru_cache(maxsize=64)
def compile_host_vmfb(text: str) -> bytes:
    """MLIR text compiled for the host CPU (cached by text)."""
    try:
        return cached_compile(
            [text, *HOST_CPU_FLAGS],
            lambda: iree_compiler.compile_str(
                text, input_type="auto", extra_args=list(HOST_CPU_FLAGS)
            ),
        )
    except iree_compiler.CompilerToolError as e:
        raise QmlirError(
            f"IREE failed to compile the named-op evaluator: {first_error_line(str(e))}"
        ) from e


def load_host_module(vmfb: bytes) -> iree_runtime.SystemContext:
    """A new context on the local-task driver holding ``vmfb`` (its globals at their initial
    values)."""
    ctx = iree_runtime.SystemContext(config=iree_runtime.Config("local-task"))
    ctx.add_vm_module(iree_runtime.VmModule.copy_buffer(ctx.instance, vmfb))
    return ctx


class NamedOpEvaluator:
    """One compiled module holding the public CPU definition of each given declaration."""

    def __init__(self, decls: Sequence[ir.Operation]) -> None:
        bodies = [lower_cpu(d).replace("func.func private @", "func.func @", 1) for d in decls]
        self._ctx = compile_host_module("module {\n" + "\n".join(bodies) + "\n}\n")
        self._names = {symbol_name(d) for d in decls}

    def __call__(self, name: str, *args: np.ndarray) -> list[np.ndarray]:
        assert name in self._names, name
        return host_copies(call(self._ctx.modules.module[name], *args))
