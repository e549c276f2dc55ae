"""qmlir: compile PyTorch models so their matmuls run in low precision, ahead of time.

import compiler
art = compiler.compile(model, (x,), recipe="fp8-current")
y = art(x); art.save("model.vmfb"); compiler.load("model.vmfb")
q = compiler.quantize(x, recipe="fp8-current")   # q.data (uint8 codes), q.scale (scale_inv)
compiler.export_checkpoint(hf_model, "out/", recipe="fp8-block")  # compressed-tensors folder
r = compiler.report(model, (x,), recipe="nvfp4")  # per-layer SQNR; r.suggest_excludes(20.0)
step = compiler.compile_training(model, (x, y), "fp8-current", optimizer="adamw", lr=1e-3)
loss = step(x, y)  # one step: forward, backward, update; step.parameters(), step.gradients()
gen = compiler.compile_generator("llama-folder/", recipe="fp8-current", max_seq_len=512)
ids = gen.generate(prompt_ids, max_new_tokens=64)  # prefill + decode, the KV cache in the module
compiler.retain_freed_memory(False)  # glibc's policy, not freed memory kept from the 1st CPU call

Loading and running an artifact (``load``, ``CompiledModule``) needs only the runtime:
``iree-base-runtime``, numpy and ml_dtypes. Compiling needs the ``compile`` extra (torch,
torch-mlir, ``iree-base-compiler``), which the names below import on first use; without it,
that first use raises ``MissingExtra`` (a ``QmlirError`` and an ``ImportError``) naming
``pip install 'qmlir[compile]'``.
"""

import importlib
from typing import TYPE_CHECKING, Any

from compiler import extras
from compiler.import_noise import quiet_known_import_noise
from compiler.version import __version__
from passes.base.errors import QmlirError

quiet_known_import_noise()  # before a model file (or the caller) builds a transformers model

if TYPE_CHECKING:
    from compiler.api.block_scale import block_scale_dequantize, block_scale_quantize
    from compiler.api.compile import (
        calibrate,
        compile,
        compile_generator,
        compile_training,
        report,
        search,
    )
    from compiler.export.compressed_tensors import export_checkpoint
    from compiler.pipeline.quantize import QuantizedTensor, quantize
    from compiler.runtime import CompiledModule, Generator, TrainingStep, load
    from compiler.runtime.host_memory import retain_freed_memory

# Names and the modules that define them, imported when first used: `import compiler;
# compiler.load(...)` loads neither torch nor iree.compiler, and `import compiler` alone (what
# the `qmlir` command starts with) loads nothing heavy before the CLI can catch a Ctrl-C.
_LAZY = {
    "CompiledModule": "compiler.runtime",
    "load": "compiler.runtime",
    "retain_freed_memory": "compiler.runtime.host_memory",
    "TrainingStep": "compiler.runtime",
    "Generator": "compiler.runtime",
    "compile_generator": "compiler.api.compile",
    "compile": "compiler.api.compile",
    "calibrate": "compiler.api.compile",
    "compile_training": "compiler.api.compile",
    "report": "compiler.api.compile",
    "search": "compiler.api.compile",
    "block_scale_quantize": "compiler.api.block_scale",
    "block_scale_dequantize": "compiler.api.block_scale",
    "quantize": "compiler.pipeline.quantize",
    "export_checkpoint": "compiler.export.compressed_tensors",
    "QuantizedTensor": "compiler.pipeline.quantize",
}
# What each of those modules needs of the compile extra (quantizing builds IR, without torch).
_NEEDS = {
    "compiler.api.compile": extras.COMPILE,
    "compiler.api.block_scale": extras.IR,
    "compiler.pipeline.quantize": extras.IR,
    "compiler.export.compressed_tensors": extras.COMPILE,
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'compiler' has no attribute '{name}'")
    extras.require(f"compiler.{name}", _NEEDS.get(module, ()))
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CompiledModule",
    "Generator",
    "QmlirError",
    "QuantizedTensor",
    "TrainingStep",
    "__version__",
    "block_scale_dequantize",
    "block_scale_quantize",
    "calibrate",
    "compile",
    "compile_generator",
    "compile_training",
    "export_checkpoint",
    "load",
    "quantize",
    "report",
    "retain_freed_memory",
    "search",
]
