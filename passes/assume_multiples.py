"""Pass ``assume-multiples``: a size the model computes as a multiple of a constant
(``torch.aten.mul.int(x, c)``) carries that fact to IREE as ``util.assume.int<udiv = c>``.

torch's sizes are i64 in the IR; IREE's divisibility analysis sees through its own ``index``
arithmetic but not through the casts between i64 and index, so a dim padded to a multiple of 8
(``compiler/frontend/attention.py``: a dynamic key length) reached every dispatch as a size of
unknown divisibility, and IREE's CPU code for a reduction over it peeled each row's vector loop
into a scalar remainder. Told the multiple, it vectorizes the whole row (a softmax over
``[?, 12, ?, ?]`` on an AVX2 host: 12.2 ms against 2.9 ms with the key length known to be a
multiple of 8; the static softmax took 1.5 ms; benchmarks/RESULTS.md).

The assumption only states what the multiplication makes true (a product with the constant
``c`` is a multiple of ``c``, as an unsigned 64-bit number too), so it cannot change a result.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.walk import ops_where


def _multiple(op: ir.Operation) -> int | None:
    """The constant ``c`` > 1 of a ``torch.aten.mul.int`` by a constant, else None."""
    if op.name != "torch.aten.mul.int":
        return None
    for value in op.operands:
        number = torch_ops.constant_number(value)
        if number is not None and number > 1:
            return int(number)
    return None


@register_pass
@dataclasses.dataclass(frozen=True)
class AssumeMultiples(ModulePass):
    name = "assume-multiples"

    def apply(self, module: ir.Module) -> None:
        for op in ops_where(module.operation, lambda op: _multiple(op) is not None):
            multiple = _multiple(op)
            assert multiple is not None  # ops_where took it
            self._assume(op, multiple)

    @staticmethod
    def _assume(op: ir.Operation, multiple: int) -> None:
        result = op.results[0]
        i64, index = ir.IntegerType.get_signless(64), ir.IndexType.get()
        assumption = ir.Attribute.parse(f"[[#util.int.assumption<udiv = {multiple}>]]")
        with ir.InsertionPoint.after(op), op.location:
            wide = ir.Operation.create("torch_c.to_i64", results=[i64], operands=[result])
            cast = ir.Operation.create("arith.index_cast", results=[index], operands=[wide.result])
            assumed = ir.Operation.create(
                "util.assume.int",
                results=[index],
                operands=[cast.result],
                attributes={"assumptions": assumption},
            )
            back = ir.Operation.create("arith.index_cast", results=[i64], operands=[assumed.result])
            out = ir.Operation.create(
                "torch_c.from_i64", results=[result.type], operands=[back.result]
            )
        result.replace_all_uses_except(out.result, wide)
