"""Recipe base class, option parsing and the registry."""

from __future__ import annotations

import dataclasses
import enum
import typing
from typing import Any, ClassVar

from passes.errors import QmlirError

RECIPES: dict[str, type[Recipe]] = {}


def register_recipe(cls: type[Recipe]) -> type[Recipe]:
    RECIPES[cls.name] = cls
    return cls


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A recipe's options are its dataclass fields; ``name`` is its ``--recipe`` value."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    quantizes: ClassVar[bool] = True
    # Block-scaled recipes quantize 2-D operands: N-D activations are flattened to [M, K].
    two_dimensional: ClassVar[bool] = False

    @classmethod
    def option_docs(cls) -> dict[str, str]:
        return {}

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> Recipe:
        fields = {f.name: f for f in dataclasses.fields(cls)}
        hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        for raw_key, raw_value in options.items():
            key = raw_key.replace("-", "_")
            if key not in fields:
                known = ", ".join(sorted(fields)) or "none"
                raise QmlirError(
                    f"recipe '{cls.name}' has no option '{raw_key}' (its options: {known})"
                )
            values[key] = _coerce(cls.name, key, hints[key], raw_value)
        return cls(**values)

    def options(self) -> dict[str, Any]:
        """Options as JSON-ready values (enums by value)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.value if isinstance(value, enum.Enum) else value
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "options": self.options()}


def _coerce(recipe: str, key: str, hint: Any, value: Any) -> Any:
    where = f"option '{key}' of recipe '{recipe}'"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if isinstance(value, hint):
            return value
        choices = [m.value for m in hint]
        if str(value).lower() not in choices:
            raise QmlirError(f"{where} must be one of {', '.join(choices)}, not '{value}'")
        return hint(str(value).lower())
    if hint is bool:
        if isinstance(value, bool):
            return value
        text = str(value).lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise QmlirError(f"{where} must be true or false, not '{value}'")
    if hint is float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise QmlirError(f"{where} must be a number, not '{value}'") from None
        return number
    if hint is int:
        try:
            return int(value)
        except (TypeError, ValueError):
            raise QmlirError(f"{where} must be an integer, not '{value}'") from None
    return value


def get_recipe(name: str, options: dict[str, Any] | None = None) -> Recipe:
    cls = RECIPES.get(name)
    if cls is None:
        known = ", ".join(sorted(RECIPES))
        raise QmlirError(f"unknown recipe '{name}' (known recipes: {known})")
    return cls.from_options(options or {})
