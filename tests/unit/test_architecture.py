"""The import graph of compiler/, passes/ and runtime_kernels/: layers that only point down.

Read from the source (``ast``), every import counted, function-local ones too: no cycle, no
import of another module's private name, and each layer of ``passes/`` imports only the layers
under it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compiler", "passes", "runtime_kernels")

# What each part of passes/ may import (besides itself); a pass module may import any part.
LAYERS = {
    "passes.base": set(),
    "passes.ir": {"passes.base"},
    "passes.recipes": {"passes.base", "passes.ir"},
    "passes.lowering": {"passes.base", "passes.ir", "runtime_kernels"},
    "passes.host": {"passes.base", "passes.ir", "passes.lowering"},
    "passes.fusion": {"passes.base", "passes.ir"},
    # the kernels' declaration (passes/ir/cuda_kernels.py) is the dialect's: nvrtc reads it
    "runtime_kernels": {"passes.base", "passes.ir"},
}
PASS_MODULES = (
    "passes.quantize_matmuls",
    "passes.expose_scaling_state",
    "passes.fold_constant_quantize",
    "passes.fold_weight_views",
    "passes.fuse_quantize_core",
    "passes.gemm_operands",
    "passes.hold_training_state",
    "passes.lower_named_ops",
    "passes.probe_gemms",
    "passes.training_gemms",
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The project module ``name`` names (a module, or the package it is in), else None."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> list[tuple[str, list[str]]]:
    """(imported module, names taken from it) for every import statement of ``module``."""
    tree = ast.parse(MODULES[module].read_text())
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [alias.name for alias in node.names]
            out.append((node.module, names))
            for name in names:  # `from pkg import submodule`
                if f"{node.module}.{name}" in MODULES:
                    out.append((f"{node.module}.{name}", []))
    return out


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module in MODULES:
        for imported, _ in _imports(module):
            target = _resolve(imported)
            if target is not None and target != module:
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _layer(module: str) -> str | None:
    for layer in sorted(LAYERS, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def test_the_graph_is_read() -> None:
    graph = _graph()
    assert "passes.ir.named_ops" in graph["passes.quantize_matmuls"]
    assert "passes.base.errors" in graph["compiler.runtime.module"]


def test_no_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_a_cycle_would_be_found() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_name_of_another_module() -> None:
    offenders = [
        f"{module}: from {imported} import {name}"
        for module in MODULES
        for imported, names in _imports(module)
        for name in names
        if name.startswith("_") and not name.startswith("__") and _resolve(imported) != module
    ]
    assert offenders == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) is not None))
def test_layers_point_down(module: str) -> None:
    layer = _layer(module)
    assert layer is not None
    allowed = LAYERS[layer] | {layer}
    for target in _graph()[module]:
        target_layer = _layer(target)
        assert target_layer in allowed, f"{module} imports {target} ({target_layer})"


def test_passes_do_not_import_each_other() -> None:
    graph = _graph()
    for module in PASS_MODULES:
        assert not graph[module] & (set(PASS_MODULES) | {"passes.__main__"}), module


def test_the_runtime_needs_only_the_bottom_layer() -> None:
    """``compiler.runtime`` (loading and running artifacts) reaches no compile-time module."""
    graph = _graph()
    seen, todo = set(), ["compiler.runtime"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph[module]
    compile_time = {
        m
        for m in seen
        if m.startswith(("passes.", "compiler."))
        and not m.startswith(("passes.base", "passes.host.call", "compiler.runtime"))
    } - {"passes", "passes.host"}
    assert compile_time == set()
