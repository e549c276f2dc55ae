"""The import graph of the repository's top-level packages: layers that only point down.

Read from the source (``ast``), every import counted, function-local ones too: no cycle between
modules, none between top-level packages, no import of another module's private name, each
part of ``compiler/`` and ``passes/`` imports only the parts under it, and no pass imports
another pass. The passes are the registry's (``register_pass``), not a list kept here.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from passes.base.module_pass import PASSES

ROOT = Path(__file__).resolve().parents[2]


def _top_level_packages() -> tuple[str, ...]:
    """Every top-level folder that Python can import from the repository root."""
    return tuple(
        sorted(
            d.name
            for d in ROOT.iterdir()
            if d.is_dir() and d.name.isidentifier() and not d.name.startswith(("_", "."))
            if (d / "__init__.py").is_file() or any(d.glob("*.py"))
        )
    )


PACKAGES = _top_level_packages()
# What each top-level package may import (besides itself): the product's three in a line, then
# what uses them. A package missing here fails test_every_package_has_a_place.
PACKAGE_LAYERS = {
    "runtime_kernels": set(),
    "passes": {"runtime_kernels"},
    "compiler": {"passes", "runtime_kernels"},
    "samples": set(),
    "benchmarks": {"compiler", "passes", "runtime_kernels", "samples"},
    "tests": {"compiler", "passes", "runtime_kernels", "samples", "benchmarks"},
}
# What each part of compiler/ and passes/ may import of its own package (besides itself).
# compiler/ follows the data flow: the CLI on the API on the analysis on the pipeline, which
# runs the frontend (model sources, export, import) and the backend (IREE, the artifact); the
# runtime loads and runs artifacts. Pass modules (passes/*.py) may import any part of passes/.
LAYERS = {
    "compiler": {
        "compiler.api",
        "compiler.export",  # compiler.export_checkpoint
        "compiler.extras",
        "compiler.import_noise",  # installed on `import compiler`: logging only
        "compiler.pipeline",  # compiler.quantize: pipeline/quantize.py
        "compiler.runtime",
        "compiler.version",
    },
    "compiler.version": set(),
    "compiler.extras": set(),  # which extra a command needs, checked before any import of it
    "compiler.import_noise": set(),  # two known log lines of torchao and torch, dropped
    "compiler.runtime": set(),
    "compiler.frontend": set(),
    "compiler.backend": {"compiler.runtime"},  # the artifact embeds the metadata record
    "compiler.pipeline": {
        "compiler.frontend",
        "compiler.backend",
        "compiler.runtime",
        "compiler.extras",
        "compiler.version",
    },
    "compiler.analysis": {
        "compiler.frontend",
        "compiler.pipeline",
        "compiler.runtime",
        "compiler.extras",
        "compiler.version",
    },
    # compressed-tensors folders from a model's weights through the compiled quantize core
    "compiler.export": {
        "compiler.frontend",
        "compiler.pipeline",
        "compiler.runtime",
        "compiler.extras",
        "compiler.version",
    },
    "compiler.api": {
        "compiler.analysis",
        "compiler.frontend",
        "compiler.backend",
        "compiler.pipeline",
        "compiler.runtime",
        "compiler.extras",
        "compiler.version",
    },
    "compiler.cli": {
        "compiler.api",
        "compiler.export",
        "compiler.analysis",
        "compiler.frontend",
        "compiler.backend",
        "compiler.pipeline",
        "compiler.runtime",
        "compiler.extras",
        "compiler.version",
    },
    "passes.base": set(),
    "passes.ir": {"passes.base"},
    "passes.recipes": {"passes.base", "passes.ir"},
    "passes.lowering": {"passes.base", "passes.ir", "runtime_kernels"},
    "passes.host": {"passes.base", "passes.ir", "passes.lowering"},
    "passes.fusion": {"passes.base", "passes.ir"},
    "runtime_kernels": set(),
}
SPLIT = {"compiler"}  # packages whose parts LAYERS lists (the key of the package: its __init__)
# Imports against LAYERS, each with its reason: a new one fails test_layers_point_down.
EXCEPTIONS: set[tuple[str, str]] = set()


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


GRAPH = _graph()


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
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


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph seen from the top-level packages: ``a -> b`` when a module of ``a``
    imports one of ``b``."""
    top: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = top.setdefault(module.partition(".")[0], set())
        edges |= {t.partition(".")[0] for t in targets} - {module.partition(".")[0]}
    for edges in list(top.values()):
        for package in edges:
            top.setdefault(package, set())
    return top


def _layer(module: str, layers: dict[str, set[str]] = LAYERS) -> str | None:
    """The part of ``layers`` that holds ``module``; a top-level name (``compiler``,
    ``runtime_kernels``) holds only itself where its package has parts, else all of it."""
    for layer in sorted(layers, key=len, reverse=True):
        if module == layer or (
            module.startswith(layer + ".") and ("." in layer or layer not in SPLIT)
        ):
            return layer
    return None


def _layer_violations(
    graph: dict[str, set[str]], module: str, layers: dict[str, set[str]] = LAYERS
) -> list[str]:
    """The imports of ``module`` (in a part of ``layers``) of parts it may not import: parts of
    its own package, and packages ``layers`` names whole (compiler's imports of passes are
    test_packages_point_down's)."""
    layer = _layer(module, layers)
    assert layer is not None
    allowed = layers[layer] | {layer}
    package = module.partition(".")[0]
    return [
        f"{module} imports {target}"
        for target in sorted(graph[module])
        if (module, target) not in EXCEPTIONS
        and (target_layer := _layer(target, layers)) is not None
        and (target.partition(".")[0] == package or "." not in target_layer)
        and target_layer not in allowed
    ]


def _pass_modules() -> set[str]:
    """The modules that define a registered pass: every module at the top of passes/ is
    imported, so each registers its pass."""
    for path in sorted((ROOT / "passes").glob("*.py")):
        if path.stem not in ("__init__", "__main__"):
            importlib.import_module(f"passes.{path.stem}")
    return {cls.__module__ for cls in PASSES.values()}


PASS_MODULES = _pass_modules()


def _passes_importing_passes(graph: dict[str, set[str]], passes: set[str]) -> list[str]:
    """Imports of a pass module, or of the driver, by a pass module."""
    return [
        f"{module} imports {target}"
        for module in sorted(passes)
        for target in sorted(graph[module] & (passes | {"passes.__main__"}))
    ]


def test_the_graph_is_read() -> None:
    assert "passes.ir.named_ops" in GRAPH["passes.quantize_matmuls"]
    assert "passes.base.errors" in GRAPH["compiler.runtime.module"]
    assert {"compiler", "passes", "runtime_kernels", "samples", "tests"} <= set(PACKAGES)


def test_no_import_cycle() -> None:
    assert _cycles(GRAPH) == []


def test_a_cycle_would_be_found() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_two_packages_import_each_other() -> None:
    assert _cycles(_package_graph(GRAPH)) == []


def test_two_packages_importing_each_other_would_be_found() -> None:
    """``passes.lowering`` taking PTX from runtime_kernels, runtime_kernels an error type from
    ``passes.base``: no module cycle, but a package one."""
    graph = {
        "passes.lowering.cuda.kernels": {"runtime_kernels.nvrtc"},
        "runtime_kernels.nvrtc": {"passes.base.errors"},
        "passes.base.errors": set(),
    }
    assert _cycles(graph) == []
    assert _cycles(_package_graph(graph)) == [["passes", "runtime_kernels"]]


def test_every_package_has_a_place() -> None:
    assert set(PACKAGES) <= set(PACKAGE_LAYERS)


@pytest.mark.parametrize("package", PACKAGES)
def test_packages_point_down(package: str) -> None:
    imported = _package_graph(GRAPH)[package]
    assert imported <= PACKAGE_LAYERS[package], sorted(imported - PACKAGE_LAYERS[package])


def test_runtime_kernels_is_the_bottom() -> None:
    """The CUDA kernels and their NVRTC build import nothing of the project's."""
    assert _package_graph(GRAPH)["runtime_kernels"] == set()


def test_no_private_name_of_another_module() -> None:
    offenders = [
        f"{module}: from {imported} import {name}"
        for module in MODULES
        if not module.startswith("tests.")  # tests may read a module's insides
        for imported, names in _imports(module)
        for name in names
        if name.startswith("_") and not name.startswith("__") and _resolve(imported) != module
    ]
    assert offenders == []


def test_every_part_has_a_layer() -> None:
    """Each module of compiler/ and passes/ is in a part of LAYERS, or is a pass (passes/*.py)."""
    unplaced = [
        m
        for m in MODULES
        if m.partition(".")[0] in ("compiler", "passes")
        and _layer(m) is None
        and m not in PASS_MODULES | {"passes", "passes.__main__"}
    ]
    assert unplaced == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) is not None))
def test_layers_point_down(module: str) -> None:
    assert _layer_violations(GRAPH, module) == []


def test_a_layer_pointing_up_would_be_found() -> None:
    graph = {"p.low.a": {"p.high.b"}, "p.high.b": {"p.low.a"}}
    layers: dict[str, set[str]] = {"p.low": set(), "p.high": {"p.low"}}
    assert _layer_violations(graph, "p.low.a", layers) == ["p.low.a imports p.high.b"]
    assert _layer_violations(graph, "p.high.b", layers) == []


def test_every_exception_is_still_an_import() -> None:
    assert all(target in GRAPH[module] for module, target in EXCEPTIONS)


def test_the_passes_are_the_registry() -> None:
    """Each module at the top of passes/ defines the pass it is named after (the driver and the
    package aside), and each registered pass lives in one."""
    top = {f"passes.{p.stem}" for p in (ROOT / "passes").glob("*.py")}
    assert top - {"passes.__init__", "passes.__main__"} == PASS_MODULES
    assert {f"passes.{name.replace('-', '_')}" for name in PASSES} == PASS_MODULES
    assert len(PASSES) == len(PASS_MODULES)


def test_passes_do_not_import_each_other() -> None:
    assert _passes_importing_passes(GRAPH, PASS_MODULES) == []


def test_a_pass_importing_a_pass_would_be_found() -> None:
    graph = {"passes.a": {"passes.b", "passes.ir"}, "passes.b": {"passes.__main__"}}
    assert _passes_importing_passes(graph, {"passes.a", "passes.b"}) == [
        "passes.a imports passes.b",
        "passes.b imports passes.__main__",
    ]


def test_the_runtime_needs_only_the_bottom_layer() -> None:
    """``compiler.runtime`` (loading and running artifacts) reaches no compile-time module."""
    seen, todo = set(), ["compiler.runtime"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += GRAPH[module]
    compile_time = {
        m
        for m in seen
        if m.startswith(("passes.", "compiler.", "runtime_kernels"))
        and not m.startswith(("passes.base", "passes.host.call", "compiler.runtime"))
    } - {"passes", "passes.host"}
    assert compile_time == set()
