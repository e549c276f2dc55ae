// mxfp8.cu: MXFP8 (TE MXFP8BlockScaling, OCP MX): E4M3 data, one E8M0 scale per 32 elements.
//
// Grid (ceil(cols/128), ceil(rows/32)), block 256 (8 warps): one workgroup per 32x128 tile, read
// once; warp w holds tile rows 4w..4w+3, lane l columns 4l..4l+3 (float4 loads, 4-byte stores).
// A rowwise 1x32 block is 8 lanes of a row; a columnwise 32x1 block is a tile column.
// Constants: rows, cols, rule (E8M0 rounding: 0 ceil = TE/cuBLAS, 1 floor = OCP/torchao,
// 2 rne = PyTorch's cast, 3 even = compressed-tensors, torchao EVEN). Data =
// cast_e4m3(x * multiplier(e)), in x's shape.
// Scales are written swizzled (quantize and swizzle fused), padding entries as 0:
//   rowwise S[r, kb] (kb = c/32) at qmlir_mx_offset(r, kb, ceil(cols/32)),
//     [pad128(rows) * pad4(ceil(cols/32))] bytes;
//   columnwise S[rb, c] (rb = r/32) at qmlir_mx_offset(c, rb, ceil(rows/32)) (the swizzle of
//     S^T: 4x128 tiles), [pad128(cols) * pad4(ceil(rows/32))] bytes.
#include "qmlir_device.cuh"

// QMLIR_MXFP8_MIN_BLOCKS: a __launch_bounds__ minimum for the rowwise+columnwise kernel (a tuning
// probe's knob, benchmarks/gpu_probes; none by default: 4 and 5 were slower on an H100).
#ifdef QMLIR_MXFP8_MIN_BLOCKS
#define QMLIR_MXFP8_BOUNDS __launch_bounds__(256, QMLIR_MXFP8_MIN_BLOCKS)
#else
#define QMLIR_MXFP8_BOUNDS
#endif

namespace {

constexpr int kRowsPerWarp = 4;
constexpr int kTileRows = 32;
using Tile = QmlirTile<kRowsPerWarp>;

__device__ __forceinline__ void encode_store(uint8_t* data, const Tile& t, int i,
                                             const float m[4], int32_t rows, int32_t cols) {
  // qmlir_mxfp8_encode (E4M3 of x * multiplier), four at a time by the hardware cast
  const uint32_t codes = qmlir_encode_fp8x4(t.v[i][0] * m[0], t.v[i][1] * m[1], t.v[i][2] * m[2],
                                            t.v[i][3] * m[3], false);
  qmlir_store4(data, t, i, codes, rows, cols);
}

// Zero the padding of a swizzled S [s_rows, s_cols]: this workgroup owns S rows
// [r_begin, r_end) and S columns [c_begin, c_end); entries outside [s_rows, s_cols] are padding.
__device__ __forceinline__ void zero_padding(uint8_t* scales, uint32_t s_rows, uint32_t s_cols,
                                             uint32_t r_begin, uint32_t r_end, uint32_t c_begin,
                                             uint32_t c_end) {
  const uint32_t width = c_end - c_begin;
  for (uint32_t idx = threadIdx.x; idx < (r_end - r_begin) * width; idx += blockDim.x) {
    const uint32_t r = r_begin + idx / width, c = c_begin + idx % width;
    if (r >= s_rows || c >= s_cols) scales[qmlir_mx_offset(r, c, s_cols)] = 0;
  }
}

__device__ __forceinline__ void rowwise(const Tile& t, uint8_t* data, uint8_t* scales,
                                        int32_t rows, int32_t cols, int rule) {
  const int lane = threadIdx.x % 32;
  const uint32_t k_blocks = qmlir_ceil_div(cols, 32);
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const float amax = qmlir_group_max(qmlir_lane_amax(t.v[i]), 8);
    const uint8_t e = qmlir_e8m0_from_amax(amax, rule);
    const float mult = qmlir_e8m0_data_multiplier(e);
    const float m[4] = {mult, mult, mult, mult};
    encode_store(data, t, i, m, rows, cols);
    const int64_t row = t.row0 + i;
    const uint32_t kb = (uint32_t)(t.col / 32);
    if (lane % 8 == 0 && row < rows && kb < k_blocks) scales[qmlir_mx_offset(row, kb, k_blocks)] = e;
  }
  // padding: S columns [4 bx, 4 bx + 4); S rows of this tile, or up to pad128(rows) for the last
  const uint32_t r_begin = blockIdx.y * kTileRows;
  const uint32_t r_end = blockIdx.y + 1 == gridDim.y ? qmlir_pad128(rows) : r_begin + kTileRows;
  zero_padding(scales, rows, k_blocks, r_begin, r_end, blockIdx.x * 4, blockIdx.x * 4 + 4);
}

__device__ __forceinline__ void columnwise(const Tile& t, uint8_t* data, uint8_t* scales,
                                           int32_t rows, int32_t cols, int rule) {
  const uint32_t row_blocks = qmlir_ceil_div(rows, 32), rb = blockIdx.y;
  float amax[4], m[4];
  uint8_t e[4];
  qmlir_tile_column_amax(t, amax);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    e[j] = qmlir_e8m0_from_amax(amax[j], rule);
    m[j] = qmlir_e8m0_data_multiplier(e[j]);
  }
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) encode_store(data, t, i, m, rows, cols);
  if (threadIdx.x < 32) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (t.col + j < cols) scales[qmlir_mx_offset(t.col + j, rb, row_blocks)] = e[j];
    }
  }
  // padding of S^T [cols, row_blocks]: S^T rows = this tile's 128 columns, S^T columns = rb, or
  // rb up to pad4(row_blocks) for the last tile row
  const uint32_t c_end = blockIdx.y + 1 == gridDim.y ? qmlir_pad4(row_blocks) : rb + 1;
  zero_padding(scales, cols, row_blocks, blockIdx.x * 128, blockIdx.x * 128 + 128, rb, c_end);
}

}  // namespace

// Rowwise (1x32) and columnwise (32x1) MXFP8 from one read of x.
extern "C" __global__ void QMLIR_MXFP8_BOUNDS
    qmlir_quantize_mxfp8(const float* x, uint8_t* data_row, uint8_t* scale_row, uint8_t* data_col,
                         uint8_t* scale_col, int32_t rows, int32_t cols, int32_t rule) {
  const Tile t = qmlir_load_tile<kRowsPerWarp>(x, rows, cols);
  rowwise(t, data_row, scale_row, rows, cols, rule);
  columnwise(t, data_col, scale_col, rows, cols, rule);
}

// Rowwise (1x32) MXFP8 only: activations and weights in inference.
extern "C" __global__ void qmlir_quantize_mxfp8_rowwise(const float* x, uint8_t* data,
                                                        uint8_t* scale, int32_t rows,
                                                        int32_t cols, int32_t rule) {
  const Tile t = qmlir_load_tile<kRowsPerWarp>(x, rows, cols);
  rowwise(t, data, scale, rows, cols, rule);
}
