// block_fp8.cu: FP8 blockwise scaling (fp8-block: TE Float8BlockScaling, DeepSeek-V3 style).
//
// Fused amax + scale + cast + GEMM-ready scale layout, one read of the f32 input per kernel.
// Grid (ceil(cols/128), ceil(rows/128)), block 256 (8 warps): one workgroup per 128x128 tile;
// warp w owns tile rows 16w..16w+15, lane l columns 4l..4l+3 (float4 loads, 4-byte stores when
// cols % 4 == 0). The 1D kernels stream through those rows 4 at a time (the columnwise pass
// reads the tile again, from L2, which the first read asks to keep it); the 2D kernel holds its
// 64 values per thread in registers.
// Constants: rows, cols, pow2 (power-of-2 scales, TE default 1), eps_bits (f32 bits of eps).
// E4M3 data in x's shape; scale_inv f32 in the GEMM-ready layouts (padding written as 0):
//   1D rowwise (1x128 along cols):    sinv[kb, r]  of [ceil(cols/128), pad4(rows)]  (block1d)
//   1D columnwise (128x1 down rows):  sinv[rb, c]  of [ceil(rows/128), pad4(cols)]
//   2D (128x128 tiles):               sinv[rb, kb] of [ceil(rows/128), pad4(ceil(cols/128))]
// fp8-rowwise (1 x cols: one block a row, the same scale rule) has a kernel of its own,
// qmlir_quantize_fp8_rowwise: grid (1, ceil(rows/8)), 8 rows a workgroup, sinv[r] of
// [1, pad4(rows)] (at the end of this file).
// Partial tiles are zero-padded: a block's amax is over its real elements.
#include "qmlir_device.cuh"

namespace {

constexpr int kTile = 128;
constexpr int kRowsPerWarp = 16;
// The 1D kernels stream through a warp's 16 rows kGroup at a time (few registers, so many warps
// per SM keep loads in flight); the columnwise pass reads the tile a second time, from L2.
// QMLIR_BLOCK1D_GROUP and QMLIR_BLOCK1D_MIN_BLOCKS (the rowwise+columnwise kernel's
// __launch_bounds__ minimum) reshape it for a tuning probe (benchmarks/gpu_probes).
#ifndef QMLIR_BLOCK1D_GROUP
#define QMLIR_BLOCK1D_GROUP 4
#endif
#ifndef QMLIR_BLOCK1D_MIN_BLOCKS
#define QMLIR_BLOCK1D_MIN_BLOCKS 4
#endif
// The rowwise+columnwise kernel's first read asks L2 to keep the tile (evict_last) and the
// columnwise pass's re-read to drop it (evict_first): without the hints a third of the re-read
// missed L2 at 8192x8192 (DRAM traffic 563 MB for 392 MB of input and outputs; an H100 then ran
// it at 205 us, with them at 186 us).
constexpr int kFirstRead = QMLIR_L2_EVICT_LAST, kReRead = QMLIR_L2_EVICT_FIRST;
constexpr int kGroup = QMLIR_BLOCK1D_GROUP;
static_assert(kRowsPerWarp % kGroup == 0, "a warp's rows are whole groups");

using Tile = QmlirTile<kRowsPerWarp>;

// data[row, col..col+3] = encode_e4m3(v * scale[j]) (in bounds only)
template <int kRows>
__device__ __forceinline__ void store_codes(uint8_t* data, const QmlirTile<kRows>& t, int i,
                                            const float s[4], int32_t rows, int32_t cols) {
  const uint32_t codes = qmlir_encode_fp8x4(t.v[i][0] * s[0], t.v[i][1] * s[1], t.v[i][2] * s[2],
                                            t.v[i][3] * s[3], false);
  qmlir_store4(data, t, i, codes, rows, cols);
}

// 1x128 rowwise blocks of the rows in t: data and sinv[kb, r] (block1d), padding rows written 0.
template <int kRows>
__device__ __forceinline__ void rowwise(const QmlirTile<kRows>& t, uint8_t* data, float* sinv,
                                        int32_t rows, int32_t cols, bool pow2, float eps) {
  const int lane = threadIdx.x % 32;
  const uint32_t kb = blockIdx.x;
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const float amax = qmlir_group_max(qmlir_lane_amax(t.v[i]), 32);
    const float scale = qmlir_fp8_scale(amax, QMLIR_E4M3_MAX, eps, pow2);
    const float s[4] = {scale, scale, scale, scale};
    store_codes(data, t, i, s, rows, cols);
    const int64_t row = t.row0 + i;
    if (lane == 0 && row < (int64_t)qmlir_pad4(rows)) {
      sinv[qmlir_block1d_offset(row, kb, rows)] = row < rows ? 1.0f / scale : 0.0f;
    }
  }
}

// The 1D kernels: rowwise (1x128) data and scales of the tile, and with kColumns the columnwise
// (128x1) ones, sinv_col[rb, c] with padding columns written as 0. One DRAM read of x.
template <bool kColumns>
__device__ __forceinline__ void block1d(const float* x, uint8_t* data_row, float* sinv_row,
                                        uint8_t* data_col, float* sinv_col, int32_t rows,
                                        int32_t cols, bool pow2, float eps) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t first = ((int64_t)blockIdx.y * 8 + warp) * kRowsPerWarp;
  float mine[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // this thread's column maxima
#pragma unroll 1
  for (int g = 0; g < kRowsPerWarp; g += kGroup) {
    const QmlirTile<kGroup> t =
        qmlir_load_rows<kGroup, kColumns ? kFirstRead : QMLIR_L2_NORMAL>(x, rows, cols, first + g);
    rowwise(t, data_row, sinv_row, rows, cols, pow2, eps);
    if (kColumns) {
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) mine[j] = fmaxf(mine[j], qmlir_abs_or_zero(t.v[i][j]));
      }
    }
  }
  if (!kColumns) return;
  float amax[4], s[4];
  qmlir_column_amax(mine, amax);
#pragma unroll
  for (int j = 0; j < 4; ++j) s[j] = qmlir_fp8_scale(amax[j], QMLIR_E4M3_MAX, eps, pow2);
#pragma unroll 1
  for (int g = 0; g < kRowsPerWarp; g += kGroup) {
    const QmlirTile<kGroup> t = qmlir_load_rows<kGroup, kReRead>(x, rows, cols, first + g);
#pragma unroll
    for (int i = 0; i < kGroup; ++i) store_codes(data_col, t, i, s, rows, cols);
  }
  if (warp != 0) return;
  const int64_t padded = qmlir_pad4(cols);
  const int64_t col = (int64_t)blockIdx.x * kTile + lane * 4;
  float* out = sinv_col + (int64_t)blockIdx.y * padded;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (col + j < padded) out[col + j] = col + j < cols ? 1.0f / s[j] : 0.0f;
  }
}

}  // namespace

// Rowwise (1x128) and columnwise (128x1) quantization from one read of x.
// (at most 64 registers: 4 workgroups per SM by default)
extern "C" __global__ void __launch_bounds__(256, QMLIR_BLOCK1D_MIN_BLOCKS)
    qmlir_quantize_fp8_block1d(const float* x, uint8_t* data_row, float* sinv_row,
                               uint8_t* data_col, float* sinv_col, int32_t rows, int32_t cols,
                               int32_t pow2, int32_t eps_bits) {
  block1d<true>(x, data_row, sinv_row, data_col, sinv_col, rows, cols, pow2 != 0,
                qmlir_bits_f32((uint32_t)eps_bits));
}

// Rowwise (1x128) quantization only: activations in inference.
extern "C" __global__ void qmlir_quantize_fp8_block1d_rowwise(const float* x, uint8_t* data,
                                                              float* sinv, int32_t rows,
                                                              int32_t cols, int32_t pow2,
                                                              int32_t eps_bits) {
  block1d<false>(x, data, sinv, nullptr, nullptr, rows, cols, pow2 != 0,
                 qmlir_bits_f32((uint32_t)eps_bits));
}

// 2D (128x128 tiles): one scale per tile, sinv[rb, kb] (block2d), padding kb written as 0.
extern "C" __global__ void qmlir_quantize_fp8_block2d(const float* x, uint8_t* data, float* sinv,
                                                      int32_t rows, int32_t cols, int32_t pow2,
                                                      int32_t eps_bits) {
  const Tile t = qmlir_load_tile<kRowsPerWarp>(x, rows, cols);
  float m = 0.0f;
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) m = fmaxf(m, qmlir_lane_amax(t.v[i]));
  const float amax = qmlir_block_max(m);
  const float scale =
      qmlir_fp8_scale(amax, QMLIR_E4M3_MAX, qmlir_bits_f32((uint32_t)eps_bits), pow2 != 0);
  const float s[4] = {scale, scale, scale, scale};
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) store_codes(data, t, i, s, rows, cols);
  if (threadIdx.x != 0) return;
  const uint32_t k_blocks = qmlir_ceil_div(cols, kTile), kb = blockIdx.x, rb = blockIdx.y;
  sinv[qmlir_block2d_offset(rb, kb, k_blocks)] = 1.0f / scale;
  if (kb + 1 != k_blocks) return;
  for (uint32_t pad = k_blocks; pad < qmlir_pad4(k_blocks); ++pad) {
    sinv[qmlir_block2d_offset(rb, pad, k_blocks)] = 0.0f;
  }
}

// ---- fp8-rowwise: one block a row (1 x cols), the 1x128 rule over the whole row ----------------
// Grid (1, ceil(rows/8)), block 256: workgroup y takes rows 8y..8y+7. A row of up to 1024 * kVec
// columns (kVec <= 8: 8192) is held in registers by the whole workgroup, thread t the float4s at
// columns 4t + 1024j: one DRAM read, a workgroup max, the codes from registers. At most 64
// registers (4 workgroups an SM: 56, no spills) keep 4 rows an SM in flight; on an H200 at
// 8192x8192 this ran 114 us (2935 GB/s, 325 MB of DRAM) where 2 workgroups an SM (104 registers)
// took 184 us and a warp a row reading it twice 147-176 us (539-569 MB). A longer row: a warp a
// row (warp w: row 8y + w), 128 columns a step, read twice (its amax, then the codes: a re-read
// that the first read asks L2 to keep). sinv[r] of [1, pad4(rows)] (block1d with one K block),
// padding rows 0.
constexpr int kRowwiseRows = 8;
constexpr int kHeldMax = 8;  // float4s a thread holds: rows of up to 8192 columns

template <int kVec>
__device__ __forceinline__ void rowwise_held(const float* x, uint8_t* data, float* sinv,
                                             int32_t rows, int32_t cols, bool pow2, float eps) {
  const int tid = threadIdx.x;
  const bool vector = cols % 4 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)data % 4 == 0;
#pragma unroll 1
  for (int i = 0; i < kRowwiseRows; ++i) {
    const int64_t row = (int64_t)blockIdx.y * kRowwiseRows + i;
    if (row >= (int64_t)qmlir_pad4(rows)) return;  // the same for the whole workgroup
    float v[kVec][4];
    float m = 0.0f;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const int64_t col = 4 * ((int64_t)j * 256 + tid);
      const float* p = x + row * cols + col;
      if (row < rows && vector && col < cols) {
        const float4 q = qmlir_load_float4<QMLIR_L2_EVICT_FIRST>(p);
        v[j][0] = q.x, v[j][1] = q.y, v[j][2] = q.z, v[j][3] = q.w;
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) v[j][e] = (row < rows && col + e < cols) ? p[e] : 0.0f;
      }
      m = fmaxf(m, qmlir_lane_amax(v[j]));
    }
    const float amax = qmlir_block_max(m);
    const float scale = qmlir_fp8_scale(amax, QMLIR_E4M3_MAX, eps, pow2);
    if (tid == 0) sinv[row] = row < rows ? 1.0f / scale : 0.0f;
    if (row >= rows) continue;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const int64_t col = 4 * ((int64_t)j * 256 + tid);
      if (col >= cols) continue;
      const uint32_t codes = qmlir_encode_fp8x4(v[j][0] * scale, v[j][1] * scale,
                                                v[j][2] * scale, v[j][3] * scale, false);
      uint8_t* out = data + row * cols + col;
      if (vector) {
        __stcs(reinterpret_cast<unsigned int*>(out), codes);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (col + e < cols) out[e] = (uint8_t)(codes >> (8 * e));
        }
      }
    }
  }
}

__device__ __forceinline__ void rowwise_twice(const float* x, uint8_t* data, float* sinv,
                                              int32_t rows, int32_t cols, bool pow2, float eps) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row = (int64_t)blockIdx.y * kRowwiseRows + warp;
  if (row >= (int64_t)qmlir_pad4(rows)) return;
  float m = 0.0f;
#pragma unroll 4
  for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
    const QmlirTile<1> t = qmlir_load_rows_at<1, kFirstRead>(x, rows, cols, row, c0);
    m = fmaxf(m, qmlir_lane_amax(t.v[0]));
  }
  const float scale = qmlir_fp8_scale(qmlir_group_max(m, 32), QMLIR_E4M3_MAX, eps, pow2);
  if (lane == 0) sinv[row] = row < rows ? 1.0f / scale : 0.0f;
  if (row >= rows) return;
  const float s[4] = {scale, scale, scale, scale};
#pragma unroll 4
  for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
    store_codes(data, qmlir_load_rows_at<1, kReRead>(x, rows, cols, row, c0), 0, s, rows, cols);
  }
}

extern "C" __global__ void __launch_bounds__(256, 4)
    qmlir_quantize_fp8_rowwise(const float* x, uint8_t* data, float* sinv, int32_t rows,
                               int32_t cols, int32_t pow2, int32_t eps_bits) {
  const float eps = qmlir_bits_f32((uint32_t)eps_bits);
  const bool p2 = pow2 != 0;
  const int32_t vecs = (int32_t)qmlir_ceil_div((uint32_t)cols, 1024u);  // float4s a thread
  if (vecs <= 1) return rowwise_held<1>(x, data, sinv, rows, cols, p2, eps);
  if (vecs <= 2) return rowwise_held<2>(x, data, sinv, rows, cols, p2, eps);
  if (vecs <= 4) return rowwise_held<4>(x, data, sinv, rows, cols, p2, eps);
  if (vecs <= kHeldMax) return rowwise_held<kHeldMax>(x, data, sinv, rows, cols, p2, eps);
  rowwise_twice(x, data, sinv, rows, cols, p2, eps);
}
