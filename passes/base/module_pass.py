"""Passes are frozen dataclasses registered by name; options are their fields.

``name{opt-a=1 opt-b=true}`` parses to ``Cls.from_options({"opt-a": "1", "opt-b": "true"})``.
A pass module registers its class with :func:`register_pass` when it is imported; the driver
(``python -m passes``) imports every pass. :meth:`ModulePass.spec` writes the text back (a
failing pass's repro command, ``compiler/pipeline/pass_runner.py``).
"""

from __future__ import annotations

import dataclasses
import enum
import re
import typing
from typing import Any, ClassVar

from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.base.options import coerce_option

PASSES: dict[str, type[ModulePass]] = {}


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    PASSES[cls.name] = cls
    return cls


@dataclasses.dataclass(frozen=True)
class ModulePass:
    name: ClassVar[str] = ""

    def apply(self, module: ir.Module) -> None:
        raise NotImplementedError

    @classmethod
    def from_options(cls, options: dict[str, str]) -> ModulePass:
        fields = {f.name for f in dataclasses.fields(cls)}
        hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        for raw_key, raw in options.items():
            key = raw_key.replace("-", "_")
            if key not in fields:
                raise QmlirError(f"pass '{cls.name}' has no option '{raw_key}'")
            values[key] = coerce_option(f"pass '{cls.name}'", key, hints[key], raw)
        return cls(**values)

    def options(self) -> dict[str, str]:
        """The options :meth:`from_options` reads back into this pass: each field that differs
        from its default, as text (a bool ``true``/``false``, a tuple comma-joined, an enum its
        value). A pass whose fields text cannot carry overrides it."""
        out: dict[str, str] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.default is not dataclasses.MISSING and value == field.default:
                continue
            out[field.name.replace("_", "-")] = option_text(value)
        return out

    def spec(self) -> str:
        """``name`` or ``name{key=value ...}``, as :func:`parse_pass` reads it."""
        options = " ".join(f"{key}={value}" for key, value in self.options().items())
        return f"{self.name}{{{options}}}" if options else self.name


def option_text(value: Any) -> str:
    """An option's value as pass-option text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, (tuple, list)):
        return ",".join(option_text(v) for v in value)
    return str(value)


_SPEC = re.compile(r"^\s*([\w-]+)\s*(?:\{(.*)\})?\s*$")


def parse_pass(spec: str) -> ModulePass:
    """Parses ``name`` or ``name{key=value key2=value2}`` (of a registered pass)."""
    m = _SPEC.match(spec)
    if not m:
        raise QmlirError(f"cannot parse pass '{spec}' (expected name{{key=value ...}})")
    name, body = m.group(1), m.group(2) or ""
    cls = PASSES.get(name)
    if cls is None:
        raise QmlirError(f"unknown pass '{name}' (known: {', '.join(sorted(PASSES))})")
    options: dict[str, str] = {}
    for item in body.split():
        key, sep, value = item.partition("=")
        if not sep:
            raise QmlirError(f"pass option '{item}' of '{name}' is not key=value")
        options[key] = value
    return cls.from_options(options)
