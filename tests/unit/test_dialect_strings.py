"""No op kind or attribute key of the named-op dialect is spelled outside its definition.

``passes/ir/dialect.py`` defines each op kind (:class:`OpKind`) and each attribute key (a field
of an op's record); every other module of passes/, compiler/ and benchmarks/ reads and writes
them through it. This test reads every string literal (``ast``) and fails on one that equals a
kind or a key, but for the uses below, which mean something else.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from passes.ir.dialect import RECORDS, OpKind

ROOT = Path(__file__).resolve().parents[2]
# the dialect and the enums its attributes take (``Scaling.BLOCK = "block"``)
DEFINITION = {Path("passes/ir/dialect.py"), Path("passes/ir/choices.py")}
PACKAGES = ("passes", "compiler", "benchmarks")

KINDS = {k.value for k in OpKind}
KEYS = {f.name for record in RECORDS.values() for f in dataclasses.fields(record)}

# (file, string): uses of the same word that are not the dialect's.
ALLOWED = {
    # the CLI command and the Python API entry named "quantize", and the API's lazy exports
    ("compiler/cli/__init__.py", "quantize"),
    ("compiler/cli/quantize.py", "quantize"),
    ("compiler/pipeline/quantize.py", "quantize"),
    ("compiler/__init__.py", "quantize"),
    ("compiler/__init__.py", "block_scale_dequantize"),
    # gpu_check's artifact kinds ("quantize": a quantize-core artifact), in its manifest
    ("benchmarks/gpu_check_build.py", "quantize"),
    ("benchmarks/gpu_check_run.py", "quantize"),
    # variant name parts (``@qmlir.quantize.e4m3.block1x32.e8m0.divide...``,
    # ``@qmlir.compute_scale.fp8_per_tensor.e4m3.pow2``), not the keys
    ("passes/recipes/block_scale_ops.py", "divide"),
    ("passes/recipes/fp8_current.py", "pow2"),
    # fp8-delayed's recipe option ``margin`` (its docs), which the record's field carries
    ("passes/recipes/fp8_delayed.py", "margin"),
    # the fused kernels' i32 constants (``%pow2``, ``%rule`` in their launch templates)
    ("passes/lowering/cuda/fused_quantize.py", "pow2"),
    ("passes/lowering/cuda/fused_quantize.py", "rule"),
    # artifact metadata keys (JSON) and the compile option ``gemm_operands``
    ("compiler/backend/artifact.py", "outputs"),
    ("compiler/cli/inspect.py", "format"),
    ("compiler/cli/inspect.py", "outputs"),
    ("compiler/cli/run.py", "outputs"),
    ("compiler/pipeline/describe.py", "outputs"),
    ("compiler/runtime/metadata.py", "format"),
    ("compiler/runtime/metadata.py", "gemm_operands"),
    ("compiler/runtime/metadata_schema.py", "format"),
    ("compiler/runtime/metadata_schema.py", "outputs"),
    ("compiler/runtime/module.py", "outputs"),
    ("benchmarks/cpu.py", "gemm_operands"),
    # compressed-tensors' config: its key "format" and its weight strategy "block"
    ("compiler/frontend/quantized_formats.py", "format"),
    ("compiler/frontend/quantized_formats.py", "block"),
    ("compiler/export/compressed_tensors.py", "format"),
    ("compiler/export/compressed_tensors.py", "block"),
}


def _string_literals(path: Path) -> list[tuple[int, str]]:
    """Each string constant but docstrings and the text parts of f-strings (name parts)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    fragments = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
        if isinstance(part, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings | fragments
    ]


def _spellings() -> tuple[list[str], set[tuple[str, str]]]:
    """Op kinds and attribute keys spelled outside the definition: those the allowlist does
    not name, and every (file, string) pair that was found at all."""
    found, seen = [], set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel in DEFINITION:
                continue
            for line, text in _string_literals(path):
                if text in KINDS | KEYS:
                    seen.add((rel.as_posix(), text))
                    if (rel.as_posix(), text) not in ALLOWED:
                        found.append(f"{rel}:{line}: {text!r}")
    return found, seen


def test_no_kind_or_key_outside_the_dialect() -> None:
    found, _ = _spellings()
    assert not found, "op kinds / attribute keys spelled outside passes/ir/dialect.py:\n" + (
        "\n".join(found)
    )


def test_the_allowlist_has_no_stale_entry() -> None:
    """Each allowed spelling still occurs where the allowlist says (a moved or removed one
    would otherwise keep allowing the string in a file that no longer needs it)."""
    _, seen = _spellings()
    assert sorted(ALLOWED - seen) == []
