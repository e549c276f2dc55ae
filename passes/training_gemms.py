"""Pass ``training-gemms``: in a training step, what each matmul and each of its operands is.

Expects the imported gradients of a training step (``compiler/frontend/training_capture.py``):

    @main(parameters..., inputs...) -> (loss, gradients (one per parameter)...)

``parameters`` names the function's first arguments (``l1.weight``, ...). Each matmul's first
two operands get a role, found by following shape-only ops (``t``, ``transpose``, ``permute``,
``view``, ...) back to the value they show:

- ``weight``: a parameter, or a frozen weight (a literal: ``fold-weight-views`` runs first);
- ``activation``: a value the loss depends on (the forward pass), or an input;
- ``gradient``: a value only the backward pass computes (``dY``, ``dX``).

A matmul with a weight operand is its layer's ``fprop`` (``y = x Wᵀ``, no gradient operand) or
``dgrad`` (``dX = dY W``); one whose result reaches a parameter's gradient output (through
shape-only ops) is the ``wgrad`` of that parameter's layer (``dW = dYᵀ x``; a parameter used
twice sums two wgrads: neither is marked). Those three are marked ``qmlir.gemm`` and are a
linear's GEMMs: the recipe pass quantizes them as it quantizes a weight's matmul at inference,
each operand for its role and usage (``qmlir.operand_roles``).
A dgrad or wgrad has no module path of its own in the importer's locations: it gets its layer's
(``qmlir.layer``, the parameter's owner: ``l1`` for ``l1.weight``). Other matmuls (attention's
backward) get their operands' roles only: ``--quantize-all-matmuls`` decides them.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.base.module_pass import ModulePass, register_pass
from passes.ir.named_ops import GEMM_ATTR, LAYER_ATTR, ROLES_ATTR, entry_function
from passes.ir.torch_ops import PERMUTES, RESHAPES, defining_op, is_literal

GEMM_KINDS = ("fprop", "dgrad", "wgrad")
MATMULS = {  # op → indices of its two matrix operands
    "torch.aten.linear": (0, 1),
    "torch.aten.mm": (0, 1),
    "torch.aten.matmul": (0, 1),
    "torch.aten.bmm": (0, 1),
    "torch.aten.addmm": (1, 2),
}
VIEWS = (*RESHAPES, *PERMUTES, "torch.aten.expand", "torch.aten.clone", "torch.aten.alias")


def view_root(value: ir.Value) -> ir.Value:
    """The value ``value`` shows through shape-only ops."""
    while True:
        op = defining_op(value)
        if op is None or op.name not in VIEWS:
            return value
        value = op.operands[0]


def _arg_number(value: ir.Value) -> int | None:
    return ir.BlockArgument(value).arg_number if isinstance(value.owner, ir.Block) else None


def owner_layer(parameter: str) -> str:
    """``layers.3.fc1.weight`` → ``layers.3.fc1`` (a top-level parameter: itself)."""
    return parameter.rpartition(".")[0] or parameter


@register_pass
@dataclasses.dataclass(frozen=True)
class TrainingGemms(ModulePass):
    name = "training-gemms"

    parameters: tuple[str, ...] = ()

    @classmethod
    def from_options(cls, options: dict[str, str]) -> TrainingGemms:
        """``parameters=l1.weight,l1.bias,...`` (the first arguments of ``@main``)."""
        unknown = set(options) - {"parameters"}
        if unknown:
            raise QmlirError(f"pass '{cls.name}' has no option '{sorted(unknown)[0]}'")
        return cls(tuple(p for p in options.get("parameters", "").split(",") if p))

    def apply(self, module: ir.Module) -> None:
        entry = entry_function(module)
        block = entry.regions[0].blocks[0]
        count = len(self.parameters)
        if len(block.arguments) < count:
            raise QmlirError(
                f"@main takes {len(block.arguments)} arguments, fewer than its {count} parameters"
            )
        ret = block.operations[len(block.operations) - 1]
        results = list(ret.operands)
        if len(results) != 1 + count:
            raise QmlirError(
                f"@main returns {len(results)} values, not a training step's loss and "
                f"{count} gradients"
            )
        forward = _ancestors(results[0])
        gradients = {view_root(v): self.parameters[i] for i, v in enumerate(results[-count:])}
        for op in block.operations:
            indices = MATMULS.get(op.operation.name)
            if indices is not None:
                self._mark(op.operation, indices, forward, gradients)

    def _mark(
        self,
        op: ir.Operation,
        indices: tuple[int, int],
        forward: set[ir.Value],
        gradients: dict[ir.Value, str],
    ) -> None:
        roles, layer = [], ""
        for i in indices:
            root = view_root(op.operands[i])
            number = _arg_number(root)
            if number is not None and number < len(self.parameters):
                roles.append("weight")
                layer = owner_layer(self.parameters[number])
            elif is_literal(root):  # a frozen weight: a constant of the step
                roles.append("weight")
            elif number is not None or root in forward:
                roles.append("activation")
            else:
                roles.append("gradient")
        op.attributes[ROLES_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(r) for r in roles])
        kind = ""
        if "weight" in roles:
            kind = "dgrad" if "gradient" in roles else "fprop"
        elif "gradient" in roles:
            produced = gradients.get(op.results[0])
            if produced is not None:
                kind, layer = "wgrad", owner_layer(produced)
        if not kind:
            return
        op.attributes[GEMM_ATTR] = ir.StringAttr.get(kind)
        if kind != "fprop" and LAYER_ATTR not in op.attributes:
            op.attributes[LAYER_ATTR] = ir.StringAttr.get(layer)


def _ancestors(value: ir.Value) -> set[ir.Value]:
    """Every value ``value`` is computed from, itself included."""
    seen: set[ir.Value] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        op = defining_op(v)
        if op is not None:
            stack.extend(op.operands)
    return seen
