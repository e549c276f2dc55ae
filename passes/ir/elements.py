"""Reading dense elements attributes (weight literals, folded constants) as numpy arrays."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from iree.compiler import ir

from passes.ir.types import TensorInfo

_NP_DTYPES = {
    "f32": np.float32,
    "bf16": ml_dtypes.bfloat16,
    "f16": np.float16,
    "si64": np.int64,
    "si32": np.int32,
    "i64": np.int64,
    "i32": np.int32,
}


def elements_to_numpy(attr: ir.Attribute) -> np.ndarray:
    """Values of a dense elements attribute (f32/bf16/f16/ints) as a numpy array."""
    dense = ir.DenseElementsAttr(attr)
    shaped = ir.ShapedType(dense.type)
    elem = str(shaped.element_type)
    shape = tuple(shaped.shape)
    if elem == "bf16":
        bits = _bf16_bits(str(dense))
        arr = bits.view(ml_dtypes.bfloat16)
        return np.broadcast_to(arr, shape).copy() if arr.size == 1 else arr.reshape(shape)
    if dense.is_splat:
        return np.full(shape, np.array(dense.get_splat_value().value), dtype=_NP_DTYPES[elem])
    return np.array(dense).reshape(shape)


def _bf16_bits(text: str) -> np.ndarray:
    """bf16 bit patterns from an attribute's printed form (the bindings cannot read bf16).

    Large attributes print as one hex blob (``dense<"0x...">``, little-endian); small ones as a
    list of decimals that round-trip exactly, with non-finite values spelled as hex bits.
    """
    body = text[text.index("dense<") + 6 : text.rindex("> :")]
    if body.startswith('"0x'):
        return np.frombuffer(bytes.fromhex(body[3 : body.index('"', 3)]), dtype=np.uint16).copy()
    tokens = [t for t in body.replace("[", " ").replace("]", " ").replace(",", " ").split() if t]
    out = np.empty(len(tokens), dtype=np.uint16)
    for i, token in enumerate(tokens):
        if token.lower().startswith("0x"):
            out[i] = int(token, 16)
        else:
            out[i] = (
                np.array([float(token)], np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)[0]
            )
    return out


def numpy_to_literal(array: np.ndarray, dtype: str) -> ir.Value:
    """A ``torch.vtensor.literal`` holding ``array`` as ``dtype`` (bf16 passed as its bits),
    built at the current insertion point."""
    shape = list(array.shape)
    data = np.ascontiguousarray(array)
    if data.dtype == ml_dtypes.bfloat16:
        data = data.view(np.uint16)
    elem = ir.Type.parse(dtype)
    attr = ir.DenseElementsAttr.get(data, type=elem, shape=shape)
    return ir.Operation.create(
        "torch.vtensor.literal",
        results=[TensorInfo(tuple(shape), dtype).vtensor()],
        attributes={"value": attr},
    ).result
