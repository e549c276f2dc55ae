"""The f32 run of an exported program that records every matmul: its operands, output, which
operands are weights, and the layer (module path) it belongs to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from passes.base.errors import QmlirError
from passes.ir.expert_matmuls import expert_name

MATMULS = {
    torch.ops.aten.linear.default: "linear",
    torch.ops.aten.mm.default: "mm",
    torch.ops.aten.addmm.default: "addmm",
    torch.ops.aten.matmul.default: "matmul",
    torch.ops.aten.bmm.default: "bmm",
}

# shape-only ops whose result, of a weight, is a weight too: ``passes/fold_weight_views.py``
# folds them into the weight at compile time, so the recipe pass sees a weight matmul
WEIGHT_VIEWS = {
    torch.ops.aten.unsqueeze.default,
    torch.ops.aten.squeeze.dim,
    torch.ops.aten.view.default,
    torch.ops.aten.reshape.default,
    torch.ops.aten._unsafe_view.default,
    torch.ops.aten.flatten.using_ints,
    torch.ops.aten.permute.default,
    torch.ops.aten.transpose.int,
    torch.ops.aten.t.default,
    torch.ops.aten.numpy_T.default,
}


@dataclass
class MatmulCall:
    op: str
    target: Any
    args: tuple[Any, ...]
    output: torch.Tensor
    weight_operands: tuple[bool, bool]  # (a, b) is a parameter, buffer or constant (or a view)
    layer: str  # the module path, as the importer names the op's location


class _Recorder(torch.fx.Interpreter):
    def __init__(self, gm: torch.fx.GraphModule, constants: set[str]) -> None:
        super().__init__(gm)
        self.constants = constants
        self.calls: list[MatmulCall] = []

    def run_node(self, n: torch.fx.Node) -> Any:
        result = super().run_node(n)
        if n.op == "call_function" and n.target in WEIGHT_VIEWS and self._is_weight(n.args[0]):
            self.constants.add(n.name)
        if n.op == "call_function" and n.target in MATMULS:
            kind = MATMULS[n.target]
            operands = n.args[1:3] if kind == "addmm" else n.args[0:2]
            flags = tuple(self._is_weight(a) for a in operands)
            args = tuple(self.env[a] if isinstance(a, torch.fx.Node) else a for a in n.args)
            stack = n.meta.get("nn_module_stack") or {}
            layer = list(stack.values())[-1][0] if stack else ""
            call = MatmulCall(kind, n.target, args, result, flags, layer)  # type: ignore[arg-type]
            self.calls.extend(_expert_calls(call) or [call])
        return result

    def _is_weight(self, value: Any) -> bool:
        """A parameter, buffer or constant, or a view of one."""
        return isinstance(value, torch.fx.Node) and value.name in self.constants


def _expert_calls(call: MatmulCall) -> list[MatmulCall]:
    """An activation times a batched weight, as the recipe pass splits it: one 2-D ``mm`` per
    expert, named ``<layer>.expert<i>`` (``passes/ir/expert_matmuls.py``); [] for other matmuls."""
    if call.op not in ("bmm", "matmul") or call.weight_operands != (False, True):
        return []
    a, b = call.args[0], call.args[1]
    if (
        not b.is_floating_point()
        or b.dim() < 3
        or a.dim() != b.dim()
        or a.shape[:-2] != b.shape[:-2]
    ):
        return []
    mm = torch.ops.aten.mm.default
    return [
        MatmulCall(
            "mm",
            mm,
            (a.flatten(0, -3)[i], b.flatten(0, -3)[i]),
            call.output.flatten(0, -3)[i],
            call.weight_operands,
            expert_name(call.layer, i),
        )
        for i in range(b.flatten(0, -3).shape[0])
    ]


def capture_matmuls(
    program: torch.export.ExportedProgram, inputs: tuple[Any, ...]
) -> list[MatmulCall]:
    """Runs the exported program in f32 on ``inputs``; every matmul's operands and output."""
    signature = program.graph_signature
    lifted: list[Any] = []
    constants: set[str] = set()
    user = iter(inputs)
    for spec in signature.input_specs:
        name = spec.arg.name
        if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT:
            try:
                value = next(user)
            except StopIteration:
                raise QmlirError("the model takes more inputs than were given") from None
            lifted.append(as_f32(value))
            continue
        target = spec.target
        value = program.state_dict.get(target, program.constants.get(target))
        if value is None:
            raise QmlirError(f"internal: no value for the program's input '{target}'")
        lifted.append(as_f32(value))
        constants.add(name)
    if next(user, None) is not None:
        raise QmlirError(f"the model takes {len(signature.user_inputs)} inputs; more were given")
    recorder = _Recorder(program.graph_module, constants)
    try:
        with torch.no_grad():
            recorder.run(*lifted)
    except Exception as e:
        raise QmlirError(f"the model does not run on these inputs: {_first_line(e)}") from e
    return recorder.calls


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def as_tensor(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return torch.from_numpy(
            np.ascontiguousarray(x.astype(np.float32) if x.dtype.kind == "V" else x)
        )
    return x


def as_f32(value: Any) -> Any:
    tensor = torch.as_tensor(value) if isinstance(value, np.ndarray) else value
    if isinstance(tensor, torch.Tensor) and tensor.is_floating_point():
        return tensor.detach().float()
    return tensor
