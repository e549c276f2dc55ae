"""Pass ``kv-cache-codes``: an FP8 KV cache's quantize and dequantize as named ops.

A generator compiled with ``kv_cache="fp8"`` calls two torch custom ops
(``compiler/frontend/kv_codes.py``), which the importer leaves as ``torch.operator``s:

- ``qmlir.kv_quantize(x [..., D] f32) -> (codes [..., D] ui8, scales [..., ceil(D/32)] ui8)``
  becomes the ``mxfp8`` recipe's rowwise quantize of ``x`` flattened to ``[rows, D]`` (amax per
  1x32 block, E8M0 ``ceil`` scale, E4M3 cast; rows may be dynamic: the prompt's tokens);
- ``qmlir.kv_dequantize(codes, scales) -> f32`` becomes cuDNN's ``block_scale_dequantize``
  (E4M3, E8M0, 1x32 blocks) of the flattened cache (static: ``max_seq`` positions).

Runs before the recipe pass, so the named ops are declared and lowered with the recipe's.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.base.numbers import ceil_div
from passes.ir.dialect import BlockScaleDequantize, ScaleFormat
from passes.ir.formats import FORMATS
from passes.ir.named_ops import NamedOpBuilder, variant_suffix
from passes.ir.torch_ops import collapse_to_2d, expand_from_2d, from_builtin_as
from passes.ir.types import DYNAMIC, TensorInfo, tensor_info
from passes.ir.walk import ops_where
from passes.recipes.base import Role
from passes.recipes.mxfp8 import BLOCK, Mxfp8BlockScaling

QUANTIZE = "torch.qmlir.kv_quantize"
DEQUANTIZE = "torch.qmlir.kv_dequantize"


def _is_kv_op(op: ir.Operation) -> bool:
    return op.name == "torch.operator" and _name(op) in (QUANTIZE, DEQUANTIZE)


@register_pass
@dataclasses.dataclass(frozen=True)
class KvCacheCodes(ModulePass):
    name = "kv-cache-codes"

    def apply(self, module: ir.Module) -> None:
        found = ops_where(
            module.operation,
            lambda op: op.name == "torch.operator" and _name(op) in (QUANTIZE, DEQUANTIZE),
        )
        if not found:
            return
        ops = NamedOpBuilder(module)
        for op in found:
            with ir.InsertionPoint(op), op.location:
                if _name(op) == QUANTIZE:
                    results = _quantize(ops, op)
                else:
                    results = [_dequantize(ops, op)]
            for old, new in zip(op.results, results, strict=True):
                old.replace_all_uses_with(new)
            op.erase()


def _name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["name"]).value


def _builtin(value: ir.Value, dtype: str) -> tuple[ir.Value, TensorInfo]:
    """``value`` as a builtin tensor of ``dtype`` (``i8`` for the codes: signless)."""
    info = tensor_info(value.type, dynamic=True)
    if info is None or info.rank < 1 or info.shape[-1] == DYNAMIC:
        raise QmlirError(f"an FP8 KV cache needs a static head dim, not {value.type}")
    builtin = ir.Operation.create(
        "torch_c.to_builtin_tensor", results=[info.with_dtype(dtype).builtin()], operands=[value]
    ).result
    return builtin, info


def _quantize(ops: NamedOpBuilder, op: ir.Operation) -> list[ir.Value]:
    x, info = _builtin(op.operands[0], "f32")
    q = Mxfp8BlockScaling().emit_quantize(ops, collapse_to_2d(x), Role.ACTIVATION)
    codes = expand_from_2d(q.data, info.with_dtype("i8"), like=x)
    grid = TensorInfo((*info.shape[:-1], ceil_div(info.shape[-1], BLOCK)), "i8")
    scales = expand_from_2d(q.scale_inv, grid, like=x)
    return [
        from_builtin_as(codes, op.results[0].type),
        from_builtin_as(scales, op.results[1].type),
    ]


def _dequantize(ops: NamedOpBuilder, op: ir.Operation) -> ir.Value:
    codes, info = _builtin(op.operands[0], "i8")
    scales, _ = _builtin(op.operands[1], "i8")
    if not info.is_static:
        raise QmlirError(f"an FP8 KV cache's dequantize needs a static cache, not {info}")
    flat = collapse_to_2d(codes)
    flat_info = tensor_info(flat.type)
    assert flat_info is not None
    attrs = BlockScaleDequantize(
        format=FORMATS["e4m3"], scale_format=ScaleFormat.E8M0, block=(1, BLOCK)
    )
    (out,) = ops.call(
        attrs,
        variant_suffix("e4m3", f"block1x{BLOCK}", "e8m0", flat_info.shape),
        [flat, collapse_to_2d(scales)],
        [flat_info.with_dtype("f32").builtin()],
    )
    result = expand_from_2d(out, info.with_dtype("f32"), like=codes)
    return from_builtin_as(result, op.results[0].type)
