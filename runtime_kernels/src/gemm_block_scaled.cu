// gemm_block_scaled.cu: scaled GEMMs C f32 [M, N] = A [M, K] x B [N, K]^T ("nt": both operands
// row-major with K contiguous, as the quantize kernels write them), for sm_89+ (Ada, Hopper,
// Blackwell) through warp-level mma.sync.
//
// Block size 128 (4 warps as 2 x 2, each a 32 x 32 output tile), grid (ceil(N/64), ceil(M/64)).
// K runs in stages of 128 bytes per row (128 FP8 elements, or 64 NVFP4 elements as f16) staged
// in shared memory (rows padded to 144 bytes: conflict-free fragment reads). Loads are 16 bytes
// wide when K % 16 == 0 (NVFP4: 8 bytes, always), else byte by byte; out-of-range rows and K
// read as 0. Constants m, n, k: the logical sizes (K in elements).
//
// FP8 operands (E4M3 codes): mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32. Partial sums
// are kept per K block in FP32 and promoted, acc += partial * (a_scale[row, kb] * b_scale[col, kb]):
//   qmlir_gemm_fp8_per_tensor: a_sinv[0] * b_sinv[0], applied once at the end.
//   qmlir_gemm_fp8_block: per 128-K block; f32 scale_inv in the GEMM-ready layouts (block1d:
//     [ceil(K/128), pad4(rows)] for 1x128 blocks, block2d: [ceil(rows/128), pad4(ceil(K/128))]
//     for 128x128 blocks), a_dims/b_dims (1 or 2) say which.
//   qmlir_gemm_mxfp8: per 32-K block; E8M0 scales (2^(e-127)) swizzled in 128x4 tiles as
//     qmlir_quantize_mxfp8 writes them (S[row, k/32] of [rows, ceil(K/32)]).
// NVFP4 (qmlir_gemm_nvfp4): data [rows, ceil(K/16) * 8] packed E2M1 (low nibble = even element),
// E4M3 block scales swizzled as qmlir_nvfp4_quantize writes them, and the global decode scales
// a_sdec[0], b_sdec[0]. Each element is dequantized to e2m1 * d, exact in f16, then
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32; C = acc * (a_sdec * b_sdec).
// C matches the CPU scaled_matmul up to summation order (not bit for bit).
#include "qmlir_device.cuh"

namespace {

constexpr int kThreads = 128;
constexpr int kTileM = 64, kTileN = 64;
constexpr int kStageBytes = 128;           // bytes of one row per K stage
constexpr int kRowStride = kStageBytes + 16;  // padded shared-memory row

enum ScaleMode { kPerTensor, kBlock, kMx };

struct Shared {
  uint8_t a[kTileM * kRowStride];
  uint8_t b[kTileN * kRowStride];
};

__device__ __forceinline__ void mma_e4m3(float d[4], const uint32_t a[4], const uint32_t b[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_f16(float d[4], const uint32_t a[4], const uint32_t b[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// two f32 (exactly representable in f16) as f16x2: lo in the low half
__device__ __forceinline__ uint32_t pack_f16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ uint32_t lds32(const uint8_t* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

// FP8 rows [row0, row0 + 64) x bytes [k0, k0 + 128) of an [rows, k] operand into shared memory.
__device__ __forceinline__ void stage_fp8(uint8_t* dst, const uint8_t* src, int64_t row0,
                                          int32_t rows, int32_t k, int64_t k0, bool wide) {
  if (wide) {
    for (int idx = threadIdx.x; idx < kTileM * (kStageBytes / 16); idx += kThreads) {
      const int r = idx / (kStageBytes / 16), c = (idx % (kStageBytes / 16)) * 16;
      const int64_t row = row0 + r, col = k0 + c;
      uint4 v = make_uint4(0, 0, 0, 0);
      if (row < rows && col < k) v = *reinterpret_cast<const uint4*>(src + row * k + col);
      *reinterpret_cast<uint4*>(dst + r * kRowStride + c) = v;
    }
    return;
  }
  for (int idx = threadIdx.x; idx < kTileM * kStageBytes; idx += kThreads) {
    const int r = idx / kStageBytes, c = idx % kStageBytes;
    const int64_t row = row0 + r, col = k0 + c;
    dst[r * kRowStride + c] = (row < rows && col < k) ? src[row * k + col] : 0;
  }
}

// NVFP4 rows [row0, row0 + 64) x elements [k0, k0 + 64), dequantized to f16 (e2m1 * d).
__device__ __forceinline__ void stage_nvfp4(uint8_t* dst, const uint8_t* src,
                                            const uint8_t* scales, int64_t row0, int32_t rows,
                                            int32_t k, int64_t k0) {
  const uint32_t k_blocks = qmlir_ceil_div(k, 16);
  const int64_t row_bytes = (int64_t)k_blocks * 8;
  for (int idx = threadIdx.x; idx < kTileM * 4; idx += kThreads) {  // 4 blocks of 16 per row
    const int r = idx / 4, blk = idx % 4;
    const int64_t row = row0 + r;
    const uint32_t kb = (uint32_t)(k0 / 16) + blk;
    uint2 v = make_uint2(0, 0);
    float d = 0.0f;
    if (row < rows && kb < k_blocks) {
      v = *reinterpret_cast<const uint2*>(src + row * row_bytes + (int64_t)kb * 8);
      d = qmlir_decode_e4m3(scales[qmlir_mx_offset(row, kb, k_blocks)]);
    }
    uint32_t* out = reinterpret_cast<uint32_t*>(dst + r * kRowStride + blk * 32);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const uint32_t byte = ((j < 4 ? v.x : v.y) >> (8 * (j % 4))) & 0xFFu;
      out[j] = pack_f16x2(qmlir_decode_e2m1(byte & 0xFu) * d, qmlir_decode_e2m1(byte >> 4) * d);
    }
  }
}

struct Frag {
  int warp_m, warp_n, g, t;
};

__device__ __forceinline__ Frag frag() {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  return Frag{warp / 2, warp % 2, lane / 4, lane % 4};
}

// one m16n8k32 FP8 step at byte ks of the stage for the warp's 2 x 4 mma tiles
__device__ __forceinline__ void step_fp8(float acc[2][4][4], const Shared& s, const Frag& f,
                                         int ks) {
  uint32_t a[2][4], b[4][2];
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
    const uint8_t* p = s.a + (f.warp_m * 32 + mi * 16 + f.g) * kRowStride + ks + 4 * f.t;
    a[mi][0] = lds32(p), a[mi][1] = lds32(p + 8 * kRowStride);
    a[mi][2] = lds32(p + 16), a[mi][3] = lds32(p + 8 * kRowStride + 16);
  }
#pragma unroll
  for (int ni = 0; ni < 4; ++ni) {
    const uint8_t* p = s.b + (f.warp_n * 32 + ni * 8 + f.g) * kRowStride + ks + 4 * f.t;
    b[ni][0] = lds32(p), b[ni][1] = lds32(p + 16);
  }
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) mma_e4m3(acc[mi][ni], a[mi], b[ni]);
}

// one m16n8k16 f16 step at element ks of the stage
__device__ __forceinline__ void step_f16(float acc[2][4][4], const Shared& s, const Frag& f,
                                         int ks) {
  uint32_t a[2][4], b[4][2];
  const int byte = (ks + 2 * f.t) * 2;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
    const uint8_t* p = s.a + (f.warp_m * 32 + mi * 16 + f.g) * kRowStride + byte;
    a[mi][0] = lds32(p), a[mi][1] = lds32(p + 8 * kRowStride);
    a[mi][2] = lds32(p + 16), a[mi][3] = lds32(p + 8 * kRowStride + 16);
  }
#pragma unroll
  for (int ni = 0; ni < 4; ++ni) {
    const uint8_t* p = s.b + (f.warp_n * 32 + ni * 8 + f.g) * kRowStride + byte;
    b[ni][0] = lds32(p), b[ni][1] = lds32(p + 16);
  }
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) mma_f16(acc[mi][ni], a[mi], b[ni]);
}

// global row / column of accumulator element e of mma tile (mi, ni)
__device__ __forceinline__ int64_t acc_row(const Frag& f, int mi, int e) {
  return (int64_t)blockIdx.y * kTileM + f.warp_m * 32 + mi * 16 + f.g + (e >= 2 ? 8 : 0);
}

__device__ __forceinline__ int64_t acc_col(const Frag& f, int ni, int e) {
  return (int64_t)blockIdx.x * kTileN + f.warp_n * 32 + ni * 8 + 2 * f.t + (e % 2);
}

// The scale of operand row `row` in K block `kb` (0 outside the operand).
struct Scales {
  const float* sinv;    // kBlock: f32 GEMM-ready scale_inv
  const uint8_t* e8m0;  // kMx: swizzled E8M0
  int32_t rows, k, dims;

  __device__ __forceinline__ float at(int64_t row, uint32_t kb, ScaleMode mode) const {
    if (row >= rows) return 0.0f;
    if (mode == kMx) return qmlir_decode_e8m0(e8m0[qmlir_mx_offset(row, kb, qmlir_ceil_div(k, 32))]);
    if (dims == 2) return sinv[qmlir_block2d_offset(row / 128, kb, qmlir_ceil_div(k, 128))];
    return sinv[qmlir_block1d_offset(row, kb, rows)];
  }
};

__device__ __forceinline__ void zero(float acc[2][4][4]) {
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;
}

// acc += part * (a_scale[row, kb] * b_scale[col, kb])
__device__ __forceinline__ void promote(float acc[2][4][4], const float part[2][4][4],
                                        const Frag& f, const Scales& sa, const Scales& sb,
                                        uint32_t kb, ScaleMode mode) {
  float a_scale[2][2], b_scale[4][2];
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) a_scale[mi][h] = sa.at(acc_row(f, mi, 2 * h), kb, mode);
#pragma unroll
  for (int ni = 0; ni < 4; ++ni)
#pragma unroll
    for (int h = 0; h < 2; ++h) b_scale[ni][h] = sb.at(acc_col(f, ni, h), kb, mode);
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        acc[mi][ni][e] += part[mi][ni][e] * (a_scale[mi][e / 2] * b_scale[ni][e % 2]);
      }
}

__device__ __forceinline__ void store_c(float* c, const float acc[2][4][4], const Frag& f,
                                        int32_t m, int32_t n, float factor) {
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t row = acc_row(f, mi, e), col = acc_col(f, ni, e);
        if (row < m && col < n) c[row * n + col] = acc[mi][ni][e] * factor;
      }
}

template <ScaleMode kMode>
__device__ __forceinline__ void gemm_fp8(const uint8_t* a, const Scales& sa, const uint8_t* b,
                                         const Scales& sb, float* c, int32_t m, int32_t n,
                                         int32_t k, float factor) {
  __shared__ __align__(16) Shared s;
  const Frag f = frag();
  const bool wide = k % 16 == 0 && (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0;
  float acc[2][4][4], part[2][4][4];
  zero(acc);
  for (int64_t k0 = 0; k0 < k; k0 += kStageBytes) {
    stage_fp8(s.a, a, (int64_t)blockIdx.y * kTileM, m, k, k0, wide);
    stage_fp8(s.b, b, (int64_t)blockIdx.x * kTileN, n, k, k0, wide);
    __syncthreads();
    if (kMode == kPerTensor) {
#pragma unroll
      for (int ks = 0; ks < kStageBytes; ks += 32) step_fp8(acc, s, f, ks);
    } else if (kMode == kBlock) {  // one 128-K block per stage
      zero(part);
#pragma unroll
      for (int ks = 0; ks < kStageBytes; ks += 32) step_fp8(part, s, f, ks);
      promote(acc, part, f, sa, sb, (uint32_t)(k0 / 128), kMode);
    } else {  // kMx: one 32-K block per mma step
      for (int ks = 0; ks < kStageBytes && k0 + ks < k; ks += 32) {
        zero(part);
        step_fp8(part, s, f, ks);
        promote(acc, part, f, sa, sb, (uint32_t)((k0 + ks) / 32), kMode);
      }
    }
    __syncthreads();
  }
  store_c(c, acc, f, m, n, factor);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
    qmlir_gemm_fp8_per_tensor(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                              const float* b_sinv, float* c, int32_t m, int32_t n, int32_t k) {
  const Scales none{nullptr, nullptr, 0, k, 0};
  gemm_fp8<kPerTensor>(a, none, b, none, c, m, n, k, a_sinv[0] * b_sinv[0]);
}

extern "C" __global__ void __launch_bounds__(kThreads)
    qmlir_gemm_fp8_block(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                         const float* b_sinv, float* c, int32_t m, int32_t n, int32_t k,
                         int32_t a_dims, int32_t b_dims) {
  const Scales sa{a_sinv, nullptr, m, k, a_dims};
  const Scales sb{b_sinv, nullptr, n, k, b_dims};
  gemm_fp8<kBlock>(a, sa, b, sb, c, m, n, k, 1.0f);
}

extern "C" __global__ void __launch_bounds__(kThreads)
    qmlir_gemm_mxfp8(const uint8_t* a, const uint8_t* a_scale, const uint8_t* b,
                     const uint8_t* b_scale, float* c, int32_t m, int32_t n, int32_t k) {
  const Scales sa{nullptr, a_scale, m, k, 1};
  const Scales sb{nullptr, b_scale, n, k, 1};
  gemm_fp8<kMx>(a, sa, b, sb, c, m, n, k, 1.0f);
}

extern "C" __global__ void __launch_bounds__(kThreads)
    qmlir_gemm_nvfp4(const uint8_t* a, const uint8_t* a_scale, const float* a_sdec,
                     const uint8_t* b, const uint8_t* b_scale, const float* b_sdec, float* c,
                     int32_t m, int32_t n, int32_t k) {
  __shared__ __align__(16) Shared s;
  const Frag f = frag();
  float acc[2][4][4];
  zero(acc);
  for (int64_t k0 = 0; k0 < k; k0 += kStageBytes / 2) {
    stage_nvfp4(s.a, a, a_scale, (int64_t)blockIdx.y * kTileM, m, k, k0);
    stage_nvfp4(s.b, b, b_scale, (int64_t)blockIdx.x * kTileN, n, k, k0);
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < kStageBytes / 2; ks += 16) step_f16(acc, s, f, ks);
    __syncthreads();
  }
  store_c(c, acc, f, m, n, a_sdec[0] * b_sdec[0]);
}
