"""Dynamic dims as the user asks for them: ``torch.export``'s own ``dynamic_shapes`` (Python), or
``--dynamic INPUT:DIM=NAME[:MIN..MAX]`` on the command line, which builds the same thing (dims
with one name are one ``torch.export.Dim``: they must have equal sizes at run time).
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import torch

from passes.base.errors import QmlirError

_FLAG = re.compile(
    r"^(?P<input>[A-Za-z_]\w*):(?P<dim>\d+)=(?P<name>[A-Za-z_]\w*)(?::(?P<range>.*))?$"
)
_RANGE = re.compile(r"^(?P<min>\d+)?\.\.(?P<max>\d+)?$")


def forward_names(module: torch.nn.Module, count: int) -> list[str]:
    """The names of ``module``'s first ``count`` inputs: ``forward``'s positional parameters
    (``arg<i>`` where there is none, e.g. ``*args``)."""
    params = inspect.signature(module.forward).parameters.values()
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in params if p.kind in positional][:count]
    return names + [f"arg{i}" for i in range(len(names), count)]


def parse_dynamic_flags(items: list[str], names: list[str], ranks: list[int]) -> dict[str, Any]:
    """``--dynamic`` flags as ``torch.export``'s ``dynamic_shapes`` (a dict by input name)."""
    dims: dict[str, torch.export.Dim] = {}
    ranges: dict[str, tuple[int | None, int | None]] = {}
    spec: dict[str, dict[int, Any] | None] = dict.fromkeys(names)
    for item in items:
        match = _FLAG.match(item.strip())
        if match is None:
            raise QmlirError(
                f"--dynamic '{item}' is not INPUT:DIM=NAME[:MIN..MAX] "
                "(e.g. input_ids:0=batch:1..64)"
            )
        name, dim, dim_name = match["input"], int(match["dim"]), match["name"]
        if name not in spec:
            raise QmlirError(
                f"--dynamic '{item}': the model has no input '{name}' (inputs: {', '.join(names)})"
            )
        rank = ranks[names.index(name)]
        if dim >= rank:
            raise QmlirError(f"--dynamic '{item}': input '{name}' has {rank} dims")
        bounds = _bounds(item, match["range"])
        if dim_name in ranges and ranges[dim_name] != bounds:
            raise QmlirError(f"--dynamic '{item}': dim '{dim_name}' was given another range")
        ranges[dim_name] = bounds
        if dim_name not in dims:
            low, high = bounds
            dims[dim_name] = torch.export.Dim(dim_name, min=low, max=high)  # type: ignore[arg-type]
        spec[name] = {**(spec[name] or {}), dim: dims[dim_name]}
    return spec


def _bounds(item: str, text: str | None) -> tuple[int | None, int | None]:
    if text is None:
        return None, None
    match = _RANGE.match(text)
    if match is None:
        raise QmlirError(f"--dynamic '{item}': range '{text}' is not MIN..MAX (e.g. 1..64)")
    low = int(match["min"]) if match["min"] else None
    high = int(match["max"]) if match["max"] else None
    if low is not None and high is not None and low > high:
        raise QmlirError(f"--dynamic '{item}': range {low}..{high} is empty")
    return low, high


def dim_names(dynamic_shapes: Any, names: list[str]) -> dict[str, dict[int, str]]:
    """The user's names of dynamic dims, by input name and dim, from a ``dynamic_shapes`` spec
    (a dict by input name, or a tuple/list by position; per input a dict by dim or a sequence;
    ``Dim("batch")`` is named ``batch``; ``Dim.AUTO``/``Dim.DYNAMIC`` keep torch's symbol)."""
    if dynamic_shapes is None:
        return {}
    if isinstance(dynamic_shapes, dict):
        per_input = dynamic_shapes.items()
    else:
        per_input = zip(names, dynamic_shapes, strict=False)
    out: dict[str, dict[int, str]] = {}
    for name, dims in per_input:
        if dims is None:
            continue
        items = dims.items() if isinstance(dims, dict) else enumerate(dims)
        for dim, value in items:
            given = getattr(value, "__name__", None)
            if isinstance(given, str):
                out.setdefault(name, {})[int(dim)] = given
    return out


def dynamic_shapes_from_flags(source: Any, flags: list[str]) -> Any:
    """``--dynamic`` flags as torch.export's ``dynamic_shapes`` for a ``ModelSource``."""
    if source.program is not None:
        raise QmlirError(
            "--dynamic: a .pt2 keeps the dynamic dims it was exported with (export it with "
            "dynamic_shapes)"
        )
    if source.dynamic_shapes is not None:
        raise QmlirError("--dynamic: the model's build function already gives dynamic_shapes")
    ranks = [t.dim() for t in source.example_inputs]
    return parse_dynamic_flags(flags, source.input_names(), ranks)
