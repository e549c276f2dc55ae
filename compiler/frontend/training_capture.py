"""Stage 1 of a training step: forward, backward and optimizer update as one traced graph.

PyTorch's own machinery writes the backward: ``torch.export`` captures the model's forward (its
training IR, each node keeping its module path), then ``make_fx`` traces
``torch.func.grad_and_value`` of that forward (autograd's backward formulas, run on fake
tensors). The optimizer's update (``optimizers.py``) is traced as a second graph. No backward is
written here. The two graphs, imported as ``@main`` and ``@qmlir.apply_update``:

    gradients(parameters..., inputs...) -> (loss, gradients (one per parameter)...)
    update(parameters..., gradients..., optimizer state...) -> (new parameters..., new state...)

One step runs both, as ``loss.backward(); optimizer.step()`` does in torch. Apart, IREE cannot
fuse the update's elementwise ops into a wgrad GEMM's dispatch (which it failed to vectorize at
width 1024, "large vector sizes"); an ``util.optimization_barrier`` between them avoided that
too, but IREE 3.13 then leaked 50-100 MB per step on the sample MLP.

Parameters are the model's trainable ones (``requires_grad``), named as in
``model.named_parameters()``; frozen parameters and buffers are constants of the step. The
forward is decomposed as the inference export's is (SDPA as ``bmm → softmax → bmm``: its CPU
backward op has no lowering), the traced graphs functionalized (no in-place op is left) and
decomposed into ATen's core ops except the matmuls (``addmm``, ``mm``, ``t``, ...), so each
linear's fprop, dgrad and wgrad reach the recipe pass as matmuls (``passes/training_gemms.py``).
Two ops the backward leaves that IREE cannot lower are rewritten (``_legalize``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.fx.traceback as fx_traceback
from torch._decomp import core_aten_decompositions
from torch.fx.experimental.proxy_tensor import make_fx

from compiler.frontend.export import export_decompositions
from compiler.frontend.optimizers import OptimizerOptions, apply_update, state_entries
from passes.base.errors import QmlirError, exception_summary

# kept whole: the recipe pass quantizes these (and reads transposes through ``t``)
_KEPT = ("aten.addmm", "aten.mm", "aten.bmm", "aten.matmul", "aten.linear", "aten.t.")
_RANDOM = ("aten.bernoulli", "aten.rand", "aten.randn", "aten.native_dropout", "aten.normal")


@dataclass
class CapturedStep:
    """The traced step and what its arguments and results are."""

    graph: torch.fx.GraphModule  # (parameters..., inputs...) -> (loss, gradients...)
    update: torch.fx.GraphModule  # (parameters..., gradients..., state...) -> (new p..., new s...)
    program: torch.export.ExportedProgram  # the forward alone (input names, embedding ranges)
    parameters: list[str]
    optimizer_state: list[str]
    initial: list[np.ndarray]  # parameters, then optimizer state
    example_inputs: tuple[torch.Tensor, ...]

    @property
    def state(self) -> list[str]:
        return self.parameters + self.optimizer_state


def capture_training_step(
    model: torch.nn.Module, example_inputs: tuple[torch.Tensor, ...], optimizer: OptimizerOptions
) -> CapturedStep:
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    if not names:
        raise QmlirError("the model has no trainable parameters (none requires grad)")
    trained = [(n, p.dtype) for n, p in model.named_parameters() if n in names]
    odd = [(n, dtype) for n, dtype in trained if dtype != torch.float32]
    if odd:
        raise QmlirError(
            f"a training step keeps f32 parameters; '{odd[0][0]}' is {odd[0][1]} "
            "(the recipe's GEMMs run in FP8 either way)"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            program = torch.export.export(model, example_inputs, strict=False)
            # SDPA as bmm -> softmax -> bmm (its CPU backward op has no lowering in IREE)
            program = program.run_decompositions(export_decompositions(True))
    except Exception as e:
        raise QmlirError(f"torch.export rejected the model: {exception_summary(e)}") from e
    _refuse_mutated_buffers(model, program)
    forward = program.module()
    parameters = dict(forward.named_parameters())
    missing = [n for n in names if n not in parameters]
    if missing:
        raise QmlirError(f"internal: the exported forward has no parameter '{missing[0]}'")
    tied = _tied_names(forward, names)
    entries = state_entries(optimizer, names)
    params = [parameters[n].detach() for n in names]
    state = [torch.zeros(()) if i is None else torch.zeros_like(params[i]) for _, i in entries]

    def loss_of(values: Sequence[torch.Tensor], inputs: Sequence[torch.Tensor]) -> torch.Tensor:
        values_by_name = dict(zip(names, values, strict=True))
        out = _WithParameters(forward, values_by_name, tied).run(*inputs)
        if isinstance(out, (tuple, list)) and len(out) == 1:
            out = out[0]
        if not (isinstance(out, torch.Tensor) and out.ndim == 0 and out.is_floating_point()):
            raise QmlirError(
                "a training step needs forward() to return the loss: one scalar float tensor "
                "(give the targets as inputs)"
            )
        return out

    def gradients(weights: list[torch.Tensor], *inputs: torch.Tensor) -> list[torch.Tensor]:
        grads, loss = torch.func.grad_and_value(loss_of)(weights, inputs)
        return [loss, *grads]

    def update(values: list[torch.Tensor]) -> list[torch.Tensor]:
        count = len(names)
        weights, grads, opt_state = values[:count], values[count : 2 * count], values[2 * count :]
        new_weights, new_state = apply_update(optimizer, weights, grads, opt_state)
        return [*new_weights, *new_state]

    graph = _trace(gradients, params, *example_inputs)
    _refuse_random(graph)
    _fold_double_transposes(graph)
    _legalize(graph)
    return CapturedStep(
        graph=graph,
        # distinct tensors: the tracer gives one placeholder to a tensor passed twice
        update=_trace(update, [*params, *(torch.zeros_like(p) for p in params), *state]),
        program=program,
        parameters=names,
        optimizer_state=[name for name, _ in entries],
        initial=[t.numpy().astype(np.float32) for t in (*params, *state)],
        example_inputs=example_inputs,
    )


def _refuse_mutated_buffers(model: torch.nn.Module, program: torch.export.ExportedProgram) -> None:
    """A step whose forward updates a buffer (BatchNorm's running statistics in train mode, a
    counter) is refused with one line naming it: a training step holds parameters and optimizer
    state, not buffers (an inference compile holds them: ``passes/hold_buffers.py``)."""
    mutated = sorted(program.graph_signature.buffers_to_mutate.values())
    if not mutated:
        return
    owner, _, _ = mutated[0].rpartition(".")
    try:
        kind = type(model.get_submodule(owner)).__name__ if owner else type(model).__name__
    except AttributeError:
        kind = "module"
    where = f"layer '{owner}' ({kind})" if owner else f"the model ({kind})"
    more = f" (and {len(mutated) - 1} more)" if len(mutated) > 1 else ""
    fix = f"model.get_submodule('{owner}').eval()" if owner else "model.eval()"
    raise QmlirError(
        f"a training step cannot update buffers: {where} changes '{mutated[0]}'{more} in train "
        f"mode; put it in eval mode ({fix}) to train with its buffers fixed"
    )


def _trace(function: Any, *args: Any) -> torch.fx.GraphModule:
    """``function`` traced on fake tensors into ATen ops (core decompositions but the
    matmuls'), each node keeping the module path of the forward node it comes from."""
    table = {k: v for k, v in core_aten_decompositions().items() if not str(k).startswith(_KEPT)}
    try:
        with fx_traceback.preserve_node_meta(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return make_fx(
                torch.func.functionalize(function),
                decomposition_table=table,
                tracing_mode="fake",
                _allow_non_fake_inputs=True,
            )(*args)
    except QmlirError:
        raise
    except Exception as e:
        raise QmlirError(f"could not trace the training step: {exception_summary(e)}") from e


class _WithParameters(torch.fx.Interpreter):
    """Runs the exported forward node by node (so each traced op keeps its node's module path)
    with the given values in place of the named parameters."""

    def __init__(
        self,
        module: torch.fx.GraphModule,
        values: dict[str, torch.Tensor],
        aliases: dict[str, str] | None = None,
    ) -> None:
        super().__init__(module)
        self.values = values
        self.aliases = aliases or {}

    def fetch_attr(self, target: str) -> Any:
        value = self.values.get(self.aliases.get(target, target))
        return value if value is not None else super().fetch_attr(target)


def _tied_names(forward: torch.nn.Module, names: list[str]) -> dict[str, str]:
    """Every other name of a trained parameter (a tied weight: GPT-2's ``lm_head.weight`` is
    ``transformer.wte.weight``) -> the name it is trained under, so each use reads the same
    argument and both uses' gradients add up in one (as torch's tied parameter)."""
    trained = {id(p): n for n, p in forward.named_parameters() if n in names}
    return {
        n: trained[id(p)]
        for n, p in forward.named_parameters(remove_duplicate=False)
        if id(p) in trained and n != trained[id(p)]
    }


def _fold_double_transposes(graph: torch.fx.GraphModule) -> None:
    """``t(t(x))`` is ``x``: autograd's linear backward transposes ``W`` back for dgrad and the
    wgrad result back to ``W``'s layout. Folded here, each GEMM reads the tensor itself (and
    IREE does not fuse a transpose into a data-tiled GEMM's unpack, which it fails to vectorize
    at width 1024)."""
    for node in list(graph.graph.nodes):
        if node.op != "call_function" or node.target != torch.ops.aten.t.default:
            continue
        inner = node.args[0]
        if isinstance(inner, torch.fx.Node) and inner.target == torch.ops.aten.t.default:
            node.replace_all_uses_with(inner.args[0])
            graph.graph.erase_node(node)
    graph.graph.eliminate_dead_code()
    graph.recompile()


def _legalize(graph: torch.fx.GraphModule) -> None:
    """Ops the traced backward has that torch-mlir imports as ops IREE cannot legalize, as
    equivalent ones: ``squeeze.dims`` (cross-entropy's backward) as a ``view`` to its static
    result shape, ``empty_permuted`` (an uninitialized buffer) as a contiguous ``empty``."""
    aten = torch.ops.aten
    for node in list(graph.graph.nodes):
        if node.op != "call_function":
            continue
        val = node.meta.get("val")
        if node.target == aten.squeeze.dims:
            target, args, kwargs = aten.view.default, (node.args[0], list(val.shape)), {}
        elif node.target == aten.empty_permuted.default:
            target, args = aten.empty.memory_format, (list(val.shape),)
            kwargs = {"dtype": val.dtype, "device": val.device}
        else:
            continue
        with graph.graph.inserting_before(node):
            new = graph.graph.call_function(target, args, kwargs)
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        graph.graph.erase_node(node)
    graph.recompile()


def _refuse_random(graph: torch.fx.GraphModule) -> None:
    """A step with random ops (dropout in training mode) would need a generator in the module."""
    for node in graph.graph.nodes:
        if node.op == "call_function" and str(node.target).startswith(_RANDOM):
            where = _module_path(node) or "the model"
            raise QmlirError(
                f"the training step draws random numbers ({node.target} in {where}): dropout "
                "and other random ops are not supported in a compiled step; set their "
                "probability to 0"
            )


def _module_path(node: Any) -> str:
    stack = node.meta.get("nn_module_stack") or {}
    return list(stack.values())[-1][0] if stack else ""
