"""Independent reference for per-tensor FP8 quantization, written from SEMANTICS.md (tests only).

Deliberately a different method from the compiled encoder: it enumerates every E4M3 (and E5M2)
value from the format's definition and picks the nearest by search, ties to the even code;
scales follow TE's ``compute_scale_from_amax`` line by line in float32.
"""

from __future__ import annotations

import numpy as np

E4M3_MAX = 448.0
E5M2_MAX = 57344.0
FLT_MAX = np.float32(np.finfo(np.float32).max)
NAN_CODE = 0x7F


def e4m3_value(code: int) -> float:
    """Value of an E4M3 (fn) byte: bias 7, no inf, NaN = S.1111.111."""
    sign = -1.0 if code & 0x80 else 1.0
    exp, man = (code >> 3) & 0xF, code & 0x7
    if exp == 0xF and man == 0x7:
        return float("nan")
    if exp == 0:
        return sign * man * 2.0**-9
    return sign * (1 + man / 8) * 2.0 ** (exp - 7)


def e5m2_value(code: int) -> float:
    """Value of an E5M2 byte: bias 15, S.11111.00 = inf, S.11111.xx (xx != 0) = NaN."""
    sign = -1.0 if code & 0x80 else 1.0
    exp, man = (code >> 2) & 0x1F, code & 0x3
    if exp == 0x1F:
        return sign * float("inf") if man == 0 else float("nan")
    if exp == 0:
        return sign * man * 2.0**-16
    return sign * (1 + man / 4) * 2.0 ** (exp - 15)


_POSITIVE_CODES = np.arange(0, 0x7F)  # 0x00 .. 0x7E: every finite non-negative value, ascending
_POSITIVE_VALUES = np.array([e4m3_value(int(c)) for c in _POSITIVE_CODES], dtype=np.float64)
# E5M2: 0x00 .. 0x7B (0x7C is inf)
_E5M2_VALUES = np.array([e5m2_value(c) for c in range(0x7C)], dtype=np.float64)


def encode_e4m3(v: np.ndarray) -> np.ndarray:
    """Saturating round-to-nearest-even cast of float32 values to E4M3 codes (uint8)."""
    return _encode(v, _POSITIVE_VALUES, E4M3_MAX)


def encode_e5m2(v: np.ndarray) -> np.ndarray:
    """Saturating round-to-nearest-even cast of float32 values to E5M2 codes (uint8): finite
    values beyond max and +-inf become +-max, NaN the code 0x7F."""
    return _encode(v, _E5M2_VALUES, E5M2_MAX)


def _encode(v: np.ndarray, values: np.ndarray, fmt_max: float) -> np.ndarray:
    """The nearest of ``values`` (a format's non-negative finite values by code), ties to the
    even code, saturating at ``fmt_max``; the sign OR-ed in, NaN -> 0x7F."""
    with np.errstate(invalid="ignore"):  # signaling-NaN payloads warn on the widening cast
        v = np.asarray(v, dtype=np.float32).astype(np.float64)
    out = np.empty(v.shape, dtype=np.uint8)
    flat, res = v.ravel(), out.ravel()
    for i, x in enumerate(flat):
        if np.isnan(x):
            res[i] = NAN_CODE
            continue
        sign = 0x80 if np.signbit(x) else 0
        a = min(abs(x), fmt_max)  # saturate: beyond max (and inf) -> max
        hi = int(np.searchsorted(values, a, side="left"))
        if hi < len(values) and values[hi] == a:
            code = hi
        else:
            lo = hi - 1
            d_lo, d_hi = a - values[lo], values[hi] - a
            if d_lo < d_hi:
                code = lo
            elif d_hi < d_lo:
                code = hi
            else:
                code = lo if lo % 2 == 0 else hi  # tie: the even code (even mantissa)
        res[i] = code | sign
    return out


def decode_e4m3(codes: np.ndarray) -> np.ndarray:
    table = np.array([e4m3_value(c) for c in range(256)], dtype=np.float32)
    return table[np.asarray(codes, dtype=np.uint8)]


def decode_e5m2(codes: np.ndarray) -> np.ndarray:
    table = np.array([e5m2_value(c) for c in range(256)], dtype=np.float32)
    return table[np.asarray(codes, dtype=np.uint8)]


def amax(x: np.ndarray) -> np.float32:
    """max |x|, NaN ignored (an all-NaN or empty tensor gives 0)."""
    a = np.abs(np.asarray(x, dtype=np.float32)).ravel()
    a = a[~np.isnan(a)]
    return np.float32(a.max()) if a.size else np.float32(0)


def compute_scale(
    amax_value: float, fp8_max: float = E4M3_MAX, pow2: bool = False, epsilon: float = 0.0
) -> np.float32:
    """TE ``compute_scale_from_amax``, in float32."""
    a = np.float32(amax_value)
    if a < np.float32(epsilon):
        a = np.float32(epsilon)
    if np.isinf(a) or a == 0 or np.isnan(a):
        return np.float32(1.0)
    with np.errstate(over="ignore"):
        scale = np.float32(np.float32(fp8_max) / a)
    if np.isinf(scale):
        scale = FLT_MAX
    if pow2:
        bits = np.array(scale, dtype=np.float32).view(np.uint32) & np.uint32(0xFF800000)
        scale = bits.view(np.float32)[()]
    return np.float32(scale)


def quantize_per_tensor(
    x: np.ndarray, pow2: bool = False, epsilon: float = 0.0, fmt: str = "e4m3"
) -> tuple[np.ndarray, np.float32]:
    """(E4M3 or E5M2 codes, scale_inv) of fp8-current for one tensor."""
    x32 = np.asarray(x, dtype=np.float32)
    fmt_max = E5M2_MAX if fmt == "e5m2" else E4M3_MAX
    scale = compute_scale(amax(x32), fmt_max, pow2=pow2, epsilon=epsilon)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = (x32 * scale).astype(np.float32)
    codes = encode_e5m2(scaled) if fmt == "e5m2" else encode_e4m3(scaled)
    return codes, np.float32(np.float32(1.0) / scale)


def e5m2_ties() -> np.ndarray:
    """Every midpoint between two adjacent E5M2 magnitudes (exact in float32), both signs."""
    mids = ((_E5M2_VALUES[:-1] + _E5M2_VALUES[1:]) / 2).astype(np.float32)
    return np.concatenate([mids, -mids])


def e4m3_ties() -> np.ndarray:
    """Every midpoint between two adjacent E4M3 magnitudes (exact in float32), both signs."""
    mids = (_POSITIVE_VALUES[:-1] + _POSITIVE_VALUES[1:]) / 2
    mids = mids.astype(np.float32)
    assert np.all(mids.astype(np.float64) == (_POSITIVE_VALUES[:-1] + _POSITIVE_VALUES[1:]) / 2)
    return np.concatenate([mids, -mids])
