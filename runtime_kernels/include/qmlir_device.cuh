// qmlir_device.cuh: device-only helpers shared by the kernels (reductions, atomics, stores).
// The element math is in qmlir_numerics.cuh; nothing here changes a value, only moves it.
#pragma once

#include "qmlir_numerics.cuh"

#define QMLIR_FULL_MASK 0xFFFFFFFFu

// max over the `width` lanes of an aligned lane group (width a power of two <= 32).
__device__ __forceinline__ float qmlir_group_max(float v, int width) {
  for (int offset = width / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(QMLIR_FULL_MASK, v, offset));
  }
  return v;
}

// max over the whole block (blockDim.x a multiple of 32, at most 1024); every thread gets it.
__device__ __forceinline__ float qmlir_block_max(float v) {
  __shared__ float partial[32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = qmlir_group_max(v, 32);
  __syncthreads();  // partial may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < warps ? partial[lane] : 0.0f;
  return qmlir_group_max(v, 32);
}

// *address = max(*address, value) for non-negative floats: their bits order like unsigned ints.
__device__ __forceinline__ void qmlir_atomic_max_nonneg(float* address, float value) {
  atomicMax(reinterpret_cast<unsigned int*>(address), __float_as_uint(value));
}

// four E4M3/E5M2 bytes as one little-endian word (byte 0 = the lowest address)
__device__ __forceinline__ uint32_t qmlir_pack4(uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3) {
  return (uint32_t)b0 | ((uint32_t)b1 << 8) | ((uint32_t)b2 << 16) | ((uint32_t)b3 << 24);
}

// The E4M3 (or E5M2) codes of v0..v3 packed little-endian (v0 in the low byte): the bytes of
// qmlir_encode_fp8, by the hardware's saturating round-to-nearest-even cast (sm_89+: one
// cvt.rn.satfinite.{e4m3,e5m2}x2.f32 per pair instead of ~25 integer operations per value).
// Both round an exact product once to nearest even and saturate finite values and +-inf at
// +-max; a NaN is re-coded as 0x7F whatever its sign, as the shared encoder does. The GPU check
// (benchmarks/gpu_check_run.py) compares the two bit for bit on ties, subnormals, +-0, +-max and
// just past it, +-inf and NaN.
__device__ __forceinline__ uint32_t qmlir_encode_fp8x4(float v0, float v1, float v2, float v3,
                                                      bool e5m2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint16_t lo, hi;
  if (e5m2) {
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(v1), "f"(v0));
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(v3), "f"(v2));
  } else {
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(v1), "f"(v0));
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(v3), "f"(v2));
  }
  uint32_t packed = (uint32_t)lo | ((uint32_t)hi << 16);
  if (qmlir_is_nan(v0) || qmlir_is_nan(v1) || qmlir_is_nan(v2) || qmlir_is_nan(v3)) {
    const float v[4] = {v0, v1, v2, v3};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (qmlir_is_nan(v[j])) packed = (packed & ~(0xFFu << (8 * j))) | (0x7Fu << (8 * j));
    }
  }
  return packed;
#else
  return qmlir_pack4(qmlir_encode_fp8(v0, e5m2), qmlir_encode_fp8(v1, e5m2),
                     qmlir_encode_fp8(v2, e5m2), qmlir_encode_fp8(v3, e5m2));
#endif
}

// A workgroup's tile of an f32 [rows, cols] input in registers: 8 warps of 32 lanes, warp w
// holding kRowsPerWarp consecutive rows from tile row w * kRowsPerWarp, lane l the 4 columns
// 4l..4l+3; the tile is (8 * kRowsPerWarp) x 128 at (blockIdx.y, blockIdx.x). Out-of-bounds
// elements read as 0 (the zero padding of partial blocks).
template <int kRowsPerWarp>
struct QmlirTile {
  float v[kRowsPerWarp][4];
  int64_t row0, col;  // first global row of this warp, first global column of this lane
  bool vector;        // cols % 4 == 0 and x 16-byte aligned: float4 loads, 4-byte stores
};

// kRows consecutive rows from global row `row0` (this lane's 4 columns of the tile at blockIdx.x):
// the rows of a tile a warp holds at once (qmlir_load_tile), or a group of them (a kernel that
// streams through its rows).
// kL2 is an L2 eviction hint for the float4 loads: QMLIR_L2_NORMAL, QMLIR_L2_EVICT_LAST (data read
// again soon: keep it), QMLIR_L2_EVICT_FIRST (its last read).
enum QmlirL2Hint { QMLIR_L2_NORMAL = 0, QMLIR_L2_EVICT_LAST = 1, QMLIR_L2_EVICT_FIRST = 2 };

template <int kL2>
__device__ __forceinline__ float4 qmlir_load_float4(const float* p) {
  if (kL2 == QMLIR_L2_NORMAL) return *reinterpret_cast<const float4*>(p);
  uint64_t policy;
  if (kL2 == QMLIR_L2_EVICT_LAST) {
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  } else {
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  }
  float4 q;
  asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
               : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w)
               : "l"(p), "l"(policy));
  return q;
}

// From column `col0` (a 128-column chunk: this lane's 4 columns of it) rather than the tile's.
template <int kRows, int kL2 = QMLIR_L2_NORMAL>
__device__ __forceinline__ QmlirTile<kRows> qmlir_load_rows_at(const float* x, int32_t rows,
                                                               int32_t cols, int64_t row0,
                                                               int64_t col0) {
  QmlirTile<kRows> t;
  t.row0 = row0;
  t.col = col0 + (threadIdx.x % 32) * 4;
  t.vector = cols % 4 == 0 && (uintptr_t)x % 16 == 0;
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int64_t row = t.row0 + i;
    const float* p = x + row * cols + t.col;
    if (row < rows && t.vector && t.col < cols) {
      const float4 q = qmlir_load_float4<kL2>(p);
      t.v[i][0] = q.x, t.v[i][1] = q.y, t.v[i][2] = q.z, t.v[i][3] = q.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) t.v[i][j] = (row < rows && t.col + j < cols) ? p[j] : 0.0f;
    }
  }
  return t;
}

template <int kRows, int kL2 = QMLIR_L2_NORMAL>
__device__ __forceinline__ QmlirTile<kRows> qmlir_load_rows(const float* x, int32_t rows,
                                                            int32_t cols, int64_t row0) {
  return qmlir_load_rows_at<kRows, kL2>(x, rows, cols, row0, (int64_t)blockIdx.x * 128);
}

template <int kRowsPerWarp, int kL2 = QMLIR_L2_NORMAL>
__device__ __forceinline__ QmlirTile<kRowsPerWarp> qmlir_load_tile(const float* x, int32_t rows,
                                                                   int32_t cols) {
  const int warp = threadIdx.x / 32;
  return qmlir_load_rows<kRowsPerWarp, kL2>(x, rows, cols,
                                       ((int64_t)blockIdx.y * 8 + warp) * kRowsPerWarp);
}

// max |v| of a lane's 4 values, NaN skipped
__device__ __forceinline__ float qmlir_lane_amax(const float v[4]) {
  return fmaxf(fmaxf(qmlir_abs_or_zero(v[0]), qmlir_abs_or_zero(v[1])),
               fmaxf(qmlir_abs_or_zero(v[2]), qmlir_abs_or_zero(v[3])));
}

// column j's max |v| over the whole tile (8 warps) from each thread's max over its own rows
// (`mine`), via shared memory; every thread calls it.
__device__ __forceinline__ void qmlir_column_amax(const float mine[4], float amax[4]) {
  __shared__ float partial[8][128];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < 4; ++j) partial[warp][lane * 4 + j] = mine[j];
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float m = 0.0f;
#pragma unroll
    for (int w = 0; w < 8; ++w) m = fmaxf(m, partial[w][lane * 4 + j]);
    amax[j] = m;
  }
}

template <int kRowsPerWarp>
__device__ __forceinline__ void qmlir_tile_column_amax(const QmlirTile<kRowsPerWarp>& t,
                                                       float amax[4]) {
  float mine[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float m = 0.0f;
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) m = fmaxf(m, qmlir_abs_or_zero(t.v[i][j]));
    mine[j] = m;
  }
  qmlir_column_amax(mine, amax);
}

// data[row, col..col+3] = codes (in bounds only; one 4-byte store when aligned)
template <int kRowsPerWarp>
__device__ __forceinline__ void qmlir_store4(uint8_t* data, const QmlirTile<kRowsPerWarp>& t,
                                             int i, uint32_t packed, int32_t rows,
                                             int32_t cols) {
  const int64_t row = t.row0 + i;
  if (row >= rows || t.col >= cols) return;
  uint8_t* p = data + row * cols + t.col;
  if (t.vector && (uintptr_t)p % 4 == 0) {
    __stcs(reinterpret_cast<unsigned int*>(p), packed);  // streaming: keep L2 for the input
    return;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (t.col + j < cols) p[j] = (uint8_t)(packed >> (8 * j));
  }
}
