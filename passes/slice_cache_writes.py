"""Pass ``slice-cache-writes``: a write of consecutive cache positions becomes a slice's.

Expects torch-dialect IR. A generator's KV cache layer writes a call's keys and values at
positions ``start .. start+n-1`` (``compiler/frontend/cached_decoder.py``: ``index_copy_`` along
the positions dim with ``remainder(arange(n) + start, N)``, the form ``check-indices`` knows to
be within the cache's ``N`` positions), which the importer gives as::

    %pos = remainder.Scalar(add.Tensor(arange(%n), %start, 1), N)
    %new = index_put %cache, [None, .., %pos, None ..], %values, false

torch-mlir lowers that ``index_put`` to a scatter whose indices hold every element's full
coordinates (``[.., n, .., rank] i64``), computed and then read one element at a time: a 512-token
prefill of a 24-layer 0.35B Llama spent 25-36 ms of CPU time on its caches' scatters, for 12.6 MB
written (benchmarks/RESULTS.md). This pass gives such a write as
``slice_scatter(%cache, %values, dim, s, s + n)`` with ``s = min(max(start, 0), N - n)``: a copy
of the values into the cache at a dynamic offset.

Only ``@<function>`` (``main``: a generator's prefill) is rewritten. The slice's offset is read
on the host (a ``flow.tensor.load`` of ``start`` at the call's beginning, once for every layer):
nothing next to a prefill's work, but a decode step's one-position scatter costs less than that
wait (the 0.35B fp8-current step took 0.1-0.5 ms longer with its writes as slices, IREE's
runtime threads 2.9 ms more CPU time a step), so ``@decode`` keeps its scatters. The pipeline
runs the pass for llvm-cpu artifacts (on cuda the read would be a round trip to the host; not
measured there).

The same positions for every call the runtime makes: it refuses a call whose positions would
pass the cache's end (``Generator.step``), so ``start`` is in ``[0, N - n]`` and the remainder
is the identity. A raw call (the module's function run without qmlir's runtime) past the end
writes the cache's last ``n`` positions where torch's form would wrap to its first: in bounds,
never outside the buffer. ``n`` is the values' extent along the dim (the index and the values
agree there, as ``index_put`` requires, both being the call's tokens).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.abi import ENTRY
from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.named_ops import find_function
from passes.ir.types import DYNAMIC, tensor_info
from passes.ir.walk import ops_where

INDEX_PUTS = ("torch.aten.index_put", "torch.aten.index_put.hacked_twin")
TORCH_INT = "!torch.int"


@dataclasses.dataclass(frozen=True)
class CacheWrite:
    """An ``index_put`` writing ``values`` at positions ``start ..`` along ``dim``."""

    op: ir.Operation
    dim: int
    start: ir.Value  # a one-element si64 tensor
    positions: int  # the cache's extent along ``dim`` (N)


def _start_of(positions: ir.Value, extent: int, count: int) -> ir.Value | None:
    """``start`` if ``positions`` is ``remainder(arange(n) + start, extent)`` (``start`` one
    si64 element) with ``n`` the values' ``count`` along the dim (both dynamic, or both the
    same size: values of one position broadcast over several are no slice), else None."""
    remainder = torch_ops.defining_op_named(positions, "torch.aten.remainder.Scalar")
    if remainder is None or torch_ops.constant_number(remainder.operands[1]) != extent:
        return None
    add = torch_ops.defining_op_named(remainder.operands[0], "torch.aten.add.Tensor")
    if add is None or torch_ops.constant_number(add.operands[2]) != 1:
        return None
    arange = torch_ops.defining_op_named(add.operands[0], "torch.aten.arange")
    if arange is None or not torch_ops.is_none(arange.operands[1]):
        return None
    length = tensor_info(arange.results[0].type, dynamic=True)
    if length is None or length.shape != (count,):
        return None
    start = tensor_info(add.operands[1].type, dynamic=True)
    if start is None or start.dtype != "si64" or start.shape not in ((), (1,)):
        return None
    return add.operands[1]


def find_cache_write(op: ir.Operation) -> CacheWrite | None:
    """``op`` (an ``index_put``) as a write of consecutive positions along one dim, else None."""
    accumulate = torch_ops.defining_op_named(op.operands[3], "torch.constant.bool")
    if accumulate is None or ir.BoolAttr(accumulate.attributes["value"]).value:
        return None
    cache = tensor_info(op.operands[0].type, dynamic=True)
    values = tensor_info(op.operands[2].type, dynamic=True)
    indices = torch_ops.defining_op_named(op.operands[1], "torch.prim.ListConstruct")
    if cache is None or values is None or indices is None:
        return None
    if len(values.shape) != len(cache.shape) or values.dtype != cache.dtype:
        return None
    given = [i for i, index in enumerate(indices.operands) if not torch_ops.is_none(index)]
    if len(given) != 1 or DYNAMIC in cache.shape:
        return None
    dim = given[0]
    # the other dims are written whole: the values span the cache there
    if any(
        v != c for i, (v, c) in enumerate(zip(values.shape, cache.shape, strict=True)) if i != dim
    ):
        return None
    start = _start_of(indices.operands[dim], cache.shape[dim], values.shape[dim])
    if start is None:
        return None
    return CacheWrite(op, dim, start, cache.shape[dim])


def _int_op(name: str, *operands: ir.Value) -> ir.Value:
    return ir.Operation.create(
        name, results=[ir.Type.parse(TORCH_INT)], operands=list(operands)
    ).result


def slice_write(write: CacheWrite) -> ir.Value:
    """The ``slice_scatter`` of ``write``'s values at its clamped start (built before it)."""
    op = write.op
    cache, values = op.operands[0], op.operands[2]
    dim = torch_ops.constant_int(write.dim)
    n = _int_op("torch.aten.size.int", values, dim)
    last = _int_op("torch.aten.sub.int", torch_ops.constant_int(write.positions), n)
    start = _int_op("torch.aten.Int.Tensor", write.start)
    start = _int_op("torch.prim.max.int", start, torch_ops.constant_int(0))
    start = _int_op("torch.prim.min.int", start, last)
    end = _int_op("torch.aten.add.int", start, n)
    return ir.Operation.create(
        "torch.aten.slice_scatter",
        results=[op.results[0].type],
        operands=[cache, values, dim, start, end, torch_ops.constant_int(1)],
    ).result


@register_pass
@dataclasses.dataclass(frozen=True)
class SliceCacheWrites(ModulePass):
    name = "slice-cache-writes"

    function: str = ENTRY

    def apply(self, module: ir.Module) -> None:
        function = find_function(module, self.function)
        if function is None:
            return
        for op in ops_where(function, lambda op: op.name in INDEX_PUTS):
            write = find_cache_write(op)
            if write is None:
                continue
            with ir.InsertionPoint(op), op.location:
                written = slice_write(write)
            op.results[0].replace_all_uses_with(written)
            torch_ops.erase_unused(op)
