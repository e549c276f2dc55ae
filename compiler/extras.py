"""The ``compile`` extra: which features need it, and the one-line error where it is missing.

``pip install qmlir`` loads, runs and inspects artifacts; compiling needs ``pip install
'qmlir[compile]'`` (torch, torch-mlir, iree-base-compiler). A feature that needs the extra calls
:func:`require` before importing it, so a runtime-only install names the extra to install
(:class:`MissingExtra`) instead of failing on an import deep inside. Only the standard library
is imported here.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable

from passes.base.errors import QmlirError

EXTRA = "compile"
INSTALL = f"pip install 'qmlir[{EXTRA}]'"

# what each feature imports: compiling a model needs all three, building IR needs iree.compiler
COMPILE = ("torch", "torch_mlir", "iree.compiler")
IR = ("iree.compiler",)
TORCH = ("torch",)

# module -> the distribution that provides it
DISTRIBUTIONS = {
    "torch": "torch",
    "torch_mlir": "torch-mlir",
    "iree.compiler": "iree-base-compiler",
}


class MissingExtra(QmlirError, ImportError):
    """A feature's part of the ``compile`` extra is not installed.

    An ``ImportError`` too, so ``try: from compiler import compile`` / ``except ImportError``
    still works; the CLI prints the one line and exits 2.
    """

    def __init__(self, feature: str, missing: Iterable[str]) -> None:
        self.feature = feature
        self.missing = tuple(missing)
        names = ", ".join(DISTRIBUTIONS.get(m, m) for m in self.missing)
        super().__init__(f"{feature} needs the {EXTRA} extra (missing {names}): {INSTALL}")

    def __reduce__(self) -> tuple[type[MissingExtra], tuple[str, tuple[str, ...]]]:
        return type(self), (self.feature, self.missing)


def _installed(module: str) -> bool:
    if module in sys.modules:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package, or one that refuses
        return False


def missing(modules: Iterable[str] = COMPILE) -> tuple[str, ...]:
    """Which of ``modules`` cannot be imported here (found without importing them)."""
    return tuple(m for m in modules if not _installed(m))


def require(feature: str, modules: Iterable[str] = COMPILE) -> None:
    """Raise :class:`MissingExtra` naming ``feature`` unless every one of ``modules`` is
    installed."""
    absent = missing(modules)
    if absent:
        raise MissingExtra(feature, absent)


def from_import_error(feature: str, error: ImportError) -> MissingExtra | None:
    """The :class:`MissingExtra` an escaped ``ImportError`` stands for, when it names a module of
    the extra (``No module named 'torch'``, ``cannot import name 'compiler' from 'iree'``)."""
    name = error.name or ""
    if name == "iree" and "'compiler'" in str(error):
        name = "iree.compiler"
    for module in COMPILE:
        if name == module or name.startswith(module + "."):
            return MissingExtra(feature, (module,))
    return None
