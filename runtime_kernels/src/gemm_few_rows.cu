// gemm_few_rows.cu: the FP8 GEMMs of gemm_block_scaled.cu for a decode step's few rows (M <= 16),
// C f32 [M, N] = A [M, K] x B [N, K]^T with the same bindings, constants and scales:
//   qmlir_gemm_{fp8_per_tensor,fp8_block,fp8_rowwise,mxfp8,nvfp4}_few_rows: M <= 16 (nothing at
//     a larger m), grid (ceil(N/16), 1);
//   qmlir_gemm_{fp8_per_tensor,fp8_block,fp8_rowwise,mxfp8,nvfp4}_many_rows:
//     gemm_block_scaled.cu's tiles (FP8 128 x 128, NVFP4 64 x 64) where m > 16, nothing otherwise:
//     a dynamic M launches both kernels, one after the other on the same C, each on the grid its m
//     needs, the other on one workgroup.
// A family of its own so that the tiles' modules do not carry this PTX.
#include "qmlir_device.cuh"
#include "qmlir_gemm_fp8.cuh"

// ---- FP8 for a few rows (a decode step) -------------------------------------------------------
// At M <= 16 the 128 x 128 tiles (qmlir_gemm_fp8.cuh) launch N/128 workgroups, 16 for a 2048-wide
// projection, which stream the weights at a few percent of the GPU's bandwidth (RESULTS.md,
// 2026-11-27: 7.3 of a 1.1B decode step's 10.2 ms; 49 us for a 2048 x 2048 projection at one row,
// where this path takes 7 us, 2026-11-27 sixth session). Here a workgroup (the same 256 threads)
// computes 16 rows (M padded with zero rows) x 16 columns over all of K, its 8 warps each taking
// every 8th 128-K block: entry points qmlir_gemm_fp8_per_tensor_few_rows /
// qmlir_gemm_fp8_block_few_rows (the tiled kernels' bindings and constants; M <= 16), grid
// (ceil(N/16), 1), for a static M <= 16, and for a dynamic M beside the many-rows kernels below.
// Fragments come straight from global memory, 16 bytes a load: a thread's 4 lanes of a row read the
// 128-K block's bytes [16q, 16q+16) and [64+16q, 80+16q), and the K positions within a block are
// permuted the same way for A and B (mma step s takes words 2s and 2s+1 of both), which leaves each
// block's sum as it is, up to its order. Partial sums per 128-K block are promoted with the block
// scales as the tiled kernels do; the warps' sums are added in shared memory in warp order
// (deterministic).
namespace few_rows {

constexpr int kRows = 16;
constexpr int kCols = 16;  // two n8 tiles
constexpr int kWarps = fp8::kThreads / 32;

// 16 bytes of an [rows, k] operand's row `row` from byte `col` (0 past its rows or its k)
__device__ __forceinline__ uint4 load16(const uint8_t* p, int64_t row, int32_t rows, int32_t k,
                                        int64_t col, bool wide) {
  uint4 v = make_uint4(0, 0, 0, 0);
  if (row >= rows) return v;
  const uint8_t* src = p + row * k + col;
  if (wide && col + 16 <= k) return *reinterpret_cast<const uint4*>(src);
  uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    if (col + i < k) w[i / 4] |= (uint32_t)src[i] << (8 * (i % 4));
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// a 128-K block's 32 bytes of a row for this lane (q = lane % 4): 8 words
__device__ __forceinline__ void load_block(uint32_t w[8], const uint8_t* p, int64_t row,
                                           int32_t rows, int32_t k, int64_t k0, int q,
                                           bool wide) {
  const uint4 lo = load16(p, row, rows, k, k0 + 16 * q, wide);
  const uint4 hi = load16(p, row, rows, k, k0 + 64 + 16 * q, wide);
  w[0] = lo.x, w[1] = lo.y, w[2] = lo.z, w[3] = lo.w;
  w[4] = hi.x, w[5] = hi.y, w[6] = hi.z, w[7] = hi.w;
}

using Sums = float[kWarps][kRows][kCols];  // the warps' sums: 8 KiB

// The thread's sums of its two n8 tiles (m16n8 accumulator layout: rows g and g + 8, columns
// 8j + 2q and + 1) into its warp's slot of `sums`, then a barrier: every warp's sums are in.
template <int kW>
__device__ __forceinline__ void stash(float (&sums)[kW][kRows][kCols], const float acc[2][4],
                                      int warp, int g, int q) {
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) sums[warp][g + 8 * (e / 2)][8 * j + 2 * q + (e % 2)] = acc[j][e];
  __syncthreads();
}

// output (row, col) of the workgroup's 16 x 16: the warps' sums added in warp order
template <int kW>
__device__ __forceinline__ float total(const float (&sums)[kW][kRows][kCols], int row, int col) {
  float t = 0.0f;
#pragma unroll
  for (int w = 0; w < kW; ++w) t += sums[w][row][col];
  return t;
}

template <ScaleMode kMode>
__device__ __forceinline__ void body(const uint8_t* a, const Scales& sa, const uint8_t* b,
                                     const Scales& sb, float* c, int32_t m, int32_t n, int32_t k,
                                     float factor, Sums& sums) {
  static_assert(kMode != kMx, "mxfp8 has no few-rows path");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  const bool wide = k % 16 == 0 && (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0;
  const int64_t n0 = (int64_t)blockIdx.x * kCols;
  const int blocks = (int)qmlir_ceil_div((uint32_t)k, 128);
  float acc[2][4];
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;
#pragma unroll 2
  for (int kb = warp; kb < blocks; kb += kWarps) {
    const int64_t k0 = (int64_t)kb * 128;
    uint32_t a_lo[8], a_hi[8], bw[2][8];
    load_block(a_lo, a, g, m, k, k0, q, wide);
    load_block(a_hi, a, g + 8, m, k, k0, q, wide);
#pragma unroll
    for (int j = 0; j < 2; ++j) load_block(bw[j], b, n0 + 8 * j + g, n, k, k0, q, wide);
    float part[2][4];
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) part[j][e] = 0.0f;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const uint32_t af[4] = {a_lo[2 * s], a_hi[2 * s], a_lo[2 * s + 1], a_hi[2 * s + 1]};
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const uint32_t bf[2] = {bw[j][2 * s], bw[j][2 * s + 1]};
        mma_e4m3(part[j], af, bf);
      }
    }
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float scale = 1.0f;
        if (kMode == kBlock) {
          const int64_t row = g + 8 * (e / 2), col = n0 + 8 * j + 2 * q + (e % 2);
          scale = sa.at(row, (uint32_t)kb) * sb.at(col, (uint32_t)kb);
        }
        acc[j][e] += part[j][e] * scale;
      }
  }
  stash(sums, acc, warp, g, q);
  const int row = threadIdx.x / kCols, col = threadIdx.x % kCols;  // 256 threads: every output
  const float sum = total(sums, row, col);
  if (row >= m || n0 + col >= n) return;
  if (kMode == kRowwise) factor = sa.at(row, 0) * sb.at(n0 + col, 0);
  c[(int64_t)row * n + n0 + col] = sum * factor;
}

// the few-rows kernels: their own 8 KiB of shared memory
template <ScaleMode kMode>
__device__ __forceinline__ void gemm(const uint8_t* a, const Scales& sa, const uint8_t* b,
                                     const Scales& sb, float* c, int32_t m, int32_t n, int32_t k,
                                     float factor) {
  __shared__ Sums sums;
  body<kMode>(a, sa, b, sb, c, m, n, k, factor, sums);
}

}  // namespace few_rows

// ---- mxfp8 for a few rows ----------------------------------------------------------------------
// The FP8 scheme with an E8M0 scale per 32 K: mma step s of a 128-K block is its 32-block s, of
// which thread (g, q) reads bytes [32s + 8q, 32s + 8q + 8) of each of its rows (the 4 lanes of a
// row: the block's 32 bytes), the same K positions for A and B; each step's sum is promoted with
// the two rows' scales, acc += part * (a_scale * b_scale), as the tiles do (fp8::gemm<kMx>).
namespace few_rows_mx {

using few_rows::kCols;
using few_rows::kRows;
using few_rows::kWarps;

// 8 bytes of an [rows, k] operand's row `row` from byte `col` (0 past its rows or its k)
__device__ __forceinline__ uint2 load8(const uint8_t* p, int64_t row, int32_t rows, int32_t k,
                                       int64_t col, bool wide) {
  uint2 v = make_uint2(0, 0);
  if (row >= rows) return v;
  const uint8_t* src = p + row * k + col;
  if (wide && col + 8 <= k) return *reinterpret_cast<const uint2*>(src);
  uint32_t w[2] = {0, 0};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if (col + i < k) w[i / 4] |= (uint32_t)src[i] << (8 * (i % 4));
  }
  return make_uint2(w[0], w[1]);
}

// the swizzled offset of S[row, 0] (qmlir_mx_offset), ~0u outside the operand (scale 0)
__device__ __forceinline__ uint32_t base(int64_t row, int32_t rows, uint32_t k_blocks) {
  return row < rows ? qmlir_mx_offset((uint32_t)row, 0, k_blocks) : ~0u;
}

__device__ __forceinline__ void gemm(const uint8_t* a, const uint8_t* a_scale, const uint8_t* b,
                                     const uint8_t* b_scale, float* c, int32_t m, int32_t n,
                                     int32_t k) {
  __shared__ few_rows::Sums sums;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  const bool wide = k % 8 == 0 && (uintptr_t)a % 8 == 0 && (uintptr_t)b % 8 == 0;
  const int64_t n0 = (int64_t)blockIdx.x * kCols;
  const uint32_t k_blocks = qmlir_ceil_div((uint32_t)k, 32u);
  const int blocks = (int)qmlir_ceil_div((uint32_t)k, 128u);
  const uint32_t a_base[2] = {base(g, m, k_blocks), base(g + 8, m, k_blocks)};
  uint32_t b_base[2][2];  // C's columns n0 + 8j + 2q + h
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) b_base[j][h] = base(n0 + 8 * j + 2 * q + h, n, k_blocks);
  float acc[2][4] = {};  // the two n8 tiles' sums
#pragma unroll 1
  for (int kb128 = warp; kb128 < blocks; kb128 += kWarps) {
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const uint32_t kb = (uint32_t)kb128 * 4 + s;
      if (kb >= k_blocks) break;
      const int64_t col = (int64_t)kb * 32 + 8 * q;
      const uint2 a_lo = load8(a, g, m, k, col, wide), a_hi = load8(a, g + 8, m, k, col, wide);
      const uint32_t af[4] = {a_lo.x, a_hi.x, a_lo.y, a_hi.y};
      const uint32_t step = (kb / 4) * 512 + kb % 4;
      const float sa[2] = {fp8::mx_scale(a_scale, a_base[0], step),
                           fp8::mx_scale(a_scale, a_base[1], step)};
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const uint2 bw = load8(b, n0 + 8 * j + g, n, k, col, wide);
        const uint32_t bf[2] = {bw.x, bw.y};
        float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        mma_e4m3(part, af, bf);
        const float sb[2] = {fp8::mx_scale(b_scale, b_base[j][0], step),
                             fp8::mx_scale(b_scale, b_base[j][1], step)};
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[j][e] += part[e] * (sa[e / 2] * sb[e % 2]);
      }
    }
  }
  few_rows::stash(sums, acc, warp, g, q);
  const int row = threadIdx.x / kCols, col = threadIdx.x % kCols;  // 256 threads: every output
  const float sum = few_rows::total(sums, row, col);
  if (row < m && n0 + col < n) c[(int64_t)row * n + n0 + col] = sum;
}

}  // namespace few_rows_mx

// ---- NVFP4 for a few rows -----------------------------------------------------------------------
// The FP8 scheme with NVFP4's operands and its tiles' block size (128 threads, so that a dynamic
// M launches the pair at one size): a workgroup computes 16 rows (M padded with zero rows) x 16
// columns over all of K, its 4 warps each taking every 4th 128-K block. Thread (g, t) of a warp
// reads 16 bytes (32 E2M1 codes, two 16-element blocks) of each of its rows (A's g and g + 8,
// B's n0 + g and n0 + 8 + g) at codes [32t, 32t + 32) of the block, and its mma step s
// (m16n8k16, f16) takes codes 4s..4s+3 as its K positions 2t, 2t+1, 2t+8, 2t+9 for A and B
// alike: the same permutation of each 128-K block's positions for both operands, so each block's
// sum is unchanged up to its order. Each code is dequantized to e2m1 * d in f16 (exact: the
// tiles' staging) with d its 16-element block's E4M3 scale; sums in f32 as the tiles'; the warps'
// sums are added in shared memory in warp order; C = total * (a_sdec * b_sdec).
namespace few_rows_fp4 {

constexpr int kThreads = 128;  // nvfp4's tiles' block size (gemm_nvfp4)
constexpr int kWarps = kThreads / 32;
constexpr int kRows = few_rows::kRows, kCols = few_rows::kCols;

// the decoded E4M3 scale of row `row`'s 16-element block kb (0 past the rows or the blocks)
__device__ __forceinline__ float block_scale(const uint8_t* scales, int64_t row, int32_t rows,
                                             uint32_t kb, uint32_t k_blocks) {
  if (row >= rows || kb >= k_blocks) return 0.0f;
  return qmlir_decode_e4m3(scales[qmlir_mx_offset((uint32_t)row, kb, k_blocks)]);
}

// byte i of the 16 as two f16 (low nibble first), each code's value times d
__device__ __forceinline__ uint32_t pair(const uint4& v, int i, float d) {
  const uint32_t word = i < 4 ? v.x : i < 8 ? v.y : i < 12 ? v.z : v.w;
  const uint32_t byte = (word >> (8 * (i % 4))) & 0xFFu;
  return pack_f16x2(qmlir_decode_e2m1(byte & 0xFu) * d, qmlir_decode_e2m1(byte >> 4) * d);
}

using Sums = float[kWarps][kRows][kCols];

__device__ __forceinline__ void gemm(const uint8_t* a, const uint8_t* a_scale, const uint8_t* b,
                                     const uint8_t* b_scale, float* c, int32_t m, int32_t n,
                                     int32_t k, float factor) {
  __shared__ Sums sums;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const uint32_t k_blocks = qmlir_ceil_div((uint32_t)k, 16u);
  const int64_t row_bytes = (int64_t)k_blocks * 8;
  const bool wide = row_bytes % 16 == 0 && (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0;
  const int64_t n0 = (int64_t)blockIdx.x * kCols;
  const int blocks = (int)qmlir_ceil_div((uint32_t)k, 128u);
  float acc[2][4] = {};  // the two n8 tiles' sums
#pragma unroll 1
  for (int kb128 = warp; kb128 < blocks; kb128 += kWarps) {
    const int64_t byte = (int64_t)kb128 * 64 + 16 * t;  // codes [32t, 32t + 32) of the block
    const uint32_t kb = (uint32_t)kb128 * 8 + 2 * t;      // their two 16-element blocks
    const uint4 a_lo = few_rows::load16(a, g, m, (int32_t)row_bytes, byte, wide);
    const uint4 a_hi = few_rows::load16(a, g + 8, m, (int32_t)row_bytes, byte, wide);
    uint4 bw[2];
    float db[2][2];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int64_t col = n0 + 8 * j + g;
      bw[j] = few_rows::load16(b, col, n, (int32_t)row_bytes, byte, wide);
      db[j][0] = block_scale(b_scale, col, n, kb, k_blocks);
      db[j][1] = block_scale(b_scale, col, n, kb + 1, k_blocks);
    }
    const float da[2][2] = {
        {block_scale(a_scale, g, m, kb, k_blocks), block_scale(a_scale, g, m, kb + 1, k_blocks)},
        {block_scale(a_scale, g + 8, m, kb, k_blocks),
         block_scale(a_scale, g + 8, m, kb + 1, k_blocks)}};
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const int h = s / 4;  // codes 4s..4s+3 lie in the thread's first or second block
      const uint32_t af[4] = {pair(a_lo, 2 * s, da[0][h]), pair(a_hi, 2 * s, da[1][h]),
                              pair(a_lo, 2 * s + 1, da[0][h]), pair(a_hi, 2 * s + 1, da[1][h])};
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const uint32_t bf[2] = {pair(bw[j], 2 * s, db[j][h]), pair(bw[j], 2 * s + 1, db[j][h])};
        mma_f16(acc[j], af, bf);
      }
    }
  }
  few_rows::stash(sums, acc, warp, g, t);
  for (int idx = threadIdx.x; idx < kRows * kCols; idx += kThreads) {
    const int row = idx / kCols, col = idx % kCols;
    const float sum = few_rows::total(sums, row, col);
    if (row < m && n0 + col < n) c[(int64_t)row * n + n0 + col] = sum * factor;
  }
}

}  // namespace few_rows_fp4

extern "C" __global__ void __launch_bounds__(fp8::kThreads)
    qmlir_gemm_fp8_per_tensor_few_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                       const float* b_sinv, float* c, int32_t m, int32_t n,
                                       int32_t k) {
  if (m > few_rows::kRows) return;  // a dynamic M's many rows: the many-rows kernel's
  const Scales none{nullptr, nullptr, 0, k, 0};
  few_rows::gemm<kPerTensor>(a, none, b, none, c, m, n, k, a_sinv[0] * b_sinv[0]);
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads)
    qmlir_gemm_fp8_block_few_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                  const float* b_sinv, float* c, int32_t m, int32_t n, int32_t k,
                                  int32_t a_dims, int32_t b_dims) {
  if (m > few_rows::kRows) return;
  const Scales sa{a_sinv, nullptr, m, k, a_dims};
  const Scales sb{b_sinv, nullptr, n, k, b_dims};
  few_rows::gemm<kBlock>(a, sa, b, sb, c, m, n, k, 1.0f);
}

// A dynamic M: the few-rows kernel above on grid (ceil(N/16), 1) where m <= 16, else on one
// workgroup that returns at once; then on the same C the tiles below on grid (ceil(N/128),
// ceil(M/128)) where m > 16, else on one workgroup that returns at once (IREE's cuda runtime
// refuses a dispatch of no workgroups). The cuda lowering's count regions pick both grids from M.
// Each kernel keeps its own registers and shared memory: one entry point that branched between
// the two paths cost the tiles 17% at 8192^3 (spills) and ran a one-row decode GEMM 1.5-1.8x
// slower than the few-rows kernel (128 or 255 registers and 48 KiB of shared memory against 77 or
// 94 and 8 KiB; RESULTS.md, 2026-11-27 seventh session); a host-side choice between the launches
// (scf.if) broke IREE's command buffers at every GEMM. A static M takes one of the kernels.
extern "C" __global__ void __launch_bounds__(fp8::kThreads)
    qmlir_gemm_fp8_rowwise_few_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                    const float* b_sinv, float* c, int32_t m, int32_t n,
                                    int32_t k) {
  if (m > few_rows::kRows) return;
  const Scales sa{a_sinv, nullptr, m, k, 1};
  const Scales sb{b_sinv, nullptr, n, k, 1};
  few_rows::gemm<kRowwise>(a, sa, b, sb, c, m, n, k, 1.0f);
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads, QMLIR_GEMM_PER_TENSOR_BLOCKS)
    qmlir_gemm_fp8_per_tensor_many_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                        const float* b_sinv, float* c, int32_t m, int32_t n,
                                        int32_t k) {
  if (m <= few_rows::kRows) return;  // the few-rows kernel's
  const Scales none{nullptr, nullptr, 0, k, 0};
  fp8::gemm<kPerTensor>(a, none, b, none, c, m, n, k, a_sinv[0] * b_sinv[0]);
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads, 1)
    qmlir_gemm_fp8_block_many_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                   const float* b_sinv, float* c, int32_t m, int32_t n, int32_t k,
                                   int32_t a_dims, int32_t b_dims) {
  if (m <= few_rows::kRows) return;
  const Scales sa{a_sinv, nullptr, m, k, a_dims};
  const Scales sb{b_sinv, nullptr, n, k, b_dims};
  fp8::gemm<kBlock>(a, sa, b, sb, c, m, n, k, 1.0f);
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads, QMLIR_GEMM_PER_TENSOR_BLOCKS)
    qmlir_gemm_fp8_rowwise_many_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                     const float* b_sinv, float* c, int32_t m, int32_t n,
                                     int32_t k) {
  if (m <= few_rows::kRows) return;
  const Scales sa{a_sinv, nullptr, m, k, 1};
  const Scales sb{b_sinv, nullptr, n, k, 1};
  fp8::gemm<kRowwise>(a, sa, b, sb, c, m, n, k, 1.0f);
}

extern "C" __global__ void __launch_bounds__(few_rows_fp4::kThreads)
    qmlir_gemm_nvfp4_few_rows(const uint8_t* a, const uint8_t* a_scale, const float* a_sdec,
                              const uint8_t* b, const uint8_t* b_scale, const float* b_sdec,
                              float* c, int32_t m, int32_t n, int32_t k) {
  if (m > few_rows_fp4::kRows) return;
  few_rows_fp4::gemm(a, a_scale, b, b_scale, c, m, n, k, a_sdec[0] * b_sdec[0]);
}

extern "C" __global__ void __launch_bounds__(kThreads)
    qmlir_gemm_nvfp4_many_rows(const uint8_t* a, const uint8_t* a_scale, const float* a_sdec,
                               const uint8_t* b, const uint8_t* b_scale, const float* b_sdec,
                               float* c, int32_t m, int32_t n, int32_t k) {
  if (m <= few_rows_fp4::kRows) return;
  gemm_nvfp4(a, a_scale, a_sdec, b, b_scale, b_sdec, c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads)
    qmlir_gemm_mxfp8_few_rows(const uint8_t* a, const uint8_t* a_scale, const uint8_t* b,
                              const uint8_t* b_scale, float* c, int32_t m, int32_t n, int32_t k) {
  if (m > few_rows::kRows) return;
  few_rows_mx::gemm(a, a_scale, b, b_scale, c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads, 1)
    qmlir_gemm_mxfp8_many_rows(const uint8_t* a, const uint8_t* a_scale, const uint8_t* b,
                               const uint8_t* b_scale, float* c, int32_t m, int32_t n, int32_t k) {
  if (m <= few_rows::kRows) return;
  const Scales sa{nullptr, a_scale, m, k, 1};
  const Scales sb{nullptr, b_scale, n, k, 1};
  fp8::gemm<kMx>(a, sa, b, sb, c, m, n, k, 1.0f);
}
