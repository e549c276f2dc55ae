"""Without the compile extra, what needs it says so in one line (exit 2), before importing it.

The extra is made to look absent by patching the check (``tests/e2e/test_runtime_only.py``
blocks the imports for real, ``tests/e2e/test_wheel.py`` installs the wheel without it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import compiler
from compiler import extras
from compiler.cli import EXIT_MISSING_EXTRA, commands, main
from compiler.extras import MissingExtra, from_import_error
from passes.base.errors import QmlirError

INSTALL = "pip install 'qmlir[compile]'"
# what each command needs of the extra: run, generate, train and inspect need none of it
# (docs/cli.md)
NEEDS = {
    "compile": extras.COMPILE,
    "report": extras.COMPILE,
    "export": extras.COMPILE,
    "calibrate": extras.COMPILE,
    "search": extras.COMPILE,
    "quantize": extras.IR,
    "recipes": extras.IR,
    "run": (),
    "generate": (),
    "train": (),
    "inspect": (),
}
ALL_MISSING = "(missing torch, torch-mlir, iree-base-compiler)"


@pytest.fixture
def runtime_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every module of the compile extra looks absent (nothing is imported to find out)."""
    monkeypatch.setattr(extras, "_installed", lambda module: module not in extras.COMPILE)
    yield


def test_each_command_declares_what_it_needs() -> None:
    assert {c.NAME: getattr(c, "NEEDS", ()) for c in commands()} == NEEDS


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["compile", "no_such_model.py"], f"qmlir compile needs the compile extra {ALL_MISSING}"),
        (["report", "no_such_model.py"], f"qmlir report needs the compile extra {ALL_MISSING}"),
        (
            ["quantize", "no_such.npy", "-o", "q.npz"],
            "qmlir quantize needs the compile extra (missing iree-base-compiler)",
        ),
        (["recipes"], "qmlir recipes needs the compile extra (missing iree-base-compiler)"),
        (
            ["run", "no_such.vmfb", "--compare", "no_such_model.py"],
            "qmlir run --compare needs the compile extra (missing torch)",
        ),
    ],
)
def test_a_command_says_which_extra_and_exits_2(
    runtime_only: None, capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    # without the check each would fail otherwise: a missing model, input or artifact (exit 1)
    assert main(argv) == EXIT_MISSING_EXTRA == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"qmlir: error: {line}: {INSTALL}\n"


def test_runtime_commands_do_not_ask_for_it(
    runtime_only: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", "no_such.vmfb"]) == 1
    assert capsys.readouterr().err == "qmlir: error: artifact 'no_such.vmfb' does not exist\n"


@pytest.mark.parametrize(
    ("name", "missing"),
    [
        ("compile", ALL_MISSING),
        ("compile_training", ALL_MISSING),
        ("report", ALL_MISSING),
        ("quantize", "(missing iree-base-compiler)"),
        ("block_scale_quantize", "(missing iree-base-compiler)"),
    ],
)
def test_the_python_api_raises_one_error_naming_the_extra(
    runtime_only: None, monkeypatch: pytest.MonkeyPatch, name: str, missing: str
) -> None:
    monkeypatch.delitem(vars(compiler), name, raising=False)  # as before its first use
    with pytest.raises(MissingExtra) as raised:
        getattr(compiler, name)
    assert str(raised.value) == f"compiler.{name} needs the compile extra {missing}: {INSTALL}"
    assert isinstance(raised.value, QmlirError) and isinstance(raised.value, ImportError)
    assert callable(compiler.load)  # the runtime part still loads


def test_an_escaped_import_error_of_the_extra_is_recognised() -> None:
    def error(code: str) -> ImportError:
        try:
            exec(code)
        except ImportError as e:
            return e
        raise AssertionError(code)

    no_torch = ModuleNotFoundError("No module named 'torch'", name="torch")
    found = from_import_error("qmlir x", no_torch)
    assert str(found) == f"qmlir x needs the compile extra (missing torch): {INSTALL}"
    no_pass = ModuleNotFoundError("No module named 'torch_mlir.x'", name="torch_mlir.x")
    assert str(from_import_error("qmlir x", no_pass)).startswith("qmlir x needs the compile")
    no_compiler = ImportError("cannot import name 'compiler' from 'iree'", name="iree")
    found = from_import_error("qmlir x", no_compiler)
    assert found is not None and found.missing == ("iree.compiler",)
    assert from_import_error("qmlir x", error("import no_such_module_here")) is None
    assert from_import_error("qmlir x", error("from iree import no_such_name")) is None


def test_the_cli_turns_an_escaped_one_into_the_same_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import compiler.cli.inspect

    def run(args: object) -> int:
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(compiler.cli.inspect, "run", run)
    assert main(["inspect", "a.vmfb"]) == 2
    line = f"qmlir: error: qmlir inspect needs the compile extra (missing torch): {INSTALL}\n"
    assert capsys.readouterr().err == line
