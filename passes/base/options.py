"""Typed options from text (``-O key=value``, ``pass{key=value}``): recipes' and passes' fields."""

from __future__ import annotations

import enum
from typing import Any

from passes.base.errors import QmlirError


def coerce_option(owner: str, key: str, hint: Any, value: Any) -> Any:
    """``value`` (text or already typed) as the type ``hint`` of option ``key`` of ``owner``
    (``recipe 'fp8-current'``, ``pass 'lower-named-ops'``); a one-line error otherwise."""
    where = f"option '{key}' of {owner}"
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
