"""Every Python pass of a compile runs through :func:`run_pass`, so a failing one leaves what
reproduces it, as the IREE stage does (``compiler/backend/iree_compile.py``).

Before each pass the module is cloned (cheap: large constants are attributes uniqued in the
context, not copied). A pass that raises anything but a :class:`QmlirError` has a bug (an
assertion, a ``KeyError``, an IR the verifier refuses): its *input* IR goes to a
``qmlir-repro-*`` directory (``compiler/backend/repro.py``) and the error names the
``python -m passes`` command that runs the same pass on it. A :class:`QmlirError` is the user's
(an option, a model the recipe cannot take): its one line says it all and passes through as it
is. Options that text cannot carry (``hold-training-state``'s initial values) are left out of
the command.
"""

from __future__ import annotations

import shlex

from iree.compiler import ir

from compiler.backend.repro import new_repro_dir, size_text
from passes.base.errors import QmlirError, exception_summary
from passes.base.module_pass import ModulePass


def run_pass(p: ModulePass, module: ir.Module) -> None:
    """``p.apply(module)``; an internal error becomes a :class:`QmlirError` with a repro."""
    before = module.operation.clone().operation
    try:
        p.apply(module)
    except QmlirError:
        raise
    except Exception as e:
        raise pass_failure(p, before, e) from e
    finally:
        before.erase()


def pass_failure(p: ModulePass, before: ir.Operation, error: Exception) -> QmlirError:
    """The one-line error of pass ``p`` failing on ``before`` (its input), which it saves."""
    failing = new_repro_dir() / "failing.mlir"
    failing.write_text(before.get_asm(enable_debug_info=True))
    command = shlex.join(["python", "-m", "passes", "-p", p.spec(), str(failing)])
    return QmlirError(
        f"internal error in pass '{p.name}': {exception_summary(error)}; its input IR "
        f"({size_text(failing.stat().st_size)}) saved to {failing}; reproduce with: {command}"
    )
