"""``--cpu``: the LLVM CPU an llvm-cpu artifact is compiled for, resolved to its name and features.

``host`` is the compiling host's CPU (fastest here, tied to its instruction set); ``generic`` is
the architecture's baseline (x86-64: SSE2), runs on any host of the architecture; any LLVM CPU
name (``x86-64-v3``, ``znver4``, ``skylake-avx512``, ...) targets that CPU. IREE resolves the
name; a tiny module compiled to its executable sources shows what it resolved to (the metadata
records it, the runtime checks it before loading: ``passes/base/cpu_features.py``).
"""

from __future__ import annotations

import functools
import re

from iree import compiler as iree_compiler

from passes.base.cpu_features import enabled_features
from passes.base.errors import QmlirError
from passes.base.target import DEFAULT_CPU, Cpu
from passes.host.flags import cpu_flags, first_error_line

_PROBE = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }"
_TARGET = re.compile(
    r'hal\.executable\.target<"llvm-cpu", "embedded-elf-(?P<arch>[\w-]+)", '
    r'\{cpu = "(?P<cpu>[^"]*)", cpu_features = "(?P<features>[^"]*)"'
)


@functools.lru_cache(maxsize=16)
def resolve_cpu(cpu: str = DEFAULT_CPU) -> Cpu:
    """The :class:`Cpu` IREE resolves ``--cpu`` to; a one-line error for a CPU LLVM does not
    know."""
    if not cpu or any(c.isspace() or c == "," for c in cpu):
        raise QmlirError(f"bad --cpu '{cpu}' (host, generic or an LLVM CPU name)")
    try:
        text = iree_compiler.compile_str(
            _PROBE,
            target_backends=[],
            extra_args=[*cpu_flags(cpu), "--compile-to=executable-sources"],
            output_format=iree_compiler.OutputFormat.MLIR_TEXT,
        )
    except iree_compiler.CompilerToolError as e:
        message = str(e)
        if "not a recognized processor" in message or "Unknown CPU" in message:
            raise QmlirError(_unknown_cpu(cpu, message)) from None
        raise QmlirError(f"IREE cannot target --cpu '{cpu}': {first_error_line(message)}") from e
    found = _TARGET.search(text if isinstance(text, str) else text.decode())
    if found is None:
        raise QmlirError(f"internal: no llvm-cpu target for --cpu '{cpu}' in IREE's output")
    return Cpu(cpu, found["cpu"], found["arch"], tuple(enabled_features(found["features"])))


def _unknown_cpu(cpu: str, message: str) -> str:
    listed = re.search(r"List of accepted CPUs: (.*)", message)
    names = f" (LLVM knows: {listed[1].strip()})" if listed else ""
    return f"unknown --cpu '{cpu}'; use host, generic or an LLVM CPU name{names}"
