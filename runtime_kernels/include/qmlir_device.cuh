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

template <int kRowsPerWarp>
__device__ __forceinline__ QmlirTile<kRowsPerWarp> qmlir_load_tile(const float* x, int32_t rows,
                                                                   int32_t cols) {
  QmlirTile<kRowsPerWarp> t;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  t.row0 = ((int64_t)blockIdx.y * 8 + warp) * kRowsPerWarp;
  t.col = (int64_t)blockIdx.x * 128 + lane * 4;
  t.vector = cols % 4 == 0 && (uintptr_t)x % 16 == 0;
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int64_t row = t.row0 + i;
    const float* p = x + row * cols + t.col;
    if (row < rows && t.vector && t.col < cols) {
      const float4 q = *reinterpret_cast<const float4*>(p);
      t.v[i][0] = q.x, t.v[i][1] = q.y, t.v[i][2] = q.z, t.v[i][3] = q.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) t.v[i][j] = (row < rows && t.col + j < cols) ? p[j] : 0.0f;
    }
  }
  return t;
}

// max |v| of a lane's 4 values, NaN skipped
__device__ __forceinline__ float qmlir_lane_amax(const float v[4]) {
  return fmaxf(fmaxf(qmlir_abs_or_zero(v[0]), qmlir_abs_or_zero(v[1])),
               fmaxf(qmlir_abs_or_zero(v[2]), qmlir_abs_or_zero(v[3])));
}

// column j's max |v| over the whole tile (8 warps), via shared memory; every thread calls it.
template <int kRowsPerWarp>
__device__ __forceinline__ void qmlir_tile_column_amax(const QmlirTile<kRowsPerWarp>& t,
                                                       float amax[4]) {
  __shared__ float partial[8][128];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float m = 0.0f;
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) m = fmaxf(m, qmlir_abs_or_zero(t.v[i][j]));
    partial[warp][lane * 4 + j] = m;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float m = 0.0f;
#pragma unroll
    for (int w = 0; w < 8; ++w) m = fmaxf(m, partial[w][lane * 4 + j]);
    amax[j] = m;
  }
}

// data[row, col..col+3] = codes (in bounds only; one 4-byte store when aligned)
template <int kRowsPerWarp>
__device__ __forceinline__ void qmlir_store4(uint8_t* data, const QmlirTile<kRowsPerWarp>& t,
                                             int i, const uint8_t c[4], int32_t rows,
                                             int32_t cols) {
  const int64_t row = t.row0 + i;
  if (row >= rows || t.col >= cols) return;
  uint8_t* p = data + row * cols + t.col;
  if (t.vector && (uintptr_t)p % 4 == 0) {
    *reinterpret_cast<uint32_t*>(p) = qmlir_pack4(c[0], c[1], c[2], c[3]);
    return;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (t.col + j < cols) p[j] = c[j];
  }
}
