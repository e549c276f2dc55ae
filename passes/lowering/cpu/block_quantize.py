"""llvm-cpu lowerings of the block FP8 casts: FP32 block scales (fp8-block: ``x * scale``) and
E8M0 scales (MXFP8: ``x * 2^(127 - e)``). NVFP4's cast is in ``nvfp4.py``, cuDNN's divide in
``cudnn.py``."""

from __future__ import annotations

from passes.ir.attributes import NamedOp
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import block_params, definition, row_signature


def lower_quantize_fp32_scales(op: NamedOp) -> str:
    (x, scale), _, rows = row_signature(op)
    return definition(
        "quantize_block_fp32.mlir",
        block_params(op, x, scale, rows),
        encode=snippets.encode(op.format()),
        reciprocal=snippets.reciprocal(),
    )


def lower_quantize_e8m0_scales(op: NamedOp) -> str:
    (x, scale), _, rows = row_signature(op)
    fmt = op.format()
    return definition(
        "quantize_block_e8m0.mlir",
        block_params(op, x, scale, rows),
        encode=snippets.encode(fmt, x="%x_in", s="%mult"),
        nan_code=fmt.nan_code,
    )
