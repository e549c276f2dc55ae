"""What every lowering shares, cpu and cuda: templates filled into the text of one
``func.func private`` definition for a declaration the recipe pass emitted (same name, same type,
same attributes).

A template directory (:class:`Templates`) fills ``<dir>/<name>``; a definition's last line ends
in a comment naming its template (``TEMPLATE_MARK``: a definition that fails to parse is
reported with it; the comment adds no line, so the ops' locations stay those of the template's
lines).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from passes.ir.dialect import NamedOp

INTERFACE_MARK = "// snippet:"
TEMPLATE_MARK = "// template: "


class Templates:
    """The ``.mlir`` templates of one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.template = cache(self._load)

    def _load(self, name: str) -> string.Template:
        """``<directory>/<name>``; a snippet's ``// snippet:`` interface line is for readers and
        tests, not part of the text it splices in."""
        return string.Template(strip_interface((self.directory / name).read_text()))

    def definition(
        self, name: str, fields: Mapping[str, object] | None = None, /, **more: object
    ) -> str:
        """The definition template ``name`` filled in, its last line naming it."""
        return name_template(self.template(name).substitute(fields or {}, **more), name)

    def fragment(self, name: str, /, **fields: object) -> str:
        """The template ``name`` filled in, without its last newline: a field of another."""
        return self.template(name).substitute(fields).rstrip("\n")


def strip_interface(text: str) -> str:
    """``text`` without its first line when that line is a ``// snippet:`` declaration."""
    first, _, rest = text.partition("\n")
    return rest if first.strip().startswith(INTERFACE_MARK) else text


def name_template(text: str, name: str) -> str:
    """``text`` with a comment naming template ``name`` at the end of its last line."""
    body = text.rstrip("\n")
    return f"{body}  {TEMPLATE_MARK}{name}" + text[len(body) :]


def head(op: NamedOp) -> dict[str, object]:
    """``name`` and ``attrs``: the definition's symbol and attribute dictionary entries."""
    return {"name": op.name, "attrs": op.attr_text()}
