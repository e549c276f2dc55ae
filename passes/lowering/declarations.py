"""Replaces named-op declarations by their lowered definitions, one definition at a time.

Each definition is parsed on its own: one that does not parse is reported with its op, its
template (the ``// template:`` comment ending its last line) and the saved text. Its ops'
locations (``"-":line:col``, kept in the artifact's debug information) are those of one text
holding every definition in order, as the lowering has always numbered them: each definition
is parsed after as many empty lines as the definitions before it hold, so artifacts stay
byte-identical across this change.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.dialect import decode_kind
from passes.ir.named_ops import is_named_op_decl, symbol_name
from passes.lowering.cpu.lower import lower_cpu
from passes.lowering.cpu.tiling import strip_cpu_tiling
from passes.lowering.cuda.lower import lower_cuda
from passes.lowering.definitions import TEMPLATE_MARK


def named_op_declarations(module: ir.Module) -> list[ir.Operation]:
    """The module's named ops that have no body yet."""
    return [
        op.operation
        for op in module.body.operations
        if is_named_op_decl(op.operation) and len(op.operation.regions[0].blocks) == 0
    ]


def lowered_text(decl: ir.Operation, cuda_arch: str | None = None) -> str:
    """``decl``'s definition: the cuda lowering's where it has one (``cuda_arch`` set), else
    the llvm-cpu lowering's (plain linalg/arith, which IREE compiles for cuda too)."""
    if cuda_arch:
        text = lower_cuda(decl, cuda_arch)
        if text is not None:
            return text
    return lower_cpu(decl)


def lower_declarations(
    module: ir.Module, decls: list[ir.Operation], cuda_arch: str | None = None
) -> None:
    """Replaces each declaration in ``module`` by its lowered definition, in place.

    ``cuda_arch`` None: the llvm-cpu lowering; else the cuda lowering for that architecture.
    """
    line = 0  # lines of the definitions before this one
    with module.context:
        for decl in decls:
            text = lowered_text(decl, cuda_arch)
            # kept alive while its op moves (TOOLCHAIN.md)
            lowered = parse_definition(decl, text, line)
            line += text.count("\n") + 1
            # the definition, after the executables it dispatches (gemv.py's) if any
            for op in list(lowered.body.operations):
                if cuda_arch:  # the llvm-cpu templates' tiling means nothing to the cuda backend
                    strip_cpu_tiling(op.operation)
                op.operation.move_before(decl)
            decl.erase()
            del lowered


def parse_definition(decl: ir.Operation, text: str, first_line: int = 0) -> ir.Module:
    """``text`` parsed as a module, numbered from line ``first_line + 1``; a one-line error
    naming the op and its template otherwise."""
    try:
        return ir.Module.parse("\n" * first_line + text)
    except ir.MLIRError as e:
        raise _unparsable(decl, text, e) from e


def _unparsable(decl: ir.Operation, text: str, error: ir.MLIRError) -> QmlirError:
    try:  # again, numbered from 1: the diagnostic's lines are the saved file's
        ir.Module.parse(text)
    except ir.MLIRError as local:
        error = local
    mark = text.rfind(TEMPLATE_MARK)
    origin = text[mark + len(TEMPLATE_MARK) :].split()[0] if mark >= 0 else "?"
    fd, saved = tempfile.mkstemp(prefix="qmlir-lowering-", suffix=".mlir")
    with open(fd, "w") as f:
        f.write(text)
    detail = " ".join(line.strip() for line in str(error).strip().splitlines()[:3])
    return QmlirError(
        f"the lowering of named op {decode_kind(decl).value} @{symbol_name(decl)} "
        f"(template {origin}) does not parse: {detail}; IR saved to {Path(saved)}"
    )
