// nvfp4.cu: NVFP4 (TE NVFP4BlockScaling): E2M1 data in 1x16 blocks along cols, an E4M3 decode
// scale per block and a per-tensor f32 global scale, in TE's reference order (SEMANTICS.md).
//
// The global amax comes first (qmlir_amax_f32 over x into a zero-filled f32[1]), then:
//   qmlir_nvfp4_decode_scale: grid (1); s_dec[0] = 1 / S, S = min(2688 / global_amax, FLT_MAX)
//     (1 when that is 0): the global decode scale the GEMM takes.
//   qmlir_nvfp4_quantize: grid (ceil(cols/128), ceil(rows/32)), block 256 (8 warps): one
//     workgroup per 32x128 tile; warp w holds tile rows 4w..4w+3, lane l columns 4l..4l+3, so a
//     block of 16 is 4 lanes; lane 4g + q computes the scale of row q of block g; tile
//     row gridDim.y - 1 - blockIdx.y. Constants rows, cols.
//     data u8[rows, ceil(cols/16) * 8]: two E2M1 codes a byte, low nibble = even element; the
//       zero padding of a partial block encodes as 0.
//     scales: E4M3 codes of d, S[r, kb] at qmlir_mx_offset(r, kb, ceil(cols/16)) (the 128x4
//       swizzle), [pad128(rows) * pad4(ceil(cols/16))] bytes, padding written as 0.
#include "qmlir_device.cuh"

namespace {

constexpr int kRowsPerWarp = 4;
constexpr int kTileRows = 32;
static_assert(kRowsPerWarp == 4, "a block's 4 lanes compute the scales of the warp's 4 rows");

}  // namespace

extern "C" __global__ void qmlir_nvfp4_decode_scale(const float* global_amax, float* s_dec) {
  if (blockIdx.x == 0 && threadIdx.x == 0) s_dec[0] = qmlir_nvfp4_global_decode_scale(global_amax[0]);
}

extern "C" __global__ void qmlir_nvfp4_quantize(const float* x, const float* global_amax,
                                                uint8_t* data, uint8_t* scales, int32_t rows,
                                                int32_t cols) {
  // tile rows in reverse launch order: the first workgroups read the rows the global-amax pass
  // read last, which L2 may still hold
  const uint32_t tile_row = gridDim.y - 1 - blockIdx.y;
  const int64_t row0 = ((int64_t)tile_row * 8 + threadIdx.x / 32) * kRowsPerWarp;
  const QmlirTile<kRowsPerWarp> t = qmlir_load_rows<kRowsPerWarp>(x, rows, cols, row0);
  const float g = global_amax[0];
  const float s_enc = qmlir_nvfp4_global_encode_scale(g);
  const float s_dec = qmlir_nvfp4_global_decode_scale(g);
  const int lane = threadIdx.x % 32;
  const uint32_t k_blocks = qmlir_ceil_div(cols, 16);
  const int64_t row_bytes = (int64_t)k_blocks * 8;
  const uint32_t kb = (uint32_t)(t.col / 16);
  // A block of 16 is 4 lanes and a warp holds 4 rows: lane q of the 4 computes row q's scale (one
  // E4M3 cast, decode and IEEE reciprocal per lane instead of four) and hands out its multiplier.
  const int q = lane % 4;
  float amax[kRowsPerWarp];
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) amax[i] = qmlir_group_max(qmlir_lane_amax(t.v[i]), 4);
  float my_amax = amax[0];
#pragma unroll
  for (int i = 1; i < kRowsPerWarp; ++i) my_amax = q == i ? amax[i] : my_amax;
  const uint8_t d =
      (uint8_t)qmlir_encode_fp8x4(qmlir_nvfp4_block_scale_value(my_amax, s_enc), 0.0f, 0.0f, 0.0f,
                                  false);
  const float my_enc = qmlir_nvfp4_encode_multiplier(d, s_dec);
  if (t.row0 + q < rows && kb < k_blocks) scales[qmlir_mx_offset(t.row0 + q, kb, k_blocks)] = d;
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const float enc = __shfl_sync(QMLIR_FULL_MASK, my_enc, (lane & ~3) | i);
    uint32_t two = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) two |= (uint32_t)qmlir_nvfp4_encode(t.v[i][j], enc) << (4 * j);
    const int64_t row = t.row0 + i;
    if (row >= rows || kb >= k_blocks) continue;
    uint8_t* p = data + row * row_bytes + t.col / 2;
    if ((uintptr_t)p % 2 == 0) {
      __stcs(reinterpret_cast<unsigned short*>(p), (unsigned short)two);
    } else {
      p[0] = (uint8_t)two;
      p[1] = (uint8_t)(two >> 8);
    }
  }
  // padding of S [rows, k_blocks]: S columns [8 bx, 8 bx + 8) below pad4(k_blocks); S rows of
  // this tile, or up to pad128(rows) for the last tile row
  const uint32_t r_begin = tile_row * kTileRows;
  const uint32_t r_end = tile_row + 1 == gridDim.y ? qmlir_pad128(rows) : r_begin + kTileRows;
  const uint32_t c_begin = blockIdx.x * 8;
  const uint32_t c_end = min(c_begin + 8, qmlir_pad4(k_blocks));
  const uint32_t width = c_end > c_begin ? c_end - c_begin : 0;
  for (uint32_t idx = threadIdx.x; idx < (r_end - r_begin) * width; idx += blockDim.x) {
    const uint32_t r = r_begin + idx / width, c = c_begin + idx % width;
    if (r >= (uint32_t)rows || c >= k_blocks) scales[qmlir_mx_offset(r, c, k_blocks)] = 0;
  }
}
