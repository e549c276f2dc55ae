// Host build of qmlir_numerics.cuh for the unit tests (tests/unit/test_cuda_kernel_math.py):
// extern "C" array wrappers around the header's per-element functions, plus whole-tensor
// compositions in the kernels' order of operations, loaded with ctypes and compared bit for bit
// with tests/reference/*. Not part of the product: the kernels include the same header.
#include "qmlir_numerics.cuh"

extern "C" {

void qmlir_host_encode(const float* in, uint8_t* out, int64_t n, int format) {
  for (int64_t i = 0; i < n; ++i) {
    if (format == 0) out[i] = qmlir_encode_e4m3(in[i]);
    if (format == 1) out[i] = qmlir_encode_e5m2(in[i]);
    if (format == 2) out[i] = qmlir_encode_e2m1(in[i]);
  }
}

void qmlir_host_decode(const uint8_t* in, float* out, int64_t n, int format) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = format == 2 ? qmlir_decode_e2m1(in[i]) : qmlir_decode_e4m3(in[i]);
  }
}

void qmlir_host_e8m0_from_amax(const float* amax, uint8_t* out, int64_t n, int rule) {
  for (int64_t i = 0; i < n; ++i) out[i] = qmlir_e8m0_from_amax(amax[i], rule);
}

void qmlir_host_e8m0_ceil(const float* v, uint8_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = qmlir_e8m0_ceil(v[i]);
}

void qmlir_host_e8m0_values(const uint8_t* e, float* decoded, float* multiplier, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    decoded[i] = qmlir_decode_e8m0(e[i]);
    multiplier[i] = qmlir_e8m0_data_multiplier(e[i]);
  }
}

void qmlir_host_fp8_scale(const float* amax, float* out, int64_t n, float fp8_max, float eps,
                          int pow2) {
  for (int64_t i = 0; i < n; ++i) out[i] = qmlir_fp8_scale(amax[i], fp8_max, eps, pow2 != 0);
}

float qmlir_host_nvfp4_global_decode_scale(float global_amax) {
  return qmlir_nvfp4_global_decode_scale(global_amax);
}

float qmlir_host_nvfp4_global_encode_scale(float global_amax) {
  return qmlir_nvfp4_global_encode_scale(global_amax);
}

void qmlir_host_mx_offsets(uint32_t rows, uint32_t cols, uint32_t* out) {
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) out[r * cols + c] = qmlir_mx_offset(r, c, cols);
}

void qmlir_host_block_offsets(uint32_t rows, uint32_t cols, int two_d, uint32_t* out) {
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c)
      out[r * cols + c] = two_d ? qmlir_block2d_offset(r, c, cols) : qmlir_block1d_offset(r, c, rows);
}

// MXFP8 rowwise quantize of x [rows, cols] (1x32 blocks): codes [rows, cols], E8M0 compact
// scales [rows, ceil(cols/32)].
void qmlir_host_mxfp8_rowwise(const float* x, int64_t rows, int64_t cols, int rule, uint8_t* codes,
                              uint8_t* scales) {
  int64_t blocks = (cols + 31) / 32;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t c0 = b * 32, c1 = c0 + 32 < cols ? c0 + 32 : cols;
      float amax = 0.0f;
      for (int64_t c = c0; c < c1; ++c) amax = fmaxf(amax, qmlir_abs_or_zero(x[r * cols + c]));
      uint8_t e = qmlir_e8m0_from_amax(amax, rule);
      scales[r * blocks + b] = e;
      float m = qmlir_e8m0_data_multiplier(e);
      for (int64_t c = c0; c < c1; ++c) codes[r * cols + c] = qmlir_mxfp8_encode(x[r * cols + c], m);
    }
  }
}

// NVFP4 (TE order) of x [rows, cols]: packed [rows, ceil(cols/16)*8], E4M3 block scales
// [rows, ceil(cols/16)]; returns S_dec.
float qmlir_host_nvfp4(const float* x, int64_t rows, int64_t cols, uint8_t* packed,
                       uint8_t* scales) {
  float global_amax = 0.0f;
  for (int64_t i = 0; i < rows * cols; ++i) global_amax = fmaxf(global_amax, qmlir_abs_or_zero(x[i]));
  float s_enc = qmlir_nvfp4_global_encode_scale(global_amax);
  float s_dec = qmlir_nvfp4_global_decode_scale(global_amax);
  int64_t blocks = (cols + 15) / 16;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      float amax = 0.0f;
      for (int64_t c = b * 16; c < b * 16 + 16 && c < cols; ++c)
        amax = fmaxf(amax, qmlir_abs_or_zero(x[r * cols + c]));
      uint8_t d = qmlir_nvfp4_block_scale(amax, s_enc);
      scales[r * blocks + b] = d;
      float enc = qmlir_nvfp4_encode_multiplier(d, s_dec);
      for (int64_t j = 0; j < 8; ++j) {
        int64_t c = b * 16 + 2 * j;
        uint8_t lo = c < cols ? qmlir_nvfp4_encode(x[r * cols + c], enc) : 0;
        uint8_t hi = c + 1 < cols ? qmlir_nvfp4_encode(x[r * cols + c + 1], enc) : 0;
        packed[r * blocks * 8 + b * 8 + j] = (uint8_t)(lo | (hi << 4));
      }
    }
  }
  return s_dec;
}

}  // extern "C"
