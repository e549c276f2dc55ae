"""Building with the named ops of qmlir's dialect (``passes/ir/dialect.py``), as the recipe
passes emit them, and the module state beside them.

A named op is a call to a private function whose declaration carries the op's record (its kind
and attributes, encoded by the dialect) and whose name spells them, e.g.
``@qmlir.quantize.e4m3.32x1024``. The recipe pass emits declarations only, so the IR after it
reads as the recipe; ``lower-named-ops`` gives each declaration its body for a target
(``passes/lowering/<target>/``), and ``fold-constant-quantize`` evaluates calls whose operands
are constants (the weights) at compile time.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from iree.compiler import ir
from iree.compiler.dialects import func

from passes.base.errors import QmlirError
from passes.ir.dialect import Attrs, OpKind, encode, is_named_op_decl
from passes.ir.types import DYNAMIC

LAYER_ATTR = "qmlir.layer"
# a training step's matmuls (passes/training_gemms.py): each operand's role, and which of its
# layer's three GEMMs it is (fprop, dgrad, wgrad)
ROLES_ATTR = "qmlir.operand_roles"
GEMM_ATTR = "qmlir.gemm"

STATE_ATTR = "qmlir.state"


def symbol_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def callee_name(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def erase_uncalled_declarations(module: ir.Module, names: Collection[str]) -> None:
    """Erases the named-op declarations among ``names`` that no ``func.call`` calls any more."""
    called: set[str] = set()

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call":
            called.add(callee_name(op))
        return ir.WalkResult.ADVANCE

    module.operation.walk(collect)
    for op in list(module.body.operations):
        decl = op.operation
        if (
            is_named_op_decl(decl)
            and symbol_name(decl) in names
            and symbol_name(decl) not in called
        ):
            decl.erase()


def variant_of(name: str, kind: OpKind) -> str:
    """The variant of the named op ``@qmlir.<kind>.<variant>`` called ``name``."""
    return name.removeprefix(f"qmlir.{kind.value}.")


def variant_suffix(*parts: object) -> str:
    """Joins name parts; tuples are shapes (``32x1024``, a dynamic dim ``D``: ``Dx1024``)."""
    out = []
    for p in parts:
        if isinstance(p, tuple):
            out.append("x".join("D" if d == DYNAMIC else str(d) for d in p) or "scalar")
        else:
            out.append(str(p))
    return ".".join(out)


class NamedOpBuilder:
    """Declares named ops in a module and emits calls to them at the current insertion point."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self._declared: dict[str, ir.Operation] = {}
        for op in module.body.operations:
            if is_named_op_decl(op.operation):
                self._declared[symbol_name(op.operation)] = op.operation
        self._occurrences: dict[tuple[str, str], int] = {}

    def occurrence(self, key: str) -> int:
        """How many times ``key`` came before in the function at the current insertion point
        (0 the first time): the n-th use of a layer's state in one function is the n-th in
        another (a generator's ``@main`` and ``@decode`` share each layer's state)."""
        op = ir.InsertionPoint.current.block.owner
        while op is not None and op.operation.name != "func.func":
            op = op.operation.parent
        function = symbol_name(op.operation) if op is not None else ""
        n = self._occurrences.get((function, key), 0)
        self._occurrences[(function, key)] = n + 1
        return n

    def global_attrs(self, name: str, tag: str = STATE_ATTR) -> ir.DictAttr | None:
        """The ``tag`` attributes of global ``@name``, or None where no global has that name."""
        for op in self.module.body.operations:
            attrs = op.operation.attributes
            if (
                op.operation.name == "util.global"
                and ir.StringAttr(attrs["sym_name"]).value == name
            ):
                return ir.DictAttr(attrs[tag]) if tag in attrs else None
        return None

    def declare(
        self,
        attrs: Attrs,
        variant: str,
        arg_types: Sequence[ir.Type],
        result_types: Sequence[ir.Type],
    ) -> str:
        """``@qmlir.<kind>.<variant>``, declared with ``attrs`` unless it already is."""
        name = f"qmlir.{attrs.kind.value}.{variant}"
        if name in self._declared:
            return name
        with ir.InsertionPoint(self.module.body), ir.Location.unknown():
            decl = func.FuncOp(
                name, ir.FunctionType.get(list(arg_types), list(result_types)), visibility="private"
            )
        for key, value in encode(attrs).items():
            decl.attributes[key] = value
        self._declared[name] = decl.operation
        return name

    def call(
        self,
        attrs: Attrs,
        variant: str,
        operands: Sequence[ir.Value],
        result_types: Sequence[ir.Type],
        layer: str | None = None,
    ) -> list[ir.Value]:
        """A call of the named op ``attrs`` describes (declared on first use), in ``layer``."""
        name = self.declare(attrs, variant, [v.type for v in operands], result_types)
        call = func.CallOp(list(result_types), ir.FlatSymbolRefAttr.get(name), list(operands))
        if layer:
            call.attributes[LAYER_ATTR] = ir.StringAttr.get(layer)
        return list(call.results)

    def replace_call(
        self,
        call: ir.Operation,
        attrs: Attrs,
        variant: str,
        operands: Sequence[ir.Value],
        result_types: Sequence[ir.Type],
    ) -> list[ir.Value]:
        """``call`` replaced by a call of the named op ``attrs`` describes (``variant``), made
        before it with its attributes (the layer, its recipe and why, ...); the new results take
        over the old ones' uses (``result_types``: theirs), and ``call`` is erased."""
        with ir.InsertionPoint(call), call.location:
            results = self.call(attrs, variant, operands, result_types)
        made = results[0].owner
        for key in call.attributes:
            name = key if isinstance(key, str) else key.name
            if name != "callee":
                made.attributes[name] = call.attributes[name]
        for old, new in zip(call.results, results, strict=True):
            old.replace_all_uses_with(new)
        call.erase()
        return results

    def symbol_taken(self, name: str) -> bool:
        return any(
            "sym_name" in op.operation.attributes
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == name
            for op in self.module.body.operations
        )

    def add_global(
        self,
        name: str,
        initial: ir.Attribute | ir.Type,
        attrs: dict[str, ir.Attribute],
        tag: str = STATE_ATTR,
    ) -> str:
        """A private mutable ``util.global`` (module state) after the existing globals, its
        ``attrs`` under ``tag`` (``qmlir.state``: scaling state); ``initial`` is its initial
        value, or only its type (no initial value: the runtime sets it before any use)."""
        assert not self.symbol_taken(name), name
        first_other = next(
            (op for op in self.module.body.operations if op.operation.name != "util.global"), None
        )
        point = (
            ir.InsertionPoint(first_other)
            if first_other is not None
            else ir.InsertionPoint(self.module.body)
        )
        with point, ir.Location.unknown():
            attributes = {
                "sym_name": ir.StringAttr.get(name),
                "sym_visibility": ir.StringAttr.get("private"),
                "is_mutable": ir.UnitAttr.get(),
            }
            if isinstance(initial, ir.Type):
                attributes["type"] = ir.TypeAttr.get(initial)
            else:
                attributes["type"] = ir.TypeAttr.get(ir.DenseElementsAttr(initial).type)
                attributes["initial_value"] = initial
            op = ir.Operation.create("util.global", attributes=attributes)
        op.attributes[tag] = ir.DictAttr.get(attrs)
        return name


def load_global(name: str, value_type: ir.Type) -> ir.Value:
    return ir.Operation.create(
        "util.global.load",
        results=[value_type],
        attributes={"global": ir.FlatSymbolRefAttr.get(name)},
    ).result


def store_global(name: str, value: ir.Value) -> None:
    ir.Operation.create(
        "util.global.store",
        operands=[value],
        attributes={"global": ir.FlatSymbolRefAttr.get(name)},
    )


def f32_attr(value: float) -> ir.Attribute:
    return ir.FloatAttr.get(ir.F32Type.get(), value)


def str_attr(value: str) -> ir.Attribute:
    return ir.StringAttr.get(value)


def bool_attr(value: bool) -> ir.Attribute:
    return ir.BoolAttr.get(value)


def i64_array_attr(values: tuple[int, ...]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get(list(values))


def entry_function(module: ir.Module, name: str = "main") -> ir.Operation:
    """The module's ``@main`` (or function ``@name``)."""
    function = find_function(module, name)
    if function is None:
        raise QmlirError(f"the module has no @{name}")
    return function


def find_function(module: ir.Module, name: str) -> ir.Operation | None:
    """The module's ``func.func @name``, or None."""
    for op in module.body.operations:
        if op.operation.name == "func.func":
            if ir.StringAttr(op.operation.attributes["sym_name"]).value == name:
                return op.operation
    return None


def add_accessors(
    module: ir.Module, getter: str, setter: str | None, globals_: Sequence[tuple[str, ir.Type]]
) -> None:
    """Public functions at the module's end: ``@getter() -> (each global)`` and, unless None,
    ``@setter(each global)`` storing its arguments, in ``globals_``' order (symbol, type)."""
    types = [t for _, t in globals_]
    with ir.InsertionPoint(module.body), ir.Location.unknown():
        get = func.FuncOp(getter, ir.FunctionType.get([], types))
        with ir.InsertionPoint(get.add_entry_block()):
            func.ReturnOp([load_global(n, t) for n, t in globals_])
        if setter is None:
            return
        put = func.FuncOp(setter, ir.FunctionType.get(types, []))
        block = put.add_entry_block()
        with ir.InsertionPoint(block):
            for (n, _), arg in zip(globals_, block.arguments, strict=True):
                store_global(n, arg)
            func.ReturnOp([])
