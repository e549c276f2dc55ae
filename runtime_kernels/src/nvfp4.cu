// nvfp4.cu: NVFP4 (TE NVFP4BlockScaling): E2M1 data in 1x16 blocks along cols, an E4M3 decode
// scale per block and a per-tensor f32 global scale, in TE's reference order (SEMANTICS.md).
//
// The global amax comes first (qmlir_amax_f32 over x into a zero-filled f32[1]), then:
//   qmlir_nvfp4_decode_scale: grid (1); s_dec[0] = 1 / S, S = min(2688 / global_amax, FLT_MAX)
//     (1 when that is 0): the global decode scale the GEMM takes.
//   qmlir_nvfp4_quantize: grid (ceil(cols/128), ceil(rows/32)), block 256 (8 warps): one
//     workgroup per 32x128 tile; warp w holds tile rows 4w..4w+3, lane l columns 4l..4l+3, so a
//     block of 16 is 4 lanes. Constants rows, cols.
//     data u8[rows, ceil(cols/16) * 8]: two E2M1 codes a byte, low nibble = even element; the
//       zero padding of a partial block encodes as 0.
//     scales: E4M3 codes of d, S[r, kb] at qmlir_mx_offset(r, kb, ceil(cols/16)) (the 128x4
//       swizzle), [pad128(rows) * pad4(ceil(cols/16))] bytes, padding written as 0.
#include "qmlir_device.cuh"

namespace {

constexpr int kRowsPerWarp = 4;
constexpr int kTileRows = 32;

}  // namespace

extern "C" __global__ void qmlir_nvfp4_decode_scale(const float* global_amax, float* s_dec) {
  if (blockIdx.x == 0 && threadIdx.x == 0) s_dec[0] = qmlir_nvfp4_global_decode_scale(global_amax[0]);
}

extern "C" __global__ void qmlir_nvfp4_quantize(const float* x, const float* global_amax,
                                                uint8_t* data, uint8_t* scales, int32_t rows,
                                                int32_t cols) {
  const QmlirTile<kRowsPerWarp> t = qmlir_load_tile<kRowsPerWarp>(x, rows, cols);
  const float g = global_amax[0];
  const float s_enc = qmlir_nvfp4_global_encode_scale(g);
  const float s_dec = qmlir_nvfp4_global_decode_scale(g);
  const int lane = threadIdx.x % 32;
  const uint32_t k_blocks = qmlir_ceil_div(cols, 16);
  const int64_t row_bytes = (int64_t)k_blocks * 8;
  const uint32_t kb = (uint32_t)(t.col / 16);
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const float amax = qmlir_group_max(qmlir_lane_amax(t.v[i]), 4);
    const uint8_t d = qmlir_nvfp4_block_scale(amax, s_enc);
    const float enc = qmlir_nvfp4_encode_multiplier(d, s_dec);
    uint8_t c[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) c[j] = qmlir_nvfp4_encode(t.v[i][j], enc);
    const int64_t row = t.row0 + i;
    if (row >= rows || kb >= k_blocks) continue;
    uint8_t* p = data + row * row_bytes + t.col / 2;
    const uint32_t two = (uint32_t)c[0] | (c[1] << 4) | (c[2] << 8) | (c[3] << 12);
    if ((uintptr_t)p % 2 == 0) {
      __stcs(reinterpret_cast<unsigned short*>(p), (unsigned short)two);
    } else {
      p[0] = (uint8_t)two;
      p[1] = (uint8_t)(two >> 8);
    }
    if (lane % 4 == 0) scales[qmlir_mx_offset(row, kb, k_blocks)] = d;
  }
  // padding of S [rows, k_blocks]: S columns [8 bx, 8 bx + 8) below pad4(k_blocks); S rows of
  // this tile, or up to pad128(rows) for the last tile row
  const uint32_t r_begin = blockIdx.y * kTileRows;
  const uint32_t r_end = blockIdx.y + 1 == gridDim.y ? qmlir_pad128(rows) : r_begin + kTileRows;
  const uint32_t c_begin = blockIdx.x * 8;
  const uint32_t c_end = min(c_begin + 8, qmlir_pad4(k_blocks));
  const uint32_t width = c_end > c_begin ? c_end - c_begin : 0;
  for (uint32_t idx = threadIdx.x; idx < (r_end - r_begin) * width; idx += blockDim.x) {
    const uint32_t r = r_begin + idx / width, c = c_begin + idx % width;
    if (r >= (uint32_t)rows || c >= k_blocks) scales[qmlir_mx_offset(r, c, k_blocks)] = 0;
  }
}
