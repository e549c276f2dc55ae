"""A function's arguments and results moved into module globals: each held argument becomes a
``util.global.load``, each held result a ``util.global.store`` before the return. The passes
that keep state in a module (a training step's, a model's mutated buffers) share this."""

from __future__ import annotations

from collections.abc import Mapping

from iree.compiler import ir
from iree.compiler.dialects import func

from passes.ir import torch_ops
from passes.ir.named_ops import load_global, store_global
from passes.ir.types import tensor_info


def hold_in_globals(
    function: ir.Operation, loads: Mapping[int, str], stores: Mapping[int, str]
) -> None:
    """``function``'s arguments at the indices in ``loads`` become loads of the named globals,
    its results at the indices in ``stores`` stores into them (in index order, before the
    return); both are dropped from its signature. The globals hold builtin tensors of the
    values' static shapes."""
    block = function.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    results = list(ret.operands)
    with ir.InsertionPoint.at_block_begin(block), function.location:
        for index, symbol in sorted(loads.items()):
            arg = block.arguments[index]
            info = tensor_info(arg.type)
            assert info is not None, f"held argument {index} has no static tensor type"
            arg.replace_all_uses_with(
                torch_ops.from_builtin(load_global(symbol, info.builtin()), info)
            )
    kept = [value for i, value in enumerate(results) if i not in stores]
    with ir.InsertionPoint(ret), function.location:
        for index, symbol in sorted(stores.items()):
            store_global(symbol, torch_ops.to_builtin(results[index]))
        func.ReturnOp(kept)
    ret.erase()
    for index in sorted(loads, reverse=True):
        block.erase_argument(index)
    function.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], [v.type for v in kept])
    )
    for key in ("arg_attrs", "res_attrs"):
        if key in function.attributes:
            del function.attributes[key]
