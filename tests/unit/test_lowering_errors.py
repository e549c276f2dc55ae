"""A lowered definition that does not parse is one error naming its op and template, with the
text saved; each definition is parsed on its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.lowering import declarations

MODULE = """
func.func private @qmlir.amax.4x8(tensor<4x8xf32>) -> tensor<f32> attributes {qmlir.op = "amax"}
func.func private @qmlir.amax.2x2(tensor<2x2xf32>) -> tensor<f32> attributes {qmlir.op = "amax"}
"""


def test_both_definitions_lowered_and_parsed() -> None:
    with ir.Context():
        module = ir.Module.parse(MODULE)
        declarations.lower_declarations(module, declarations.named_op_declarations(module))
        assert declarations.named_op_declarations(module) == []
        text = str(module)
    assert text.count("func.func private @qmlir.amax") == 2
    assert "linalg.generic" in text


def test_a_definition_that_does_not_parse_names_its_op_and_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = declarations.lower_cpu

    def broken(decl: ir.Operation) -> str:
        text = real(decl)
        if "2x2" not in text:
            return text
        assert "  return " in text
        return text.replace("  return ", "  %broken = arith.no_such_op\n  return ", 1)

    monkeypatch.setattr(declarations, "lower_cpu", broken)
    with ir.Context():
        module = ir.Module.parse(MODULE)
        with pytest.raises(QmlirError) as caught:
            declarations.lower_declarations(module, declarations.named_op_declarations(module))
    message = str(caught.value)
    assert "\n" not in message
    assert "named op amax @qmlir.amax.2x2 (template amax_rows.mlir) does not parse" in message
    saved = re.search(r"IR saved to (\S+)$", message)
    assert saved is not None
    path = Path(saved.group(1))
    assert "arith.no_such_op" in path.read_text()
    path.unlink()
