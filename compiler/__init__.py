"""qmlir: compile PyTorch models so their matmuls run in low precision, ahead of time.

import compiler
art = compiler.compile(model, (x,), recipe="fp8-current")
y = art(x); art.save("model.vmfb"); compiler.load("model.vmfb")
q = compiler.quantize(x, recipe="fp8-current")   # q.data (uint8 codes), q.scale (scale_inv)
r = compiler.report(model, (x,), recipe="nvfp4")  # per-layer SQNR; r.suggest_excludes(20.0)
"""

from compiler.api import compile, report
from compiler.block_scale import block_scale_dequantize, block_scale_quantize
from compiler.quantize_api import QuantizedTensor, quantize
from compiler.runtime import CompiledModule, load
from compiler.version import __version__
from passes.errors import QmlirError

__all__ = [
    "CompiledModule",
    "QmlirError",
    "QuantizedTensor",
    "__version__",
    "block_scale_dequantize",
    "block_scale_quantize",
    "compile",
    "load",
    "quantize",
    "report",
]
