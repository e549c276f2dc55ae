"""Element formats of the low-precision data, as the integer-only encoder/decoder need them."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from passes.base.errors import QmlirError


@dataclass(frozen=True)
class FloatFormat:
    """A small float format: 1 sign bit, ``ebits`` exponent bits, ``mbits`` mantissa bits."""

    name: str
    ebits: int
    mbits: int
    max_finite: float
    nan_code: int  # code the encoder writes for NaN (FP8: the canonical NaN PTX cvt writes)
    signed_zero: bool = True  # False: -0.0 encodes as +0 (E2M1, as TE's cast_to_fp4x2)

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal."""
        return 1 - self.bias


E4M3 = FloatFormat("e4m3", ebits=4, mbits=3, max_finite=448.0, nan_code=0x7F)
E5M2 = FloatFormat("e5m2", ebits=5, mbits=2, max_finite=57344.0, nan_code=0x7F)

# E2M1 (FP4): no inf/NaN; TE's cast_to_fp4x2 writes NaN as +0 and -0.0 as +0, but keeps the sign
# of a negative value that rounds to zero.
E2M1 = FloatFormat("e2m1", ebits=2, mbits=1, max_finite=6.0, nan_code=0, signed_zero=False)

FORMATS = {f.name: f for f in (E4M3, E5M2, E2M1)}


def format_with_max(max_finite: float, where: str = "") -> FloatFormat:
    """The format whose largest finite value is ``max_finite`` (448: E4M3, 57344: E5M2, 6: E2M1)."""
    for fmt in FORMATS.values():
        if fmt.max_finite == max_finite:
            return fmt
    at = f" (@{where})" if where else ""
    raise QmlirError(f"no element format has the largest value {max_finite:g}{at}")


class Fp8Format(enum.Enum):
    """TE's ``fp8_format`` for a recipe.

    ``E4M3``: every tensor in E4M3 (max 448).
    ``HYBRID``: E4M3 for forward tensors (activations, weights), E5M2 for gradients (max 57344).
    An inference artifact quantizes forward tensors only, so there HYBRID quantizes exactly as
    E4M3 does; a training step (``compile_training``) quantizes its output gradients in E5M2.
    """

    E4M3 = "e4m3"
    HYBRID = "hybrid"

    def forward_format(self) -> FloatFormat:
        return E4M3

    def gradient_format(self) -> FloatFormat:
        """The format of gradients (a training step's ``dY``): E5M2 under HYBRID."""
        return E5M2 if self is Fp8Format.HYBRID else E4M3
