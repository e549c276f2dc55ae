"""Text helpers the cuda lowerings share: tensor types, reshapes, launch grids, constants."""

from __future__ import annotations

import math

from passes.base.numbers import ceil_div
from passes.ir.types import TensorInfo, shape_text


def ttype(info: TensorInfo, dtype: str | None = None) -> str:
    dims = shape_text(info.shape)
    elem = dtype or info.dtype
    return f"tensor<{dims}x{elem}>" if dims else f"tensor<{elem}>"


def flat(info: TensorInfo) -> TensorInfo:
    return TensorInfo((math.prod(info.shape),), info.dtype)


def reshape(src: str, frm: TensorInfo, to: TensorInfo) -> str:
    """One op from ``frm`` to ``to`` (same elements, fewer/more leading dims)."""
    if frm.shape == to.shape:
        return f"tensor.cast {src} : {ttype(frm)} to {ttype(to)}"
    big, small = (frm, to) if frm.rank > to.rank else (to, frm)
    lead = big.rank - small.rank + 1  # the first `lead` dims of the larger fold into one
    groups = [list(range(lead))] + [[i] for i in range(lead, big.rank)]
    reassoc = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
    if frm is big:
        return f"tensor.collapse_shape {src} {reassoc} : {ttype(frm)} into {ttype(to)}"
    return (
        f"tensor.expand_shape {src} {reassoc} output_shape "
        f"[{', '.join(map(str, to.shape))}] : {ttype(frm)} into {ttype(to)}"
    )


def grid_1d(n: int, cap: int = 1024) -> tuple[int, int]:
    return (max(1, min(ceil_div(n, 1024), cap)), 1)


def i32_constants(values: dict[str, int]) -> str:
    return "".join(f"  %{k} = arith.constant {v} : i32\n" for k, v in values.items())
