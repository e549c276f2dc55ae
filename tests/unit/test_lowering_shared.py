"""The two lowerings, llvm-cpu and cuda, share what they both need from ``passes/lowering/``
(``definitions.py``: templates into definitions; ``dims.py``: dynamic dims) and import nothing
from each other; their MLIR is in ``.mlir`` templates, not in Python strings.

Read from the source (``ast``), function-local imports counted.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

LOWERING = Path(__file__).resolve().parents[2] / "passes" / "lowering"
TARGETS = ("cpu", "cuda")
# an op or attribute of an MLIR dialect spelled in a string (`arith.constant`, `#hal.pipeline`)
MLIR = re.compile(r"\b(?:arith|tensor|linalg|hal|func|affine|scf)\.[a-z_]+")


def _modules(target: str) -> list[Path]:
    return sorted((LOWERING / target).glob("*.py"))


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports (``from a import b``: ``a`` and ``a.b``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{alias.name}" for alias in node.names}
    return out


def _strings(path: Path) -> list[str]:
    """The string literals of ``path`` but its docstrings (f-strings' literal parts too)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_a_target_imports_not_the_other(target: str) -> None:
    (other,) = set(TARGETS) - {target}
    offenders = [
        f"{path.name}: {name}"
        for path in _modules(target)
        for name in sorted(_imported(path))
        if name == f"passes.lowering.{other}" or name.startswith(f"passes.lowering.{other}.")
    ]
    assert offenders == []
    assert _modules(target), f"no modules under passes/lowering/{target}"


def test_both_targets_take_dynamic_dims_from_one_helper() -> None:
    """``dims.py`` is the only module spelling the ops that read or derive a dynamic size; both
    targets' lowerings use it."""
    users = {
        target: [p.name for p in _modules(target) if "passes.lowering.dims" in _imported(p)]
        for target in TARGETS
    }
    assert "common.py" in users["cpu"] and "fused_quantize.py" in users["cuda"]
    readers = [
        p.relative_to(LOWERING).as_posix()
        for p in sorted(LOWERING.rglob("*.py"))
        if any(re.search(r"tensor\.dim\b|arith\.(muli|ceildivui)", s) for s in _strings(p))
    ]
    assert readers == []
    dim_templates = {p.name for p in (LOWERING / "templates").glob("dim_*.mlir")}
    assert dim_templates == {"dim_read.mlir", "dim_mul.mlir", "dim_ceildiv.mlir", "dim_times.mlir"}


def test_cuda_lowerings_hold_no_mlir_in_strings() -> None:
    """(``targets.py`` names the ``hal.device.targets`` attribute it reads from its templates.)"""
    lowerings = [p for p in _modules("cuda") if p.name != "targets.py"]
    found = [
        f"{path.name}: {text!r}"
        for path in [*lowerings, LOWERING / "dims.py", LOWERING / "definitions.py"]
        for text in _strings(path)
        if MLIR.search(text)
    ]
    assert found == []


def test_the_string_check_sees_mlir() -> None:
    assert MLIR.search("arith.index_cast %m : index to i32")
    assert MLIR.search("#hal.pipeline.binding<storage_buffer>")
    assert not MLIR.search("runtime_kernels/ family.cu, ttype.shape")
