"""Pass ``externalize-weights``: weights held outside the IR become parameters of the module.

Expects ``fold-constant-quantize``'s output on a module whose weights are placeholder literals
(``passes/ir/parameters.py``: the importer's ``external`` mode). Every pure named-op call whose
operands are placeholders (through ``to_builtin_tensor``, ``linalg.transpose`` and a cast to
f32), small constants or earlier such calls' results is planned rather than run: the weight's
compile-time quantize, the same calls ``fold-constant-quantize`` would evaluate. Each planned
result the rest of the module reads becomes a private ``util.global`` read from parameter
``<weight>:<n>`` (``#flow.parameter.named<"model"::...>``); each placeholder still read
(a bias, a norm's weight, an embedding table, an excluded layer's weight) becomes one holding
the tensor as it is (``<weight>``, or ``<weight>/<steps>`` for a view; one only gathered by
rows, an embedding table, planned as such: ``PlannedTensor.gathered``). The calls, their
arguments and the parameter file's tensors go to :attr:`ExternalizeWeights.plan`, which
``compiler/backend/parameter_file.py`` carries out one weight at a time.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir.constants import constant_value, erase_dead
from passes.ir.dialect import decode, decode_kind
from passes.ir.named_ops import (
    callee_name,
    erase_uncalled_declarations,
    is_named_op_decl,
    load_global,
    symbol_name,
)
from passes.ir.parameters import ParameterRef, Step, parameter_global, parameter_ref
from passes.ir.torch_ops import defining_op
from passes.ir.types import tensor_info
from passes.ir.weight_plan import (
    Argument,
    CallResult,
    PlannedCall,
    PlannedTensor,
    Signature,
    WeightPlan,
)
from passes.lowering.cpu.lower import lower_cpu


def _argument(value: ir.Value, results: dict[ir.Value, CallResult]) -> Argument | None:
    """What a planned call's operand is: an earlier planned result, a placeholder's tensor
    through its chain, or a dense constant; None otherwise."""
    if value in results:
        return results[value]
    dense = constant_value(value, {})
    if dense is not None:
        return dense
    op = defining_op(value)
    if op is None:
        return None
    ref = parameter_ref(op)
    if ref is not None:
        return ref
    source = _argument(op.operands[0], results) if op.operands else None
    if not isinstance(source, ParameterRef):
        return None
    if op.name == "torch_c.to_builtin_tensor":
        return source
    if op.name == "linalg.transpose":
        return source.then(
            Step("permute", tuple(ir.DenseI64ArrayAttr(op.attributes["permutation"])))
        )
    if op.name == "torch.prims.convert_element_type" and "f32" in str(value.type):
        return source.then(Step("f32"))
    return None


@register_pass
@dataclasses.dataclass(frozen=True)
class ExternalizeWeights(ModulePass):
    name = "externalize-weights"
    plan: WeightPlan = dataclasses.field(default_factory=WeightPlan, compare=False)

    def options(self) -> dict[str, str]:
        return {}  # the plan is this pass's output, not an option

    def apply(self, module: ir.Module) -> None:
        decls = {
            symbol_name(op.operation): op.operation
            for op in module.body.operations
            if is_named_op_decl(op.operation)
        }
        planned = self._plan_calls(module, decls)
        symbols = _Symbols(module)
        held: dict[CallResult, str] = {}  # a result two functions read: one global
        for call, index in planned:
            for i, result in enumerate(call.results):
                if not _read_outside(result, {c for c, _ in planned}):
                    continue
                source = CallResult(index, i)
                info = tensor_info(result.type)
                assert info is not None, result.type
                if source not in held:
                    key = symbols.key(f"{_first_weight(self.plan, index)}:{i}")
                    self.plan.tensors.append(PlannedTensor(key, info.dtype, info.shape, source))
                    held[source] = symbols.add(key, info)
                with ir.InsertionPoint(call), call.location:
                    result.replace_all_uses_with(load_global(held[source], result.type))
        for call, _ in reversed(planned):
            call.erase()
        erase_dead(module)
        self._externalize_placeholders(module, symbols)
        erase_uncalled_declarations(module, set(decls))

    def _plan_calls(
        self, module: ir.Module, decls: dict[str, ir.Operation]
    ) -> list[tuple[ir.Operation, int]]:
        calls: list[ir.Operation] = []

        def collect(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.call" and callee_name(op) in decls:
                calls.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(collect)
        results: dict[ir.Value, CallResult] = {}
        planned: list[tuple[ir.Operation, int]] = []
        seen: dict[tuple[object, ...], int] = {}  # a generator's @decode repeats @main's calls
        for call in calls:
            name = callee_name(call)
            if not decode_kind(decls[name]).pure:
                continue
            args = [_argument(v, results) for v in call.operands]
            if any(a is None for a in args) or all(isinstance(a, np.ndarray) for a in args):
                continue
            same = (name, *(_identity(a) for a in args))
            if same in seen:  # the same weight's same quantize: computed and stored once
                planned.append((call, seen[same]))
                for i, r in enumerate(call.results):
                    results[r] = CallResult(seen[same], i)
                continue
            if name not in self.plan.functions:
                self.plan.functions[name] = lower_cpu(decls[name]).replace(
                    "func.func private @", "func.func @", 1
                )
                self.plan.records[name] = decode(decls[name])
                function_type = ir.FunctionType(
                    ir.TypeAttr(decls[name].attributes["function_type"]).value
                )
                self.plan.signatures[name] = Signature(
                    tuple(str(t) for t in function_type.inputs),
                    tuple(str(t) for t in function_type.results),
                )
            index = len(self.plan.calls)
            seen[same] = index
            self.plan.calls.append(PlannedCall(name, tuple(args)))  # type: ignore[arg-type]
            planned.append((call, index))
            for i, r in enumerate(call.results):
                results[r] = CallResult(index, i)
        return planned

    def _externalize_placeholders(self, module: ir.Module, symbols: _Symbols) -> None:
        literals: list[ir.Operation] = []

        def collect(op: ir.Operation) -> ir.WalkResult:
            if parameter_ref(op) is not None:
                literals.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(collect)
        gathered: dict[str, bool] = {}  # every read of the weight a gather of its rows
        for op in literals:
            ref = parameter_ref(op)
            assert ref is not None
            rows_only = all(_gathers_rows(use) for use in op.results[0].uses)
            gathered[ref.key()] = gathered.get(ref.key(), True) and rows_only
        by_key: dict[str, str] = {}
        for op in literals:
            if next(iter(op.results[0].uses), None) is None:
                op.erase()  # a weight nothing reads (a head the output does not compute)
                continue
            ref = parameter_ref(op)
            info = tensor_info(op.results[0].type)
            assert ref is not None and info is not None
            if ref.key() not in by_key:
                key = symbols.key(ref.key())
                by_key[ref.key()] = symbols.add(key, info)
                tensor = PlannedTensor(key, info.dtype, info.shape, ref, gathered[ref.key()])
                self.plan.tensors.append(tensor)
            with ir.InsertionPoint(op), op.location:
                loaded = load_global(by_key[ref.key()], info.builtin())
                value = ir.Operation.create(
                    "torch_c.from_builtin_tensor", results=[op.results[0].type], operands=[loaded]
                ).result
            op.results[0].replace_all_uses_with(value)
            op.erase()


def _gathers_rows(use: ir.OpOperand) -> bool:
    """Whether ``use`` reads rows of its weight by index: the table of ``torch.aten.embedding``
    (operand 0)."""
    return use.owner.name == "torch.aten.embedding" and use.operand_number == 0


def _identity(argument: Argument | None) -> object:
    """A planned call's argument as a key: equal for the same weight, constant or result."""
    if isinstance(argument, np.ndarray):
        return ("dense", argument.dtype.str, argument.shape, argument.tobytes())
    return argument


def _read_outside(value: ir.Value, planned: set[ir.Operation]) -> bool:
    """Whether an op other than a planned call reads ``value``."""
    return any(use.owner.operation not in planned for use in value.uses)


def _first_weight(plan: WeightPlan, index: int) -> str:
    """The checkpoint tensor call ``index`` is computed from (its first, through earlier calls)."""
    for a in plan.calls[index].arguments:
        if isinstance(a, ParameterRef):
            return a.key()
        if isinstance(a, CallResult):
            return _first_weight(plan, a.call)
    raise AssertionError("a planned call reads no weight")


class _Symbols:
    """Parameter keys and global symbols, each unique in the module."""

    def __init__(self, module: ir.Module) -> None:
        self._module = module
        self._keys: set[str] = set()
        self._count = 0

    def key(self, wanted: str) -> str:
        key, n = wanted, 1
        while key in self._keys:
            n += 1
            key = f"{wanted}#{n}"
        self._keys.add(key)
        return key

    def add(self, key: str, info: object) -> str:
        symbol = f"__qmlir_param_{self._count}"
        self._count += 1
        parameter_global(self._module, symbol, key, info)  # type: ignore[arg-type]
        return symbol
