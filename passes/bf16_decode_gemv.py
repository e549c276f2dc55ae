"""Pass ``bf16-decode-gemv`` (llvm-cpu): a one-row ``linear`` (a generator's decode step, its
prefill's head over the last position) multiplies its bf16 weight as stored, in a
matrix-vector product.

After ``widen-bf16-matmuls`` a bf16 model's ``linear`` multiplies f32 operands, its weight
widened by its bits (``passes/ir/widening.py``). IREE's data-tiled GEMM then needs that f32 copy
packed into its tiles: a decode step either held the widened, packed copy of every weight beside
the mapped parameter file (``--pack-weights decoded``: 3x the bf16 file in memory, 2.86x file
and cache at 0.35B, benchmarks/RESULTS.md) or rewrote it at every step (``call``), and a
prompt's prefill widened and packed the model's head (32000 x 1024 at 0.35B: 131 MB in f32) for
the one position it multiplies. Here each ``torch.aten.linear`` (any function: ``@decode``,
``passes/add_decode_step.py``, the prefill's head, a model compiled for one row) whose
activation is one static f32 row of ``K`` values (``K`` a multiple of 32) and whose weight is
a widened bf16 weight ``[N, K]`` (a literal or a global) becomes a call of a hand-written
matrix-vector product over the bf16 weight as stored
(``lowering/cpu/templates/gemv_bf16_executable.mlir``: each weight widened in registers, f32
FMAs), its bias (if any) added after in f32, as the linear
adds it. The values are the data-tiled GEMM's up to the order of the f32 sums: the same exact
widening, the same products. The weight's widening, now unused, is erased, so the decode step
reads no decoded copy (``decode_step_reads_codes``: ``pack_weights="auto"`` then keeps none).

On a CPU with AVX512-BF16 a bf16 model's GEMMs take bf16 operands (``--gemm-operands auto``)
and are not widened: IREE's bf16 GEMM held a packed bf16 copy of each weight beside the file.
A one-row bf16 ``linear`` there takes the same product, its activation widened first (exact),
its bias added to the f32 sums and the sum rounded to bf16 once, as torch's bf16 ``linear`` and
IREE's data-tiled GEMM (its bias fused into the sums) round; again only the sums' order differs.

The pipeline runs it after ``widen-bf16-matmuls`` where ``decode-gemv`` runs (a CPU with AVX2,
FMA and F16C, or AVX512-BF16 and -VBMI, ``decode_gemv="auto"``).
"""

from __future__ import annotations

import dataclasses
import math

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.functions import function_names
from passes.ir.types import TensorInfo, shape_text, tensor_info
from passes.ir.walk import ops_where
from passes.ir.widening import Widener, is_weight, widened_from
from passes.lowering.cpu.common import definition, fragment
from passes.lowering.cpu.gemv import workgroup_rows

STEP = 32  # weights a step of a row's loop takes (64 bytes)
PREFIX = "qmlir.gemv_bf16."


@dataclasses.dataclass(frozen=True)
class _Site:
    linear: ir.Operation
    x: TensorInfo  # the activation: one row, f32 (widened) or bf16 (native)
    weight: ir.Value  # the bf16 weight (a vtensor [N, K]): a literal or a global's value
    widened: ir.Operation | None  # torch_c.from_builtin_tensor of its widening (widened form)


def _bf16_weight(value: ir.Value) -> tuple[ir.Value, ir.Operation | None] | None:
    """The bf16 weight ``value`` is or widens, and the op making the widened ``value`` (None
    for a bf16 ``value``); None unless that weight is a literal or a global."""
    info = tensor_info(value.type, dynamic=True)
    op = torch_ops.defining_op(value)
    if info is not None and info.dtype == "bf16":
        source, widened = value, None
    elif op is not None and op.name == "torch_c.from_builtin_tensor":
        source, widened = widened_from(op.operands[0]), op
    else:
        return None
    return (source, widened) if source is not None and is_weight(source) else None


def _site(op: ir.Operation) -> _Site | None:
    """A one-row linear this pass takes: f32 operands with a widened bf16 weight, or bf16 ones
    (IREE's bf16 GEMM, ``--gemm-operands bf16``), as :func:`_rewrite` needs them."""
    x = tensor_info(op.operands[0].type, dynamic=True)
    out = tensor_info(op.results[0].type, dynamic=True)
    w = tensor_info(op.operands[1].type, dynamic=True)
    if x is None or out is None or w is None or w.rank != 2 or not w.is_static:
        return None
    k, one_row = w.shape[1], x.is_static and math.prod(x.shape[:-1]) == 1
    if not one_row or x.shape[-1] != k or k % STEP or not x.dtype == out.dtype == w.dtype:
        return None
    if x.dtype not in ("f32", "bf16"):
        return None
    found = _bf16_weight(op.operands[1])
    return None if found is None else _Site(op, x, *found)


@register_pass
@dataclasses.dataclass(frozen=True)
class Bf16DecodeGemv(ModulePass):
    name = "bf16-decode-gemv"

    def apply(self, module: ir.Module) -> None:
        linears = ops_where(module.operation, lambda op: op.name == "torch.aten.linear")
        names = function_names(module)
        widener = Widener(module)
        for op in linears:
            site = _site(op)
            if site is not None:
                _rewrite(module, names, widener, site)


def _rewrite(module: ir.Module, names: set[str], widener: Widener, site: _Site) -> None:
    """The linear as the matrix-vector product's call: widened, its f32 result plus the f32
    bias (``widen-bf16-matmuls``' one rounding after); native bf16, its result plus the bias
    in f32, rounded to bf16 once (torch's bf16 ``linear``, IREE's fused data-tiled GEMM)."""
    op = site.linear
    n, k = tensor_info(site.weight.type, dynamic=True).shape  # type: ignore[union-attr]
    out = TensorInfo((*site.x.shape[:-1], n), "f32")
    name = f"{PREFIX}{'x'.join(str(d) for d in site.x.shape)}.{n}"
    if name not in names:
        _add(module, name, site.x.with_dtype("f32"), n, k)
        names.add(name)
    with ir.InsertionPoint(op), op.location:
        x = op.operands[0]
        x_f32 = widener.widen(x) if site.x.dtype == "bf16" else x
        call = ir.Operation.create(
            "func.call",
            results=[out.builtin()],
            operands=[torch_ops.to_builtin(x_f32), torch_ops.to_builtin(site.weight)],
            attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
        )
    torch_ops.replace_linear(op, call, site.x.dtype)
    if site.widened is not None:  # the weight's widening, now unused, back to its source
        torch_ops.erase_unused(site.widened)


def _add(module: ir.Module, name: str, x: TensorInfo, n: int, k: int) -> None:
    """Adds :func:`gemv_definitions` to ``module``."""
    for text in gemv_definitions(name, x, n, k):
        module.body.append(ir.Operation.parse(text))


def gemv_definitions(name: str, x: TensorInfo, n: int, k: int) -> list[str]:
    """The text of the matrix-vector product's executable and of ``@name``, the function
    dispatching it: ``x`` (one f32 row of ``k``) times a bf16 weight ``[n, k]`` transposed."""
    exe, fn = f"{name}$executable", f"{name}$gemv"
    dims = ", ".join(str(i) for i in range(x.rank))
    executable = fragment("gemv_bf16_executable.mlir", exe=exe, fn=fn, N=n, K=k,
                          rows=workgroup_rows(n))  # fmt: skip
    function = definition(
        "gemv_bf16.mlir",
        name=name,
        exe=exe,
        fn=fn,
        N=n,
        K=k,
        x_shape=shape_text(x.shape),
        x_dims=dims,
        out_shape=shape_text((*x.shape[:-1], n)),
        out_sizes=", ".join(str(d) for d in (*x.shape[:-1], n)),
    )
    return [executable, function]
