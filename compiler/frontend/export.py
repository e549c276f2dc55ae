"""Stage 1, export: ``torch.export`` (static shapes, or the ``dynamic_shapes`` the user gave),
ATen ops kept as they are.

``run_decompositions`` lowers to inference ATen IR decomposing only ``aten.new_ones`` and
``aten.__and__`` (transformers' attention-mask code would otherwise leave a 0-d bool literal that
IREE cannot legalize), ``aten.index_copy`` (a static KV cache's update), ``aten.diff``
(transformers' packed-sequence check on position ids; no lowering in torch-mlir) and
``aten.einsum`` (into permutes, views and ``bmm``), so
``aten.linear``/``matmul`` survive in their dtypes for the recipe pass;
and, where the pipeline asks, ``scaled_dot_product_attention`` (as ``bmm → softmax → bmm``,
``compiler/frontend/attention.py``). Mixture-of-experts layers export with each expert's
matmuls over the tokens routed to it, or dense and masked (``compiler/frontend/moe.py``), and
a small ``topk`` (a router's) as rounds of max and first index (:func:`_topk`).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import warnings
from collections.abc import Iterator

import torch
from torch._decomp import core_aten_decompositions
from torch.export.graph_signature import OutputKind

from compiler.frontend.attention import SDPA, sdpa_as_matmuls
from compiler.frontend.model_source import ModelSource
from compiler.frontend.moe import experts_as_layers
from passes.base.errors import QmlirError, exception_summary


def export_model(
    source: ModelSource, attention_as_matmuls: bool = True, experts: str = "routed"
) -> torch.export.ExportedProgram:
    """``attention_as_matmuls``: SDPA becomes ``bmm → softmax → bmm``
    (``compiler/frontend/attention.py``);
    otherwise it stays one op that IREE lowers to ``iree_linalg_ext.attention``.
    ``experts``: how MoE experts export, ``compiler/frontend/moe.py``'s ``FORMS``."""
    table = export_decompositions(attention_as_matmuls)
    try:
        with torch.no_grad(), warnings.catch_warnings(), _quiet_logging():
            warnings.simplefilter("ignore", FutureWarning)  # torch's own deprecation chatter
            program = source.program
            if program is None:
                with (
                    experts_as_layers(source.module, experts),
                    _kv_heads_ungrouped(attention_as_matmuls),
                ):
                    program = torch.export.export(
                        source.module.eval(),
                        source.example_inputs,
                        dynamic_shapes=source.dynamic_shapes,
                        strict=False,
                    )
            check_outputs(program)
            program = program.run_decompositions(table)
            positive_dims(program)
            return program
    except QmlirError:
        raise
    except Exception as e:
        if "DynamicCache" in str(e):  # a transformers model returning its KV cache
            raise QmlirError(
                "the model returns its KV cache (a transformers DynamicCache), which an artifact "
                "cannot return: set model.config.use_cache = False (or pass use_cache=False), or "
                "compile a generator that keeps the cache in the module (qmlir compile --generate)"
            ) from e
        raise QmlirError(f"torch.export rejected the model: {exception_summary(e)}") from e


@contextlib.contextmanager
def _kv_heads_ungrouped(enabled: bool) -> Iterator[None]:
    """transformers' SDPA attention given K and V with their own heads (``enable_gqa``) rather
    than repeated once per query head (its ``repeat_kv``), which it does for a masked GQA layer
    unless ``TRANSFORMERS_SDPA_FORCE_GQA`` is set: the decomposition then groups the query heads
    (``compiler/frontend/attention.py``). Only where SDPA is decomposed: IREE's fused attention
    op takes no grouped heads."""
    if not enabled:
        yield
        return
    saved = os.environ.get(FORCE_GQA)
    os.environ[FORCE_GQA] = "1"
    try:
        yield
    finally:
        if saved is None:
            del os.environ[FORCE_GQA]
        else:
            os.environ[FORCE_GQA] = saved


FORCE_GQA = "TRANSFORMERS_SDPA_FORCE_GQA"


def check_outputs(program: torch.export.ExportedProgram) -> None:
    """One line for a model output that is not a tensor (None, a number, a shape): the module's
    results are tensors."""
    (output,) = [n for n in program.graph.nodes if n.op == "output"]
    values = output.args[0]
    specs = program.graph_signature.output_specs
    user = [i for i, s in enumerate(specs) if s.kind == OutputKind.USER_OUTPUT]
    for position, i in enumerate(user):
        value = values[i]
        val = value.meta.get("val") if isinstance(value, torch.fx.Node) else value
        if isinstance(val, torch.Tensor):
            continue
        what = "None" if val is None else f"a {type(val).__name__} ({val})"
        raise QmlirError(
            f"the model's output {position} is {what}, not a tensor: return tensors only "
            "(drop it from forward's result)"
        )


_aten = torch.ops.aten
# ops whose second argument is a dim that torch-mlir's lowering takes only as a positive one
# (a negative dim crashed iree-compile in TorchToTMTensor: PhiMoE's router scatters on dim -1)
_DIM_ARG_OPS = {
    _aten.scatter.src,
    _aten.scatter.value,
    _aten.scatter.reduce,
    _aten.scatter.value_reduce,
    _aten.scatter_add.default,
    _aten.scatter_reduce.two,
    _aten.gather.default,
    _aten.index_select.default,
}


def positive_dims(program: torch.export.ExportedProgram) -> None:
    """Each scatter's, gather's and index_select's negative dim made positive, in place."""
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target not in _DIM_ARG_OPS:
            continue
        dim, value = node.args[1], node.args[0].meta.get("val")
        if isinstance(dim, int) and dim < 0 and value is not None:
            node.update_arg(1, dim + value.dim())
    program.graph_module.recompile()


def export_decompositions(attention_as_matmuls: bool) -> dict:  # type: ignore[type-arg]
    core = core_aten_decompositions()
    wanted = (
        "aten.new_ones.default",
        "aten.__and__.Tensor",
        "aten.__and__.Scalar",
        "aten.diff.default",
        # torch-mlir imports einsum with its operands as a list, which fails when one is a
        # weight; decomposed, its contractions are bmm/mm the recipe pass sees
        "aten.einsum.default",
        # a static KV cache's update (transformers' StaticLayer); torch-mlir has no lowering
        "aten.index_copy.default",
    )
    table = {op: fn for op, fn in core.items() if str(op) in wanted}
    # BatchNorm in eval mode (an inference compile evaluates the model in eval mode): torch-mlir
    # has no lowering for it; decomposed, it is (x - mean) * rsqrt(var + eps) * weight + bias
    table[torch.ops.aten._native_batch_norm_legit_no_training.default] = _batch_norm_eval
    table[torch.ops.aten.topk.default] = _topk
    # torch.concat (PhiMoE's router): an alias of cat that torch-mlir does not lower
    table[torch.ops.aten.concat.default] = _concat
    if attention_as_matmuls:
        table[SDPA] = sdpa_as_matmuls
    return table


# a topk of at most this many, over at most this many values, is decomposed (an MoE router's:
# 1-8 of 2-256 experts); larger ones stay topk
SMALL_TOPK_K, SMALL_TOPK_N = 8, 512


def _topk(
    x: torch.Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """A small ``topk`` (an MoE router's) as ``k`` rounds of a max (min) and the first index
    holding it among those not taken yet, each a single-result reduction: with dynamic dims
    IREE 3.13 returns wrong indices from the second of two topk (or sort, or argmax) ops of a
    function, its values right (Qwen3-MoE's second router picked experts up to 3 ids off; two
    plain topk of one input: indices up to 59 off). NaN ranks above everything, as in torch;
    equal values go lower index first (torch's CPU topk orders ties its own way); the result is
    sorted (one of the orders ``sorted=False`` allows). Larger ones stay topk, sorted
    (torch-mlir lowers only ``sorted=True``)."""
    n = x.shape[dim]
    if not isinstance(n, int) or k > SMALL_TOPK_K or n > SMALL_TOPK_N:
        if sorted:
            return NotImplemented  # kept as it is
        return torch.ops.aten.topk.default(x, k, dim, largest, True)
    dim = dim % x.dim()
    shape = [1] * x.dim()
    shape[dim] = n
    position = torch.arange(n, device=x.device).reshape(shape)
    nan = torch.isnan(x)
    fill = torch.full_like(x, float("-inf") if largest else float("inf"))

    def first(mask: torch.Tensor) -> torch.Tensor:  # the lowest index where mask, else n
        return torch.where(mask, position, n).amin(dim, keepdim=True)

    free = torch.ones_like(x, dtype=torch.bool)
    indices = []
    for _ in range(k):
        number = free & ~nan
        candidates = torch.where(number, x, fill)
        value = (
            candidates.amax(dim, keepdim=True) if largest else candidates.amin(dim, keepdim=True)
        )
        first_value, first_nan = first(number & (x == value)), first(free & nan)
        if largest:  # NaN first
            index = torch.where(first_nan < n, first_nan, first_value)
        else:  # NaN last
            index = torch.where(first_value < n, first_value, first_nan)
        indices.append(index)
        free = free & (position != index)
    index = torch.cat(indices, dim)
    return x.gather(dim, index), index


def _concat(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    return torch.ops.aten.cat.default(tensors, dim)


def _batch_norm_eval(
    x: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    running_mean: torch.Tensor,
    running_var: torch.Tensor,
    momentum: float,
    eps: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``aten._native_batch_norm_legit_no_training`` (BatchNorm in eval mode) as elementwise
    ops over the channel dim 1: ``(x - mean) * rsqrt(var + eps) * weight + bias``; torch's own
    decomposition goes through the stat-updating ``_native_batch_norm_legit``, which export
    refuses as not functional."""
    del momentum  # eval mode: the running statistics are read, not updated
    shape = [1, -1] + [1] * (x.dim() - 2)
    out = (x - running_mean.view(shape)) * torch.rsqrt(running_var + eps).view(shape)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    empty = x.new_zeros((0,))
    return out, empty, empty


@contextlib.contextmanager
def _quiet_logging() -> Iterator[None]:
    """torch.export prints whole graphs to stderr when it fails; the CLI's error says enough."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logging.disable(previous)
