"""Pass ``batched-contractions``: an f32 matmul of two activations with several batch dims
(attention's ``Q·Kᵀ`` and ``P·V`` on ``[batch, heads, L, E]``) becomes one ``linalg.generic``
contraction over all its dims, in place of torch-mlir's ``bmm`` over the batch dims flattened.

Runs on llvm-cpu artifacts with dynamic dims (``compiler/pipeline/core.py``). There, IREE data-tiles
every ``bmm`` from its global optimization (``passes/host/flags.py``), attention's too, and
fuses the scores' unpack with the scale and the mask, whose broadcast over the heads of the
flattened batch became index arithmetic: MiniLM's dynamic artifact spent 465 of its 724 ms in
that one dispatch on an AVX2 host (static: 172 ms in all; benchmarks/RESULTS.md). IREE does not
data-tile a contraction with more than one batch dim, and the scale and mask fuse into it as
plain broadcasts. The products and sums are the same f32 ones.
"""

from __future__ import annotations

import dataclasses
import string
from pathlib import Path

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.functions import add_function, function_names
from passes.ir.named_ops import variant_suffix
from passes.ir.types import DYNAMIC, TensorInfo, tensor_info
from passes.ir.walk import ops_where

TEMPLATE = string.Template(
    (Path(__file__).parent / "ir" / "templates" / "batched_contraction.mlir").read_text()
)
PREFIX = "qmlir.batched_contraction."


@register_pass
@dataclasses.dataclass(frozen=True)
class BatchedContractions(ModulePass):
    name = "batched-contractions"

    def apply(self, module: ir.Module) -> None:
        found = ops_where(module.operation, self._takes)
        names = function_names(module)
        for op in found:
            self._rewrite(op, module, names)

    @staticmethod
    def _takes(op: ir.Operation) -> bool:
        """A ``torch.aten.matmul`` of two f32 activations of one rank >= 4 with the same batch
        dims, none of them a weight (a literal: the recipe's). A dynamic batch dim is taken as
        the same size in both (``torch.export`` specializes a dim of size 1 and guards two dims
        it broadcasts together as equal), so the contraction needs no broadcast."""
        if op.name != "torch.aten.matmul":
            return False
        a, b = (tensor_info(v.type, dynamic=True) for v in op.operands[:2])
        out = tensor_info(op.results[0].type, dynamic=True)
        if a is None or b is None or out is None:
            return False
        if {a.dtype, b.dtype, out.dtype} != {"f32"} or a.rank < 4 or a.rank != b.rank:
            return False
        if a.shape[:-2] != b.shape[:-2] or DYNAMIC not in a.shape + b.shape:
            return False
        return not any(torch_ops.is_literal(v) for v in op.operands[:2])

    @staticmethod
    def _rewrite(op: ir.Operation, module: ir.Module, names: set[str]) -> None:
        a_value, b_value = op.operands[0], op.operands[1]
        a, b = (tensor_info(v.type, dynamic=True) for v in (a_value, b_value))
        out = tensor_info(op.results[0].type, dynamic=True)
        assert a is not None and b is not None and out is not None
        c = dataclasses.replace(out, shape=(*a.shape[:-1], b.shape[-1]))
        # Kᵀ given as K transposed: the contraction reads K ([..., n, k]) as it is
        source = _last_two_swapped(b_value)
        if source is not None:
            b_value = source
            b = tensor_info(source.type, dynamic=True)
            assert b is not None
        layout = "nt" if source is not None else "nn"
        name = PREFIX + variant_suffix(layout, a.shape, b.shape)
        if name not in names:
            add_function(module, names, name, _definition(name, a, b, c, source is not None))
        with ir.InsertionPoint(op), op.location:
            call = ir.Operation.create(
                "func.call",
                results=[c.builtin()],
                operands=[torch_ops.to_builtin(v) for v in (a_value, b_value)],
                attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
            )
            result = torch_ops.from_builtin_as(call.result, op.results[0].type)
        op.results[0].replace_all_uses_with(result)
        op.erase()


def _last_two_swapped(value: ir.Value) -> ir.Value | None:
    """The tensor ``value`` is a ``transpose`` of the last two dims of, else None."""
    op = torch_ops.defining_op(value)
    info = tensor_info(value.type, dynamic=True)
    if op is None or op.name != "torch.aten.transpose.int" or info is None:
        return None
    dims = [torch_ops.constant_number(v) for v in op.operands[1:3]]
    if any(d is None for d in dims):
        return None
    rank = info.rank
    if sorted(int(d) % rank for d in dims if d is not None) != [rank - 2, rank - 1]:
        return None
    return op.operands[0]


def _definition(name: str, a: TensorInfo, b: TensorInfo, c: TensorInfo, b_transposed: bool) -> str:
    rank = a.rank
    batch = [f"d{i}" for i in range(rank - 2)]
    m, n, k = f"d{rank - 2}", f"d{rank - 1}", f"d{rank}"
    loops = ", ".join([*batch, m, n, k])

    def amap(*results: str) -> str:
        return f"affine_map<({loops}) -> ({', '.join(results)})>"

    dims = []
    values = []
    for i, d in enumerate(c.shape):
        if d != DYNAMIC:
            continue
        source, at = ("%b", rank - (2 if b_transposed else 1)) if i == rank - 1 else ("%a", i)
        src_type = b.builtin() if source == "%b" else a.builtin()
        dims.append(f"  %i{i} = arith.constant {at} : index")
        dims.append(f"  %n{i} = tensor.dim {source}, %i{i} : {src_type}")
        values.append(f"%n{i}")
    return TEMPLATE.substitute(
        name=name,
        a_type=a.builtin(),
        b_type=b.builtin(),
        c_type=c.builtin(),
        dims="\n".join(dims),
        dim_values=", ".join(values),
        a_map=amap(*batch, m, k),
        b_map=amap(*batch, n, k) if b_transposed else amap(*batch, k, n),
        c_map=amap(*batch, m, n),
        iterators=", ".join(['"parallel"'] * (rank) + ['"reduction"']),
    )
