"""Element formats of the low-precision data, as the integer-only encoder/decoder need them."""

from __future__ import annotations

import enum
from dataclasses import dataclass


@dataclass(frozen=True)
class FloatFormat:
    """A small float format: 1 sign bit, ``ebits`` exponent bits, ``mbits`` mantissa bits."""

    name: str
    ebits: int
    mbits: int
    max_finite: float
    nan_code: int  # canonical NaN byte written by the encoder (positive, as PTX cvt writes it)

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal."""
        return 1 - self.bias


E4M3 = FloatFormat("e4m3", ebits=4, mbits=3, max_finite=448.0, nan_code=0x7F)
E5M2 = FloatFormat("e5m2", ebits=5, mbits=2, max_finite=57344.0, nan_code=0x7F)

FORMATS = {f.name: f for f in (E4M3, E5M2)}


class Fp8Format(enum.Enum):
    """TE's ``fp8_format`` for a recipe.

    ``E4M3``: every tensor in E4M3 (max 448).
    ``HYBRID``: E4M3 for forward tensors (activations, weights), E5M2 for gradients. qmlir compiles
    inference only, so every tensor it quantizes is a forward tensor and HYBRID quantizes exactly
    as E4M3 does; the option exists so recipes match TE's and serialize the user's choice.
    """

    E4M3 = "e4m3"
    HYBRID = "hybrid"

    def forward_format(self) -> FloatFormat:
        return E4M3
