"""Pass ``probe-gemms``: a test hook that keeps what each quantized GEMM of a step read.

For each ``scaled_matmul`` call in ``@main`` that a training step marked (``qmlir.gemm``), in
program order, the module keeps, in private globals written on every call: for each operand
the f32 tensor its ``quantize`` read (``source``), the codes (``data``) and the compact
``scale_inv`` it wrote (``scale``); and the GEMM's f32 result (``out``). ``@qmlir.get_probes()``
returns them, seven per GEMM in that order (stored before ``@main`` returns). Tests apply the
quantize core to each source (bit for bit the same codes and scales) and recompute each GEMM
from the codes in f64.

Runs after the recipe pass, before lowering. A GEMM whose operand does not come straight from a
``quantize`` call (none today) is an error: the hook would show something else than it says.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir
from iree.compiler.dialects import func

from passes.base.abi import GET_PROBES
from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls
from passes.ir.dialect import OpKind
from passes.ir.named_ops import (
    GEMM_ATTR,
    LAYER_ATTR,
    ROLES_ATTR,
    NamedOpBuilder,
    entry_function,
    load_global,
    store_global,
    str_attr,
)
from passes.ir.torch_ops import defining_op

PROBE_ATTR = "qmlir.probe"
PARTS = ("a.source", "a.data", "a.scale", "b.source", "b.data", "b.scale", "out")


@register_pass
@dataclasses.dataclass(frozen=True)
class ProbeGemms(ModulePass):
    name = "probe-gemms"

    def apply(self, module: ir.Module) -> None:
        calls = NamedCalls(module)
        block = entry_function(module).regions[0].blocks[0]
        gemms = _probed(module, calls)
        ops = NamedOpBuilder(module)
        ret = block.operations[len(block.operations) - 1]
        symbols: list[tuple[str, ir.Type]] = []
        for n, gemm in enumerate(gemms):
            values = [*_operand(calls, gemm, 0), *_operand(calls, gemm, 2), gemm.results[0]]
            for part, value in zip(PARTS, values, strict=True):
                symbol = f"qmlir.probe.{n}.{part}"
                element = ir.ShapedType(value.type).element_type
                with ir.Location.unknown():
                    zero = ir.DenseElementsAttr.get_splat(value.type, _zero(element))
                    ops.add_global(symbol, zero, {"part": str_attr(part)}, tag=PROBE_ATTR)
                with ir.InsertionPoint(ret), gemm.location:
                    store_global(symbol, _clone(value))
                symbols.append((symbol, value.type))
        with ir.InsertionPoint(module.body), ir.Location.unknown():
            getter = func.FuncOp(GET_PROBES, ir.FunctionType.get([], [t for _, t in symbols]))
            with ir.InsertionPoint(getter.add_entry_block()):
                func.ReturnOp([load_global(s, t) for s, t in symbols])


def _probed(module: ir.Module, calls: NamedCalls) -> list[ir.Operation]:
    block = entry_function(module).regions[0].blocks[0]
    return [
        op.operation
        for op in block.operations
        if calls.of_kind(op.operation, OpKind.SCALED_MATMUL) is not None
        and GEMM_ATTR in op.operation.attributes
    ]


def probe_entries(module: ir.Module) -> list[dict[str, object]]:
    """What each probed GEMM is, in probe order: its layer, which GEMM (fprop, dgrad, wgrad),
    each operand's role and usage (``b`` is ``[K, N]``, columnwise, unless transposed)."""
    calls = NamedCalls(module)
    out: list[dict[str, object]] = []
    for gemm in _probed(module, calls):
        attrs = gemm.attributes
        roles = [ir.StringAttr(r).value for r in ir.ArrayAttr(attrs[ROLES_ATTR])]
        transposed = calls.op(gemm).attrs.b_transposed
        out.append(
            {
                "layer": ir.StringAttr(attrs[LAYER_ATTR]).value if LAYER_ATTR in attrs else "",
                "gemm": ir.StringAttr(attrs[GEMM_ATTR]).value,
                "roles": ["parameter" if r == "weight" else r for r in roles],
                "usages": ["rowwise", "rowwise" if transposed else "columnwise"],
            }
        )
    return out


def _operand(calls: NamedCalls, gemm: ir.Operation, index: int) -> list[ir.Value]:
    """(source, codes, compact scale_inv) of the GEMM's operand whose codes are ``index``."""
    quantize = defining_op(gemm.operands[index])
    if calls.of_kind(quantize, OpKind.QUANTIZE) is None:
        raise QmlirError("probe-gemms: a GEMM operand does not come from a quantize call")
    assert quantize is not None
    return [quantize.operands[0], quantize.results[0], quantize.results[1]]


def _clone(value: ir.Value) -> ir.Value:
    """A copy of ``value``: IREE stores a global by reference, and a value read from another
    global (a parameter, which the step then updates in place) would change under the probe."""
    return ir.Operation.create("flow.tensor.clone", results=[value.type], operands=[value]).result


def _zero(element: ir.Type) -> ir.Attribute:
    if isinstance(element, ir.IntegerType):
        return ir.IntegerAttr.get(element, 0)
    return ir.FloatAttr.get(element, 0.0)
