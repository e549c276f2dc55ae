"""Pass ``add-decode-step``: a generator's decode function, ``@main`` with one token a call.

A generator's ``@main(input_ids [batch, T], start [1])`` takes any number of tokens T (the
prefill of a prompt, or one token of a decode step), so every shape that follows from T is
dynamic: on llvm-cpu each GEMM is a dynamic-M matmul (packed and tiled for many rows), on cuda
a dynamic-M GEMM's two launches, and IREE records the call's command buffer anew at every call.
This pass adds ``@<decode>`` (``decode``), a copy of ``@<function>`` whose argument ``arg`` has
its dim ``dim`` at 1, then refines the copy's types with torch-mlir's shape refinement, so that
every shape that follows from that 1 is static (a one-row GEMM; a command buffer IREE records
once where the batch is static too). torch-mlir's refinement leaves the pieces of a split
(``split.Tensor``, ``split_with_sizes``, unpacked from their list: Phi-3's fused gate_up) as
they were; they are given their sizes and the copy refined again, so the shapes after them are
static too. The refinement runs on a scratch copy of the module
without the other functions' bodies, the copy's literals (weights, placeholders of weights held
outside among them) hidden as arguments so that no fold computes on them.

Runs on the imported torch IR before the recipe pass (which then quantizes both functions'
matmuls with static named ops for ``@decode``) and before ``hold-buffers`` (which gives both the
same buffers: ``arg`` counts the held buffers' arguments first). Where the refinement fails
(an op torch-mlir's shape library does not know), it raises :class:`RefinementFailed` and
leaves the module as it was: the compile goes on without ``@decode``. Options: ``function``
(``main``), ``decode`` (``decode``), ``arg`` (0), ``dim`` (1: the tokens).
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir
from iree.compiler.passmanager import PassManager

from passes.base.errors import QmlirError, exception_summary
from passes.base.module_pass import ModulePass, register_pass
from passes.ir import torch_ops
from passes.ir.named_ops import entry_function
from passes.ir.types import DYNAMIC, TensorInfo, tensor_info
from passes.ir.walk import ops_where

CAST = "torch.tensor_static_info_cast"
REFINE = "torch-shape-refinement-pipeline"
LITERAL = "torch.vtensor.literal"
SPLITS = ("torch.aten.split.Tensor", "torch.aten.split_with_sizes")
MAX_SPLIT_ROUNDS = 4  # refinements after making split pieces static (nested splits)


@register_pass
@dataclasses.dataclass(frozen=True)
class AddDecodeStep(ModulePass):
    name = "add-decode-step"

    function: str = "main"
    decode: str = "decode"
    arg: int = 0
    dim: int = 1

    def apply(self, module: ir.Module) -> None:
        source = entry_function(module, self.function)
        block = source.regions[0].blocks[0]
        if self.arg >= len(block.arguments):
            raise QmlirError(f"@{self.function} has no argument {self.arg}")
        dynamic = block.arguments[self.arg].type
        info = tensor_info(dynamic, dynamic=True)
        if info is None or not 0 <= self.dim < info.rank or info.shape[self.dim] != DYNAMIC:
            raise QmlirError(
                f"@{self.function}'s argument {self.arg} ({dynamic}) has no dynamic dim {self.dim}"
            )
        shape = tuple(1 if i == self.dim else d for i, d in enumerate(info.shape))
        static = TensorInfo(shape, info.dtype).vtensor()
        with ir.InsertionPoint(module.body):
            copy = source.clone()
        copy.move_after(source)
        copy.attributes["sym_name"] = ir.StringAttr.get(self.decode)
        entry = copy.regions[0].blocks[0]
        arg = entry.arguments[self.arg]
        arg.set_type(static)
        with ir.InsertionPoint.at_block_begin(entry), copy.location:
            cast = ir.Operation.create(CAST, results=[dynamic], operands=[arg])
        arg.replace_all_uses_except(cast.result, cast)
        signature = ir.FunctionType(ir.TypeAttr(copy.attributes["function_type"]).value)
        inputs = [static if i == self.arg else t for i, t in enumerate(signature.inputs)]
        copy.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(inputs, list(signature.results))
        )
        _refine(module, copy)


class RefinementFailed(QmlirError):
    """The copy's shapes could not be refined; the module is left as it was (no copy)."""


def _name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _refine(module: ir.Module, function: ir.Operation) -> None:
    """``function``'s types refined from its arguments by torch-mlir's shape refinement (every
    shape that follows from the static argument becomes static), run on a copy of the module
    without the other functions' bodies, which stay as they are; the refined function then
    takes the place of ``function``. Its literals (the weights, placeholders among them) are
    arguments while it is refined, so that no fold computes on them: a placeholder is a zero
    splat that names a tensor held outside (``passes/ir/parameters.py``), whose fold would be
    zeros; they come back as they were."""
    name = _name(function)
    literals = _literals(function)
    scratch = module.operation.clone()  # its attributes (the weights) shared, not copied
    body = scratch.regions[0].blocks[0]
    for op in list(body.operations):
        op = op.operation
        if op.name == "func.func" and _name(op) != name and len(op.regions[0].blocks) > 0:
            op.erase()
    hidden = _function(body, name)
    base = _hide(hidden, _literals(hidden))
    try:
        PassManager.parse(f"builtin.module({REFINE})").run(scratch)
        # torch-mlir leaves a split's pieces (a list unpacked) as they were: given their sizes,
        # it refines again from them (Phi-3's fused gate_up, split in two)
        for _ in range(MAX_SPLIT_ROUNDS):
            if not _refine_split_pieces(_function(body, name)):
                break
            PassManager.parse(f"builtin.module({REFINE})").run(scratch)
    except Exception as e:  # the model has an op torch-mlir's shape library does not know
        function.erase()
        raise RefinementFailed(
            f"torch-mlir's shape refinement could not make @{name} static: {exception_summary(e)}"
        ) from e
    refined = _function(body, name)
    refined.move_after(function)
    _restore(refined, literals, base)
    function.erase()


def _refine_split_pieces(function: ir.Operation) -> bool:
    """Each ``torch.prim.ListUnpack`` of a ``torch.aten.split.Tensor`` or ``split_with_sizes``
    (constant sizes and dim) of a tensor whose shape is static along the split, its pieces'
    shapes made the input's with the split dim's piece sizes, where that refines them; whether
    any changed."""
    changed = False
    for unpack in ops_where(function, lambda op: op.name == "torch.prim.ListUnpack"):
        split = torch_ops.defining_op(unpack.operands[0])
        if split is None or split.name not in SPLITS:
            continue
        x = tensor_info(split.operands[0].type, dynamic=True)
        dim = torch_ops.constant_number(split.operands[2])
        if x is None or dim is None:
            continue
        axis = int(dim) % x.rank
        total = x.shape[axis]
        if total == DYNAMIC:
            continue
        if split.name == "torch.aten.split.Tensor":
            size = torch_ops.constant_number(split.operands[1])
            if size is None or size <= 0:
                continue
            sizes = [min(int(size), total - s) for s in range(0, total, int(size))]
        else:
            given = torch_ops.constant_ints(split.operands[1])
            if given is None or sum(given) != total:
                continue
            sizes = given
        if len(sizes) != len(unpack.results):
            continue
        for piece, size in zip(unpack.results, sizes, strict=True):
            old = tensor_info(piece.type, dynamic=True)
            shape = tuple(size if i == axis else d for i, d in enumerate(x.shape))
            if old is None or len(old.shape) != len(shape):
                continue
            pairs = list(zip(old.shape, shape, strict=True))
            if any(o not in (DYNAMIC, s) and s != DYNAMIC for o, s in pairs):
                continue  # a static dim that disagrees: left to torch-mlir
            merged = tuple(s if o == DYNAMIC else o for o, s in pairs)
            if merged != old.shape:
                piece.set_type(TensorInfo(merged, old.dtype).vtensor())
                changed = True
    return changed


def _function(body: ir.Block, name: str) -> ir.Operation:
    return next(
        op.operation
        for op in body.operations
        if op.operation.name == "func.func" and _name(op.operation) == name
    )


def _literals(function: ir.Operation) -> list[ir.Operation]:
    found = ops_where(function, lambda op: op.name == LITERAL)
    return found


def _hide(function: ir.Operation, literals: list[ir.Operation]) -> int:
    """Each of ``literals`` replaced by a new argument of ``function``, in order; the index of
    the first."""
    entry = function.regions[0].blocks[0]
    base = len(entry.arguments)
    for op in literals:
        value = op.results[0]
        value.replace_all_uses_with(entry.add_argument(value.type, op.location))
        op.erase()
    _retype(function)
    return base


def _restore(function: ir.Operation, literals: list[ir.Operation], base: int) -> None:
    """The arguments from ``base`` on replaced by copies of ``literals`` again, and dropped."""
    entry = function.regions[0].blocks[0]
    for index, op in enumerate(literals):
        copy = op.clone(ip=ir.InsertionPoint.at_block_begin(entry))
        entry.arguments[base + index].replace_all_uses_with(copy.results[0])
    for index in reversed(range(base, base + len(literals))):
        entry.erase_argument(index)
    _retype(function)


def _retype(function: ir.Operation) -> None:
    """``function``'s type from its entry block's arguments (its results as they were)."""
    signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    inputs = [a.type for a in function.regions[0].blocks[0].arguments]
    function.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(inputs, list(signature.results))
    )
    for key in ("arg_attrs",):
        if key in function.attributes:
            del function.attributes[key]
