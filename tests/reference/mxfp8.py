"""Independent reference for MXFP8 (TE ``MXFP8BlockScaling``) from SEMANTICS.md (tests only).

Blocks of 32 (1x32 rowwise, 32x1 columnwise), E4M3 data, one E8M0 scale byte per block.

Scale rules (``rounding``):

- ``"ceil"`` (default; TE/cuBLAS, torchao RCEIL): ``v = amax * fp32(1/448)`` in float32, then TE's
  ``float_to_e8m0`` (transformer_engine/common/util/ptx.cuh, non-Blackwell branch; the Blackwell
  branch is ``cvt.rp.satfinite.ue8m0x2.f32``, the same function): NaN -> 0xFF, inf -> 0xFE,
  0 -> 0x00, otherwise v's biased exponent, plus one when v's mantissa is non-zero, except that it
  never passes 0xFE and that a subnormal v <= 2^-127 (mantissa <= 0x400000) stays 0x00, while a
  subnormal v in (2^-127, 2^-126) becomes 0x01. That is exactly "the smallest power of two >= v,
  saturated to [2^-127, 2^127]" (checked against an independent frexp computation in the tests).
- ``"floor"`` (OCP MX spec, torchao's default ``ScaleCalculationMode.FLOOR``): the biased exponent
  field E of amax itself, minus 8 (= floor(log2 448)), clamped at 0: ``e = max(E - 8, 0)``. As in
  torchao's ``to_mx``: amax 0 or subnormal -> 0x00, amax inf (E = 255) -> 247, NaN amax -> 0xFF.
  It never produces 0xFE or more for a finite amax (FLT_MAX gives 246).
- ``"even"`` (compressed-tensors' ``generate_mx_scales``, torchao ``EVEN``): amax rounded half up
  at its 3rd mantissa bit (float32 bits + 2^19, mantissa dropped; an inf or FLT_MAX-near amax
  stays 0xFF exponent), then floor's rule on that: ``max(E' - 8, 0)``; NaN -> 0xFF.
- ``"rne"``: PyTorch's ``.to(torch.float8_e8m0fnu)`` of ``amax / 448`` (float32 division), as
  torch 2.13 does it on CPU (c10 ``fp8e8m0fnu_from_fp32_value``): round the float32 mantissa at
  its top bit (guard bit 0x400000): normal v rounds up when mantissa >= 0x400000 (so 1.5*2^k
  ties go up), subnormal v rounds up to 0x01 only when mantissa > 0x400000; an exponent that
  rounds up past 0xFE gives 0xFF (NaN), and NaN or +-inf give 0xFF. Checked against torch.

Data (all rules): ``cast_e4m3(x * m)`` in float32, saturating round-to-nearest-even, with the
multiplier ``m`` = 1 for e == 0 (TE's ``exp2f_rcp``; SEMANTICS.md), ``2^(127-e)`` for 1 <= e <= 254
(e = 254 gives the float32 subnormal 2^-127: TE's older ``exp2f(127 - e)`` and torchao RCEIL), and
NaN for e == 255 (all of that block's data becomes NaN, 0x7F; torchao RCEIL does the same).

Block amax ignores NaN elements, as TE's kernels do (``fmaxf`` reduction in
cast/mxfp8/quantize_mxfp8.cuh), so in quantize() a NaN element never makes its block 0xFF: the
block is scaled by its other elements and the NaN element alone encodes as 0x7F; an all-NaN block
has amax 0 (scale 0x00, data all 0x7F). A block holding +-inf has amax inf: scale 0xFE for ceil
(multiplier 2^-127: inf -> +-448, finite elements -> (nearly always) +-0), 247 for floor, 0xFF
for rne (all NaN).

Dequantize: ``decode_e4m3(code) * 2^(e-127)`` (e = 0 decodes as 2^-127, e = 255 as NaN).

Known disagreements with peers (each pinned by a test in tests/unit/test_reference_blocks.py):

- torchao 0.18.0 ``to_mx`` propagates NaN into the block amax (``torch.amax``): a block holding a
  NaN gets scale 0xFF and all-NaN data under RCEIL and FLOOR; here (TE) the scale comes from the
  other elements. Inputs without NaN agree.
- torchao 0.18.0 RCEIL computes ``ceil(log2(amax / 448))`` in float32 (eager CPU fallback), which
  loses a mantissa of a few ulps: for amax = nextafter(448 * 2^k) with k <= -5 or k >= 4 torchao
  gives a scale one lower than TE (e.g. amax = nextafter(1.75): torchao 119, TE 120), and the
  data then differs (it saturates in torchao). Random data almost never hits this.
- torchao 0.18.0 FLOOR divides by max(2^(e-127), 2^-126) rather than multiplying by 1 when
  e == 0, so blocks with 0 < amax < 2^-118 (e.g. subnormal inputs) keep non-zero data there
  (amax 1e-40: torchao data 0x04, here 0x00). Newer torchao (the semantic cases in
  torchao/testing/_mxfp8_test_utils.py, not shipped in 0.18.0) multiplies by 2^127 for e == 0
  (2^-126 -> 0x40), maps an inf amax to 0xFF under RCEIL (no saturation) and treats NaN as above.
"""

from __future__ import annotations

import numpy as np

from tests.reference import fp8

BLOCK = 32
E4M3_MAX = np.float32(448.0)
RCP_E4M3_MAX = np.float32(1.0 / 448.0)  # TE's Quantized_Limits<fp8e4m3>::max_norm_rcp
E8M0_NAN = 0xFF

_E4M3_TABLE = np.array([fp8.e4m3_value(c) for c in range(0x7F)], dtype=np.float64)  # ascending


def cast_e4m3(v: np.ndarray) -> np.ndarray:
    """Saturating RNE cast of float32 values to E4M3 codes; vectorized ``fp8.encode_e4m3``.

    Nearest-value search over the 127 non-negative finite E4M3 values, ties to the even code;
    |v| beyond 448 (and inf) saturates to 448 with v's sign; NaN -> 0x7F; -0 -> 0x80.
    """
    with np.errstate(invalid="ignore"):  # signaling-NaN payloads warn on the widening cast
        v64 = np.asarray(v, dtype=np.float32).astype(np.float64)
    nan = np.isnan(v64)
    a = np.minimum(np.abs(np.where(nan, 0.0, v64)), float(E4M3_MAX))
    hi = np.searchsorted(_E4M3_TABLE, a, side="left")
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = a - _E4M3_TABLE[lo], _E4M3_TABLE[hi] - a
    tie = np.where(lo % 2 == 0, lo, hi)
    code = np.where(d_hi == 0, hi, np.where(d_lo < d_hi, lo, np.where(d_hi < d_lo, hi, tie)))
    code = code.astype(np.uint8) | np.where(np.signbit(v64), 0x80, 0).astype(np.uint8)
    code[nan] = fp8.NAN_CODE
    return code


def nan_ignoring_amax(blocks: np.ndarray, axis: int) -> np.ndarray:
    """max |x| along ``axis`` with NaN elements skipped (an all-NaN block gives 0), float32."""
    a = np.abs(np.asarray(blocks, dtype=np.float32))
    return np.where(np.isnan(a), np.float32(0), a).max(axis=axis).astype(np.float32)


def float_to_e8m0(v: np.ndarray) -> np.ndarray:
    """TE ``float_to_e8m0`` (ptx.cuh): smallest power of two >= |v| as a biased E8M0 byte.

    NaN -> 0xFF, inf -> 0xFE, 0 -> 0x00; the exponent is bumped when the mantissa is non-zero,
    but not past 0xFE and not for subnormals at or below 2^-127 (mantissa <= 0x400000).
    """
    f = np.abs(np.asarray(v, dtype=np.float32))
    bits = f.view(np.uint32)
    exp = (bits >> 23) & 0xFF
    man = bits & 0x7FFFFF
    bump = (man > 0) & (exp != 0xFE) & ~((exp == 0) & (man <= 0x400000))
    out = (exp + bump).astype(np.uint8)
    out[f == 0] = 0x00
    out[np.isinf(f)] = 0xFE
    out[np.isnan(f)] = E8M0_NAN
    return out


def _floor_e8m0(amax: np.ndarray) -> np.ndarray:
    """torchao FLOOR: biased exponent field of amax minus 8, clamped at 0; NaN -> 0xFF."""
    a = np.abs(np.asarray(amax, dtype=np.float32))
    exp = ((a.view(np.uint32) >> 23) & 0xFF).astype(np.int64)
    out = np.maximum(exp - 8, 0).astype(np.uint8)
    out[np.isnan(a)] = E8M0_NAN
    return out


def _rne_e8m0(v: np.ndarray) -> np.ndarray:
    """PyTorch's float32 -> float8_e8m0fnu cast (CPU, torch 2.13): round at the guard bit."""
    f = np.abs(np.asarray(v, dtype=np.float32))
    bits = f.view(np.uint32)
    exp = ((bits >> 23) & 0xFF).astype(np.int64)
    man = bits & 0x7FFFFF
    up = np.where(exp == 0, man > 0x400000, man >= 0x400000)
    out = np.minimum(exp + up, 0xFF).astype(np.uint8)
    out[~np.isfinite(f)] = E8M0_NAN
    return out


def even_e8m0(amax: np.ndarray, mbits: int = 3, emax: int = 8) -> np.ndarray:
    """compressed-tensors' ``generate_mx_scales`` / torchao EVEN: amax's float32 bits plus half
    an ulp of an ``mbits``-bit mantissa, the mantissa then dropped, that exponent field minus
    ``emax`` (floor(log2 of the element's largest value)), clamped at 0; NaN -> 0xFF."""
    a = np.abs(np.asarray(amax, dtype=np.float32))
    bits = a.view(np.uint32).astype(np.int64)
    rounded = ((bits + (1 << (23 - mbits - 1))) >> 23) & 0xFF
    out = np.maximum(rounded - emax, 0).astype(np.uint8)
    out[np.isnan(a)] = E8M0_NAN
    return out


def e8m0_from_amax(amax: np.ndarray, rounding: str = "ceil") -> np.ndarray:
    """Biased E8M0 scale byte(s) of block amax values under ``rounding`` (see module docstring)."""
    a = np.asarray(amax, dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        if rounding == "ceil":
            return float_to_e8m0((a * RCP_E4M3_MAX).astype(np.float32))
        if rounding == "floor":
            return _floor_e8m0(a)
        if rounding == "rne":
            return _rne_e8m0((a / E4M3_MAX).astype(np.float32))
        if rounding == "even":
            return even_e8m0(a)
    raise ValueError(f"unknown E8M0 rounding {rounding!r}; expected ceil, floor, rne or even")


def decode_e8m0(e: np.ndarray) -> np.ndarray:
    """Value of E8M0 bytes as float32: 2^(e-127) (0x00 -> 2^-127, a subnormal), 0xFF -> NaN."""
    e = np.asarray(e, dtype=np.uint8)
    out = np.ldexp(1.0, np.minimum(e, 0xFE).astype(np.int64) - 127).astype(np.float32)
    out[e == E8M0_NAN] = np.nan
    return out


def data_multiplier(e: np.ndarray) -> np.ndarray:
    """float32 factor applied to x before the cast: 1 for e == 0, NaN for 0xFF, else 2^(127-e)."""
    e = np.asarray(e, dtype=np.uint8)
    out = np.ldexp(1.0, 127 - e.astype(np.int64)).astype(np.float32)
    out[e == 0] = 1.0
    out[e == E8M0_NAN] = np.nan
    return out


def _rowwise_blocks(x: np.ndarray, block: int) -> tuple[np.ndarray, int]:
    """x [M, K] zero-padded to [M, nb*block] and viewed as [M, nb, block]; returns (blocks, K)."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {x.shape}")
    m, k = x.shape
    nb = -(-k // block)
    padded = np.zeros((m, nb * block), dtype=np.float32)
    padded[:, :k] = x
    return padded.reshape(m, nb, block), k


def _quantize_rowwise(x: np.ndarray, rounding: str) -> tuple[np.ndarray, np.ndarray]:
    blocks, k = _rowwise_blocks(x, BLOCK)
    scales = e8m0_from_amax(nan_ignoring_amax(blocks, axis=-1), rounding)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = (blocks * data_multiplier(scales)[..., None]).astype(np.float32)
    codes = cast_e4m3(scaled).reshape(blocks.shape[0], -1)[:, :k]
    return codes, scales


def quantize(x: np.ndarray, axis: int = 1, rounding: str = "ceil") -> tuple[np.ndarray, np.ndarray]:
    """MXFP8 quantize of x [M, K]: (E4M3 codes [M, K] uint8, E8M0 scales uint8).

    axis=1 (rowwise, 1x32 blocks along K): scales [M, ceil(K/32)]; axis=0 (columnwise, 32x1
    blocks down dim 0): scales [ceil(M/32), K]. Partial blocks are zero-padded (their amax is
    over the real elements); codes keep x's shape.
    """
    if axis == 1:
        return _quantize_rowwise(x, rounding)
    if axis == 0:
        codes_t, scales_t = _quantize_rowwise(np.asarray(x, dtype=np.float32).T, rounding)
        return np.ascontiguousarray(codes_t.T), np.ascontiguousarray(scales_t.T)
    raise ValueError(f"axis must be 0 or 1, got {axis}")


def dequantize(codes: np.ndarray, scales: np.ndarray, axis: int = 1) -> np.ndarray:
    """float32 ``decode_e4m3(codes) * 2^(e-127)``, each scale broadcast over its block."""
    codes = np.asarray(codes, dtype=np.uint8)
    s = decode_e8m0(scales)
    m, k = codes.shape
    full = np.repeat(s, BLOCK, axis=axis)[:m, :k]
    return (fp8.decode_e4m3(codes) * full).astype(np.float32)


def swizzle_rowwise(scales: np.ndarray) -> np.ndarray:
    """cuBLAS block-scaling-factor layout of rowwise scales [R, C] (spec/mxfp8.rst), 1-D uint8.

    Zero-pad to a multiple of 128 rows and 4 columns; the 128x4 tiles are stored one after
    another in row-major tile order (512 bytes each); inside a tile, the 4-byte row i of the
    tile goes to slot (i % 32) * 4 + i // 32, i.e. rows in the order 0, 32, 64, 96, 1, 33, ...
    Written as index arithmetic; equals torchao's ``to_blocked`` (tested).
    """
    s = np.asarray(scales, dtype=np.uint8)
    rows, cols = s.shape
    rp, cp = -(-rows // 128) * 128, -(-cols // 4) * 4
    out = np.zeros(rp * cp, dtype=np.uint8)
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    tile = (r // 128) * (cp // 4) + c // 4
    i = r % 128
    dest = tile * 512 + ((i % 32) * 4 + i // 32) * 4 + c % 4
    out[dest.ravel()] = s.ravel()
    return out


def swizzle_columnwise(scales: np.ndarray) -> np.ndarray:
    """GEMM layout of columnwise scales [R = ceil(M/32), C = K]: 4x128 tiles (spec/mxfp8.rst).

    Reading of the spec: a 4x128 tile of the columnwise scales is the transpose of a 128x4 tile
    of the transposed tensor's rowwise scales (columnwise data of x is the rowwise data of x^T
    as far as the GEMM is concerned), so this is ``swizzle_rowwise(scales.T)``; TE computes the
    columnwise index with the same ``gemm_swizzled_scale_idx`` with the roles of the axes
    exchanged (cast/mxfp8/quantize_mxfp8.cuh).
    """
    return swizzle_rowwise(np.ascontiguousarray(np.asarray(scales, dtype=np.uint8).T))
