"""Helpers for the types the passes meet: torch value tensors and builtin tensors."""

from __future__ import annotations

import re
from dataclasses import dataclass

from iree.compiler import ir

_VTENSOR = re.compile(r"^!torch\.vtensor<\[([0-9?,\s]*)\],(\w+)>$")

DYNAMIC = -1  # a dynamic dim in TensorInfo.shape (``?`` in a type)

# torch ScalarType codes, as torch.prims.convert_element_type takes them.
# torch's ScalarType codes (``torch.prims.convert_element_type``'s dtype operand)
TORCH_DTYPE_CODES = {
    "ui8": 0,
    "si8": 1,
    "si16": 2,
    "si32": 3,
    "si64": 4,
    "f16": 5,
    "f32": 6,
    "f64": 7,
    "bf16": 15,
}
FLOAT_DTYPES = ("f16", "bf16", "f32")


@dataclass(frozen=True)
class TensorInfo:
    """Shape and element type name of a tensor value (torch or builtin); a dynamic dim is
    :data:`DYNAMIC` (only from ``tensor_info(t, dynamic=True)``)."""

    shape: tuple[int, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return DYNAMIC not in self.shape

    def builtin(self) -> ir.Type:
        """The builtin tensor type ``torch_c.to_builtin_tensor`` gives (torch's signed and
        unsigned integers signless: ``si64`` → ``i64``)."""
        return builtin_tensor_type(self.shape, re.sub(r"^[su]i(\d+)$", r"i\1", self.dtype))

    def vtensor(self) -> ir.Type:
        return vtensor_type(self.shape, self.dtype)

    def with_dtype(self, dtype: str) -> TensorInfo:
        return TensorInfo(self.shape, dtype)


def tensor_info(t: ir.Type, dynamic: bool = False) -> TensorInfo | None:
    """Shape and dtype of a static ``!torch.vtensor`` or ranked builtin tensor, else None; with
    ``dynamic``, dynamic dims too (as :data:`DYNAMIC`)."""
    text = str(t)
    m = _VTENSOR.match(text)
    if m:
        dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
        if any(not (d.isdigit() or (dynamic and d == "?")) for d in dims):
            return None
        return TensorInfo(tuple(DYNAMIC if d == "?" else int(d) for d in dims), m.group(2))
    try:
        rt = ir.RankedTensorType(t)
    except ValueError:
        return None
    if not rt.has_static_shape and not dynamic:
        return None
    shape = tuple(DYNAMIC if rt.is_dynamic_dim(i) else rt.shape[i] for i in range(rt.rank))
    return TensorInfo(shape, str(rt.element_type))


def shape_text(shape: tuple[int, ...]) -> str:
    """``tensor<${shape}xf32>`` spelling of a shape (``?`` a dynamic dim); a 0-d tensor has none."""
    return "x".join("?" if d == DYNAMIC else str(d) for d in shape)


def builtin_tensor_type(shape: tuple[int, ...], dtype: str) -> ir.Type:
    dims = shape_text(shape)
    return ir.Type.parse(f"tensor<{dims}x{dtype}>" if dims else f"tensor<{dtype}>")


def vtensor_type(shape: tuple[int, ...], dtype: str) -> ir.Type:
    dims = ",".join("?" if d == DYNAMIC else str(d) for d in shape)
    return ir.Type.parse(f"!torch.vtensor<[{dims}],{dtype}>")
