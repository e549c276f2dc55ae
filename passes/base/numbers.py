"""Integer and f32 arithmetic the IR builders and lowerings share."""

from __future__ import annotations

import struct


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def f32_bits(value: float) -> int:
    """The f32 bit pattern of ``value`` as a signed 32-bit integer (an ``i32`` constant)."""
    return struct.unpack(">i", struct.pack(">f", value))[0]


def f32_hex(value: float) -> str:
    """``value`` rounded to f32, as an MLIR hex float literal (``0x43E00000``)."""
    return "0x" + struct.pack(">f", value).hex().upper()


def f64_hex(value: float) -> str:
    """``value`` as an MLIR f64 hex literal."""
    return "0x" + struct.pack(">d", value).hex().upper()


def to_f32(value: float) -> float:
    """``value`` rounded to the nearest f32."""
    return struct.unpack(">f", struct.pack(">f", value))[0]
