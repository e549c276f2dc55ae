// qmlir_numerics.cuh: every per-element computation of the quantize core, shared by all kernels.
//
// The numerics contract is SEMANTICS.md; the bytes must equal the CPU path (the llvm-cpu
// templates under passes/lowering/cpu/templates) and the test references (tests/reference/*). Everything
// here is plain IEEE float32 arithmetic (one rounding per operation, subnormals kept: build with
// --fmad=false --ftz=false) plus integer bit manipulation, so a host C++ compiler and the GPU give
// identical bytes: the unit tests compile this header on the host and compare bit for bit.
//
// No CUDA headers (NVRTC has none): the encoders do not use cuda_fp8.h or cvt.*.e4m3x2.
#pragma once

#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned long long uintptr_t;
#elif defined(__CUDACC__)
#include <stdint.h>
#else
#include <math.h>
#include <stdint.h>
#include <string.h>
#define __host__
#define __device__
#define __forceinline__ inline
#endif

#define QMLIR_HD __host__ __device__ __forceinline__

// ---- constants (float32 bit patterns where the value is not exact in decimal) ----------------

#define QMLIR_FLT_MAX_BITS 0x7F7FFFFFu
#define QMLIR_INF_BITS 0x7F800000u
#define QMLIR_ABS_MASK 0x7FFFFFFFu
#define QMLIR_RCP_448_BITS 0x3B124925u    // fp32(1/448): TE's max_norm_rcp for E4M3
#define QMLIR_SIXTH_BITS 0x3E2AAAABu      // fp32(1/6): TE folds it into the NVFP4 global scale
#define QMLIR_E4M3_MAX 448.0f
#define QMLIR_E5M2_MAX 57344.0f
#define QMLIR_E2M1_MAX 6.0f
#define QMLIR_E8M0_NAN 0xFFu

enum QmlirE8m0Rule {
  QMLIR_E8M0_CEIL = 0,
  QMLIR_E8M0_FLOOR = 1,
  QMLIR_E8M0_RNE = 2,
  QMLIR_E8M0_EVEN = 3
};

// ---- float <-> bits ----------------------------------------------------------------------------

QMLIR_HD uint32_t qmlir_f32_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

QMLIR_HD float qmlir_bits_f32(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

QMLIR_HD bool qmlir_is_nan(float f) { return (qmlir_f32_bits(f) & QMLIR_ABS_MASK) > QMLIR_INF_BITS; }

QMLIR_HD bool qmlir_is_inf(float f) { return (qmlir_f32_bits(f) & QMLIR_ABS_MASK) == QMLIR_INF_BITS; }

QMLIR_HD float qmlir_flt_max() { return qmlir_bits_f32(QMLIR_FLT_MAX_BITS); }

// |x| for an amax reduction: NaN contributes 0, so fmaxf-style reductions skip it (TE).
QMLIR_HD float qmlir_abs_or_zero(float x) { return qmlir_is_nan(x) ? 0.0f : fabsf(x); }

// 2^k as a float32 for -149 <= k <= 127 (subnormal powers built from their bit).
QMLIR_HD float qmlir_pow2(int k) {
  if (k >= -126) return qmlir_bits_f32((uint32_t)(k + 127) << 23);
  return qmlir_bits_f32(1u << (k + 149));
}

// ---- small-float encoders -----------------------------------------------------------------------
//
// Saturating round-to-nearest-even cast of a float32 to a format with `mbits` mantissa bits, an
// exponent field of `ebits` bits and smallest normal exponent `emin` (TOOLCHAIN.md's integer
// encoder, as encode_fp8.mlir): saturate |v| at max, ulp = 2^(max(e, emin) - mbits),
// q = rint(|v| / ulp) (exact: a power-of-two scaling, then RNE), code = ((max(e, emin) - emin) <<
// mbits) + q, where a carry of q lands on the next binade, which is what makes a value that rounds
// up across the subnormal/normal boundary land on the smallest normal. Sign OR-ed in; NaN ->
// nan_code. With signed_zero false (E2M1, TE's cast_to_fp4x2) the sign is kept only when v < 0,
// so -0.0 -> +0 while a negative value that rounds to zero keeps its sign.
QMLIR_HD uint32_t qmlir_encode_small_float(float v, int ebits, int mbits, int emin, float max_finite,
                                           uint32_t nan_code, bool signed_zero) {
  uint32_t bits = qmlir_f32_bits(v);
  if ((bits & QMLIR_ABS_MASK) > QMLIR_INF_BITS) return nan_code;
  uint32_t sign = signed_zero ? (bits >> 31) : (v < 0.0f ? 1u : 0u);
  float a = fminf(fabsf(v), max_finite);
  int e = (int)(qmlir_f32_bits(a) >> 23) - 127;
  int e_clamped = e > emin ? e : emin;
  float inv_ulp = qmlir_pow2(mbits - e_clamped);
  uint32_t q = (uint32_t)rintf(a * inv_ulp);
  uint32_t magnitude = ((uint32_t)(e_clamped - emin) << mbits) + q;
  return magnitude | (sign << (ebits + mbits));
}

// E4M3 (float8_e4m3fn): max 448, NaN -> 0x7F (whatever the sign), -0.0 -> 0x80.
QMLIR_HD uint8_t qmlir_encode_e4m3(float v) {
  return (uint8_t)qmlir_encode_small_float(v, 4, 3, -6, QMLIR_E4M3_MAX, 0x7Fu, true);
}

// E5M2: max 57344, +-inf -> +-max (saturating), NaN -> 0x7F.
QMLIR_HD uint8_t qmlir_encode_e5m2(float v) {
  return (uint8_t)qmlir_encode_small_float(v, 5, 2, -14, QMLIR_E5M2_MAX, 0x7Fu, true);
}

// E2M1 nibble (0..15): max 6, NaN -> 0, -0.0 -> 0, a negative value rounding to zero -> 8.
// The same codes as qmlir_encode_small_float(v, 2, 1, 0, 6, 0, false) for every one of the 2^32
// floats (checked exhaustively), mostly in float operations (the GPU's FMA pipe, not its integer
// one): |v| saturated at 6 is rounded to nearest even on the E2M1 grid by adding and subtracting
// 1.5 * 2^(E + 22), E its binade's exponent but at least 0 (the grid's step 2^(E - 1) is then the
// sum's ulp: 0.5 below 2, 1 in [2, 4), 2 in [4, 6]); the rounded value times 2^-126 has the code
// in its bits 22..24 (0.5 -> the subnormal 2^-127 = bit 22, 1 -> 2^-126 = bit 23, ..., 6 -> 7).
QMLIR_HD uint8_t qmlir_encode_e2m1(float v) {
  const float a = fminf(fabsf(v), QMLIR_E2M1_MAX);  // +-inf -> 6 (NaN too: re-coded below)
  const uint32_t binade = qmlir_f32_bits(a) & QMLIR_INF_BITS;
  const uint32_t e = binade > (127u << 23) ? binade : (127u << 23);
  const float magic = qmlir_bits_f32(e + (22u << 23) + 0x400000u);
  const float r = (a + magic) - magic;
  const uint32_t m = qmlir_f32_bits(r * 1.1754943508222875e-38f) >> 22;  // 2^-126
  return (uint8_t)(qmlir_is_nan(v) ? 0u : (m | (v < 0.0f ? 8u : 0u)));
}

QMLIR_HD uint8_t qmlir_encode_fp8(float v, bool e5m2) {
  return e5m2 ? qmlir_encode_e5m2(v) : qmlir_encode_e4m3(v);
}

QMLIR_HD float qmlir_decode_e4m3(uint8_t code) {
  uint32_t exp = (code >> 3) & 0xFu, man = code & 0x7u;
  uint32_t sign = (uint32_t)(code & 0x80u) << 24;
  if (exp == 0xFu && man == 0x7u) return qmlir_bits_f32(0x7FC00000u);
  if (exp == 0) return qmlir_bits_f32(qmlir_f32_bits((float)man * 0.001953125f) | sign);  // 2^-9
  return qmlir_bits_f32(sign | ((exp + 120u) << 23) | (man << 20));
}

QMLIR_HD float qmlir_decode_e2m1(uint8_t code) {
  uint32_t exp = (code >> 1) & 0x3u, man = code & 0x1u;
  float mag = exp == 0 ? 0.5f * (float)man : (1.0f + 0.5f * (float)man) * qmlir_pow2((int)exp - 1);
  return (code & 0x8u) ? -mag : mag;
}

// ---- E8M0 scales (MXFP8) -------------------------------------------------------------------------

// TE float_to_e8m0 (ceil): the smallest power of two >= |v|, saturated to [2^-127, 2^127]:
// NaN -> 0xFF, inf -> 0xFE, 0 -> 0; biased exponent plus one when the mantissa is non-zero, but
// not past 0xFE and not for a subnormal v <= 2^-127.
QMLIR_HD uint8_t qmlir_e8m0_ceil(float v) {
  uint32_t bits = qmlir_f32_bits(v) & QMLIR_ABS_MASK;
  if (bits > QMLIR_INF_BITS) return QMLIR_E8M0_NAN;
  if (bits == QMLIR_INF_BITS) return 0xFEu;
  uint32_t exp = bits >> 23, man = bits & 0x7FFFFFu;
  bool bump = man != 0 && exp != 0xFEu && !(exp == 0 && man <= 0x400000u);
  return (uint8_t)(exp + (bump ? 1u : 0u));
}

// OCP / torchao FLOOR: amax's biased exponent field minus 8 (= floor(log2 448)), clamped at 0;
// inf -> 247, NaN -> 0xFF.
QMLIR_HD uint8_t qmlir_e8m0_floor(float amax) {
  uint32_t bits = qmlir_f32_bits(amax) & QMLIR_ABS_MASK;
  if (bits > QMLIR_INF_BITS) return QMLIR_E8M0_NAN;
  int e = (int)(bits >> 23) - 8;
  return (uint8_t)(e > 0 ? e : 0);
}

// compressed-tensors / torchao EVEN for E4M3 data: amax rounded half up to 3 mantissa bits, then
// floor's rule on it (an inf amax -> 247, NaN -> 0xFF).
QMLIR_HD uint8_t qmlir_e8m0_even(float amax) {
  uint32_t bits = qmlir_f32_bits(amax) & QMLIR_ABS_MASK;
  if (bits > QMLIR_INF_BITS) return QMLIR_E8M0_NAN;
  uint32_t rounded = (bits + (1u << 19)) & QMLIR_INF_BITS;
  int e = (int)(rounded >> 23) - 8;
  return (uint8_t)(e > 0 ? e : 0);
}

// PyTorch's float32 -> float8_e8m0fnu (CPU): round at the mantissa's top bit (ties up for a
// normal v, strictly above half for a subnormal v); past 0xFE -> 0xFF; NaN and inf -> 0xFF.
QMLIR_HD uint8_t qmlir_e8m0_rne(float v) {
  uint32_t bits = qmlir_f32_bits(v) & QMLIR_ABS_MASK;
  if (bits >= QMLIR_INF_BITS) return QMLIR_E8M0_NAN;
  uint32_t exp = bits >> 23, man = bits & 0x7FFFFFu;
  bool up = exp == 0 ? man > 0x400000u : man >= 0x400000u;
  uint32_t e = exp + (up ? 1u : 0u);
  return (uint8_t)(e > 0xFFu ? 0xFFu : e);
}

// The E8M0 scale of an MXFP8 block (E4M3 data) from its NaN-free amax, under `rule`.
QMLIR_HD uint8_t qmlir_e8m0_from_amax(float amax, int rule) {
  if (rule == QMLIR_E8M0_FLOOR) return qmlir_e8m0_floor(amax);
  if (rule == QMLIR_E8M0_RNE) return qmlir_e8m0_rne(amax / QMLIR_E4M3_MAX);
  if (rule == QMLIR_E8M0_EVEN) return qmlir_e8m0_even(amax);
  return qmlir_e8m0_ceil(amax * qmlir_bits_f32(QMLIR_RCP_448_BITS));
}

// Value of an E8M0 byte: 2^(e-127) (0x00 -> the subnormal 2^-127), 0xFF -> NaN.
QMLIR_HD float qmlir_decode_e8m0(uint8_t e) {
  if (e == QMLIR_E8M0_NAN) return qmlir_bits_f32(0x7FC00000u);
  return qmlir_pow2((int)e - 127);
}

// Factor applied to x before the E4M3 cast (TE exp2f_rcp): 1 for e == 0, 2^(127-e) for
// 1 <= e <= 254 (e = 254 gives the subnormal 2^-127), NaN for 0xFF.
QMLIR_HD float qmlir_e8m0_data_multiplier(uint8_t e) {
  if (e == 0) return 1.0f;
  if (e == QMLIR_E8M0_NAN) return qmlir_bits_f32(0x7FC00000u);
  return qmlir_pow2(127 - (int)e);
}

QMLIR_HD uint8_t qmlir_mxfp8_encode(float x, float multiplier) {
  return qmlir_encode_e4m3(x * multiplier);
}

// ---- FP8 scales (per-tensor current scaling, FP8 blocks) -----------------------------------------

// TE compute_scale_from_amax in float32: amax < eps -> eps; amax 0, inf or NaN -> 1;
// fp8_max / amax, inf -> FLT_MAX; pow2 keeps sign and exponent (mantissa zeroed).
QMLIR_HD float qmlir_fp8_scale(float amax, float fp8_max, float eps, bool pow2) {
  float a = amax < eps ? eps : amax;
  uint32_t abits = qmlir_f32_bits(a) & QMLIR_ABS_MASK;
  if (abits == 0 || abits >= QMLIR_INF_BITS) return 1.0f;
  float scale = fp8_max / a;
  if (qmlir_is_inf(scale)) scale = qmlir_flt_max();
  if (pow2) scale = qmlir_bits_f32(qmlir_f32_bits(scale) & 0xFF800000u);
  return scale;
}

QMLIR_HD float qmlir_fp8_max(bool e5m2) { return e5m2 ? QMLIR_E5M2_MAX : QMLIR_E4M3_MAX; }

// ---- NVFP4 two-level scales (TE's reference order, float32) --------------------------------------

// S = min(448 * 6 / global_amax, FLT_MAX), S = 1 when that is 0 (an infinite amax).
QMLIR_HD float qmlir_nvfp4_global_encode_scale(float global_amax) {
  float s = 2688.0f / global_amax;
  if (s > qmlir_flt_max()) s = qmlir_flt_max();
  return s == 0.0f ? 1.0f : s;
}

// S_dec = 1 / S: the global decode scale (x ~ e2m1 * d * S_dec).
QMLIR_HD float qmlir_nvfp4_global_decode_scale(float global_amax) {
  return 1.0f / qmlir_nvfp4_global_encode_scale(global_amax);
}

// d = cast_e4m3(clamp(min(block_amax * (S * fp32(1/6)), FLT_MAX), +-448)): the E4M3 code of the
// block's decode scale.
// d before its E4M3 cast, never NaN (an amax skips NaN, S is finite): the kernel casts it with the
// hardware's cvt, the same bytes as qmlir_encode_e4m3 for every non-NaN float.
QMLIR_HD float qmlir_nvfp4_block_scale_value(float block_amax, float s_enc) {
  float multiplier = s_enc * qmlir_bits_f32(QMLIR_SIXTH_BITS);
  float d = block_amax * multiplier;
  return d > qmlir_flt_max() ? qmlir_flt_max() : d;
}

QMLIR_HD uint8_t qmlir_nvfp4_block_scale(float block_amax, float s_enc) {
  return qmlir_encode_e4m3(qmlir_nvfp4_block_scale_value(block_amax, s_enc));  // saturates at 448
}

// enc = min(1 / (float(d) * S_dec), FLT_MAX): the block's element multiplier.
QMLIR_HD float qmlir_nvfp4_encode_multiplier(uint8_t d_code, float s_dec) {
  float p = qmlir_decode_e4m3(d_code) * s_dec;
  float enc = 1.0f / p;
  return enc > qmlir_flt_max() ? qmlir_flt_max() : enc;
}

// E2M1 nibble of cast_e2m1(clamp(x * enc, +-6)).
QMLIR_HD uint8_t qmlir_nvfp4_encode(float x, float enc) { return qmlir_encode_e2m1(x * enc); }

// ---- GEMM-ready scale layouts --------------------------------------------------------------------

QMLIR_HD uint32_t qmlir_ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

QMLIR_HD uint32_t qmlir_pad4(uint32_t n) { return qmlir_ceil_div(n, 4) * 4; }

QMLIR_HD uint32_t qmlir_pad128(uint32_t n) { return qmlir_ceil_div(n, 128) * 128; }

// MXFP8/NVFP4 (torchao to_blocked, cuBLAS): offset of S[row, col] of an S [rows, cols] padded to
// 128x4 tiles; tiles stored contiguously in row-major tile order (512 bytes each), inside a tile
// the 4-byte row i goes to slot (i % 32) * 4 + i / 32 (rows 0, 32, 64, 96, 1, 33, ...).
QMLIR_HD uint32_t qmlir_mx_offset(uint32_t row, uint32_t col, uint32_t cols) {
  uint32_t tile = (row / 128) * qmlir_ceil_div(cols, 4) + col / 4;
  uint32_t i = row % 128;
  return tile * 512 + ((i % 32) * 4 + i / 32) * 4 + col % 4;
}

// Bytes of the swizzled layout of an S [rows, cols].
QMLIR_HD uint32_t qmlir_mx_size(uint32_t rows, uint32_t cols) {
  return qmlir_pad128(rows) * qmlir_pad4(cols);
}

// FP8 block, 1D (block1d): S[r, kb] of rowwise scales at [kb, pad4(rows)] (transposed, padded).
QMLIR_HD uint32_t qmlir_block1d_offset(uint32_t r, uint32_t kb, uint32_t rows) {
  return kb * qmlir_pad4(rows) + r;
}

// FP8 block, 2D (block2d): S[rb, kb] at [row_blocks, pad4(k_blocks)] (padded).
QMLIR_HD uint32_t qmlir_block2d_offset(uint32_t rb, uint32_t kb, uint32_t k_blocks) {
  return rb * qmlir_pad4(k_blocks) + kb;
}
