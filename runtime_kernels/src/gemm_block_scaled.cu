// gemm_block_scaled.cu: scaled GEMMs C f32 [M, N] = A [M, K] x B [N, K]^T ("nt": both operands
// row-major with K contiguous, as the quantize kernels write them), for sm_89+ (Ada, Hopper,
// Blackwell) through warp-level mma.sync.
//
// FP8 operands (E4M3 codes): block size 256 (8 warps as 2 x 4, each a 64 x 32 output tile), a
// 128 x 128 output tile per workgroup, grid (ceil(N/128), ceil(M/128)). K runs in stages of 64
// bytes, three in flight (cp.async, 16 bytes per copy, zero-filled outside the operand; 48 KiB of
// shared memory, rows XOR-swizzled in 16-byte chunks so that ldmatrix reads are conflict-free).
// Fragments come from ldmatrix.x4; mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32. When
// K % 16 != 0 or a pointer is not 16-byte aligned the stages are filled byte by byte instead.
// Partial sums are kept per K block in FP32 and promoted,
// acc += partial * (a_scale[row, kb] * b_scale[col, kb]):
//   qmlir_gemm_fp8_per_tensor: a_sinv[0] * b_sinv[0], applied once at the end.
//   qmlir_gemm_fp8_block: per 128-K block; f32 scale_inv in the GEMM-ready layouts (block1d:
//     [ceil(K/128), pad4(rows)] for 1x128 blocks, block2d: [ceil(rows/128), pad4(ceil(K/128))]
//     for 128x128 blocks), a_dims/b_dims (1 or 2) say which.
//   qmlir_gemm_mxfp8: per 32-K block; E8M0 scales (2^(e-127)) swizzled in 128x4 tiles as
//     qmlir_quantize_mxfp8 writes them (S[row, k/32] of [rows, ceil(K/32)]).
// NVFP4 (qmlir_gemm_nvfp4): block size 128 (4 warps as 2 x 2, each 32 x 32), a 64 x 64 output
// tile, grid (ceil(N/64), ceil(M/64)); K in stages of 64 elements dequantized to f16 in shared
// memory (rows padded to 144 bytes). Data [rows, ceil(K/16) * 8] packed E2M1 (low nibble = even
// element), E4M3 block scales swizzled as qmlir_nvfp4_quantize writes them, and the global decode
// scales a_sdec[0], b_sdec[0]. Each element is dequantized to e2m1 * d, exact in f16, then
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32; C = acc * (a_sdec * b_sdec).
// Constants m, n, k: the logical sizes (K in elements). C matches the CPU scaled_matmul up to
// summation order (not bit for bit).
#include "qmlir_device.cuh"

// A probe only (benchmarks/gpu_probes/gemm_variants.py, compute_90a with -DQMLIR_GEMM_WGMMA): the
// FP8 per-tensor and block GEMMs through Hopper's wgmma. Not built into artifacts: on an H100
// its E4M3 sums carry a relative error of about 2e-4 per 128-K block (Hopper's FP8 tensor cores
// accumulate at reduced precision), where mma.sync's stay near 1e-7 (RESULTS.md, 2026-11-26).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) && defined(QMLIR_GEMM_WGMMA)
#define QMLIR_WGMMA 1
#include "qmlir_wgmma.cuh"
#else
#define QMLIR_WGMMA 0
#endif

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

// An FP8 operand's scales: fp8-block's f32 scale_inv (`at`: row `row`, K block `kb`, 0 outside
// the operand), or mxfp8's swizzled E8M0 codes (read through fp8::MxBases).
struct Scales {
  const float* sinv;    // kBlock: f32 GEMM-ready scale_inv
  const uint8_t* e8m0;  // kMx: swizzled E8M0
  int32_t rows, k, dims;

  __device__ __forceinline__ float at(int64_t row, uint32_t kb) const {
    if (row >= rows) return 0.0f;
    if (dims == 2) return sinv[qmlir_block2d_offset(row / 128, kb, qmlir_ceil_div(k, 128))];
    return sinv[qmlir_block1d_offset(row, kb, rows)];
  }
};

template <int kM>
__device__ __forceinline__ void zero(float acc[kM][4][4]) {
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;
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

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
    qmlir_gemm_nvfp4(const uint8_t* a, const uint8_t* a_scale, const float* a_sdec,
                     const uint8_t* b, const uint8_t* b_scale, const float* b_sdec, float* c,
                     int32_t m, int32_t n, int32_t k) {
  __shared__ __align__(16) Shared s;
  const Frag f = frag();
  float acc[2][4][4];
  zero<2>(acc);
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

// ---- FP8: 128 x 128 tiles, 3-stage cp.async pipeline, ldmatrix fragments ---------------------

namespace fp8 {

constexpr int kThreads = 256;
constexpr int kTile = 128;         // output rows and columns per workgroup
// The pipeline's shape; gemm_variants.py builds probes with other values. Above 48 KiB the
// stages live in dynamic shared memory, which the launch must then provide.
#ifndef QMLIR_GEMM_STAGE_BYTES
#define QMLIR_GEMM_STAGE_BYTES 64
#endif
#ifndef QMLIR_GEMM_STAGES
#define QMLIR_GEMM_STAGES 3
#endif
constexpr int kStageBytes = QMLIR_GEMM_STAGE_BYTES;  // K bytes per stage: 4 (or 8) chunks of 16
constexpr int kChunks = kStageBytes / 16;
constexpr int kStages = QMLIR_GEMM_STAGES;
constexpr int kOperandBytes = kTile * kStageBytes;  // one operand's stage: 8 KiB
static_assert(kChunks == 4 || kChunks == 8, "a stage is 64 or 128 K-bytes");

struct Shared {
  uint8_t stage[kStages][2][kOperandBytes];  // [stage][A, B][row * 64 + swizzled chunk * 16]
};

constexpr bool kDynamicShared = sizeof(Shared) > 48 * 1024;

__device__ __forceinline__ Shared& shared() {
  if constexpr (kDynamicShared) {
    extern __shared__ __align__(1024) uint8_t dynamic_shared[];
    return *reinterpret_cast<Shared*>(dynamic_shared);
  } else {
    __shared__ __align__(1024) Shared s;
    return s;
  }
}

// byte offset of (row, 16-byte chunk) in a stage: chunk ^ ((row / 2) % 4) (chunk ^ (row % 8)
// for 8 chunks) keeps the 8 rows an ldmatrix reads at one chunk in 8 distinct 16-byte bank groups
__device__ __forceinline__ int offset(int row, int chunk) {
  const int swizzle = kChunks == 8 ? (row & 7) : ((row >> 1) & 3);
  return row * kStageBytes + ((chunk ^ swizzle) << 4);
}

struct Swizzled {  // the ldmatrix layout above
  static __device__ __forceinline__ int at(int row, int chunk) { return offset(row, chunk); }
};

// wgmma's no-swizzle K-major layout: 8 x 16-byte core matrices of 128 contiguous bytes, the
// chunks of 8 rows side by side (K-direction stride 128 bytes, 8-row stride 128 * chunks)
constexpr uint32_t kCoreLbo = 128, kCoreSbo = kChunks * 128;

struct CoreMatrices {
  static __device__ __forceinline__ int at(int row, int chunk) {
    return (row >> 3) * kCoreSbo + chunk * kCoreLbo + ((row & 7) << 4);
  }
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n"); }

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// rows [row0, row0 + 128) x bytes [k0, k0 + 64) of an [rows, k] operand into a stage, laid out
// as Layout::at(row, chunk) says
template <typename Layout = Swizzled>
__device__ __forceinline__ void load_stage(uint8_t* dst, const uint8_t* src, int64_t row0,
                                           int32_t rows, int32_t k, int64_t k0, bool wide) {
  if (wide) {
#pragma unroll
    for (int i = 0; i < kTile * kChunks / kThreads; ++i) {  // chunks of 16 bytes
      const int idx = threadIdx.x + i * kThreads, r = idx / kChunks, c = idx % kChunks;
      const int64_t row = row0 + r, col = k0 + c * 16;
      const bool valid = row < rows && col < k;
      cp_async16(smem_addr(dst + Layout::at(r, c)), valid ? src + row * k + col : src, valid);
    }
    return;
  }
  for (int idx = threadIdx.x; idx < kTile * kStageBytes; idx += kThreads) {
    const int r = idx / kStageBytes, byte = idx % kStageBytes;
    const int64_t row = row0 + r, col = k0 + byte;
    dst[Layout::at(r, byte / 16) + byte % 16] = (row < rows && col < k) ? src[row * k + col] : 0;
  }
}

struct Warp {
  int m, n, lane;  // warp tile (m: 0..1 of 64 rows, n: 0..3 of 32 columns), lane
};

__device__ __forceinline__ Warp warp() {
  const int w = threadIdx.x / 32;
  return Warp{w / 4, w % 4, (int)(threadIdx.x % 32)};
}

// the m16n8k32 step at 32-byte K step `ks` (0 or 1) of a stage: 4 x 4 mma tiles of the warp
__device__ __forceinline__ void step(float acc[4][4][4], const uint8_t* a, const uint8_t* b,
                                     const Warp& w, int ks) {
  uint32_t af[4][4], bf[4][2];
  const int quad = w.lane / 8, row8 = w.lane % 8;
#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {  // matrices: rows +0/+8 (quad % 2) x chunks +0/+1 (quad / 2)
    const int row = w.m * 64 + mi * 16 + (quad % 2) * 8 + row8;
    ldmatrix_x4(af[mi], smem_addr(a + offset(row, 2 * ks + quad / 2)));
  }
#pragma unroll
  for (int nj = 0; nj < 2; ++nj) {  // matrices: chunks +0/+1 (quad % 2) x columns +0/+8 (quad / 2)
    uint32_t r[4];
    const int row = w.n * 32 + nj * 16 + (quad / 2) * 8 + row8;
    ldmatrix_x4(r, smem_addr(b + offset(row, 2 * ks + quad % 2)));
    bf[2 * nj][0] = r[0], bf[2 * nj][1] = r[1], bf[2 * nj + 1][0] = r[2], bf[2 * nj + 1][1] = r[3];
  }
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) mma_e4m3(acc[mi][ni], af[mi], bf[ni]);
}

// every K step of a stage (written out: a `#pragma unroll` loop spills more registers)
__device__ __forceinline__ void steps(float acc[4][4][4], const uint8_t* a, const uint8_t* b,
                                      const Warp& w) {
  step(acc, a, b, w, 0);
  step(acc, a, b, w, 1);
  if constexpr (kStageBytes == 128) {
    step(acc, a, b, w, 2);
    step(acc, a, b, w, 3);
  }
}

__device__ __forceinline__ int64_t acc_row(const Warp& w, int mi, int e) {
  return (int64_t)blockIdx.y * kTile + w.m * 64 + mi * 16 + w.lane / 4 + (e >= 2 ? 8 : 0);
}

__device__ __forceinline__ int64_t acc_col(const Warp& w, int ni, int e) {
  return (int64_t)blockIdx.x * kTile + w.n * 32 + ni * 8 + 2 * (w.lane % 4) + (e % 2);
}

// acc += part * (a_scale[row] * b_scale[col]) for the thread's 8 rows and 8 columns of C
__device__ __forceinline__ void promote(float acc[4][4][4], const float part[4][4][4],
                                        const float a_scale[4][2], const float b_scale[4][2]) {
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        acc[mi][ni][e] += part[mi][ni][e] * (a_scale[mi][e / 2] * b_scale[ni][e % 2]);
      }
}

// kBlock: the scales of the thread's rows and columns in K block kb
__device__ __forceinline__ void block_scales(const Warp& w, const Scales& sa, const Scales& sb,
                                             uint32_t kb, float a_scale[4][2],
                                             float b_scale[4][2]) {
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) a_scale[mi][h] = sa.at(acc_row(w, mi, 2 * h), kb);
#pragma unroll
  for (int ni = 0; ni < 4; ++ni)
#pragma unroll
    for (int h = 0; h < 2; ++h) b_scale[ni][h] = sb.at(acc_col(w, ni, h), kb);
}

// kMx: the swizzled offset of S[row, 0] for the thread's 8 A rows and 8 B rows (columns of C);
// S[row, kb] is at base + (kb / 4) * 512 + kb % 4 (qmlir_mx_offset), so a K step adds no more
// than that. ~0u marks a row outside the operand (scale 0).
struct MxBases {
  uint32_t a[4][2], b[4][2];
};

__device__ __forceinline__ MxBases mx_bases(const Warp& w, int32_t m, int32_t n, int32_t k) {
  const uint32_t cols = qmlir_ceil_div(k, 32);
  MxBases base;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = acc_row(w, i, 2 * h), col = acc_col(w, i, h);
      base.a[i][h] = row < m ? qmlir_mx_offset((uint32_t)row, 0, cols) : ~0u;
      base.b[i][h] = col < n ? qmlir_mx_offset((uint32_t)col, 0, cols) : ~0u;
    }
  return base;
}

__device__ __forceinline__ float mx_scale(const uint8_t* s, uint32_t base, uint32_t step) {
  return base == ~0u ? 0.0f : qmlir_decode_e8m0(s[base + step]);
}

// kMx: the scales of the thread's rows and columns in K block kb, from the offsets of MxBases
__device__ __forceinline__ void mx_scales(const MxBases& base, const uint8_t* sa,
                                          const uint8_t* sb, uint32_t kb, float a_scale[4][2],
                                          float b_scale[4][2]) {
  const uint32_t step = (kb / 4) * 512 + kb % 4;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      a_scale[i][h] = mx_scale(sa, base.a[i][h], step);
      b_scale[i][h] = mx_scale(sb, base.b[i][h], step);
    }
}

__device__ __forceinline__ void store_c(float* c, const float acc[4][4][4], const Warp& w,
                                        int32_t m, int32_t n, float factor) {
  const bool pairs = n % 2 == 0 && (uintptr_t)c % 8 == 0;
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // elements 2h, 2h + 1: one row, two adjacent columns
        const int64_t row = acc_row(w, mi, 2 * h), col = acc_col(w, ni, 2 * h);
        if (row >= m) continue;
        const float v0 = acc[mi][ni][2 * h] * factor, v1 = acc[mi][ni][2 * h + 1] * factor;
        float* p = c + row * n + col;
        if (pairs && col + 1 < n) {
          *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
        } else {
          if (col < n) p[0] = v0;
          if (col + 1 < n) p[1] = v1;
        }
      }
}

template <ScaleMode kMode>
__device__ __forceinline__ void gemm(const uint8_t* a, const Scales& sa, const uint8_t* b,
                                     const Scales& sb, float* c, int32_t m, int32_t n, int32_t k,
                                     float factor) {
  Shared& s = shared();
  const Warp w = warp();
  const bool wide = k % 16 == 0 && (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0;
  const int64_t a_row0 = (int64_t)blockIdx.y * kTile, b_row0 = (int64_t)blockIdx.x * kTile;
  const int stages = (int)qmlir_ceil_div((uint32_t)k, kStageBytes);
  float acc[4][4][4], part[4][4][4];
  zero<4>(acc);
  zero<4>(part);
  MxBases mx;
  if (kMode == kMx) mx = mx_bases(w, m, n, k);
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < stages) {
      load_stage(s.stage[st][0], a, a_row0, m, k, (int64_t)st * kStageBytes, wide);
      load_stage(s.stage[st][1], b, b_row0, n, k, (int64_t)st * kStageBytes, wide);
    }
    cp_async_commit();
  }
  for (int kt = 0; kt < stages; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage kt is in; stage kt - 1 is no longer read
    const int next = kt + kStages - 1;
    if (next < stages) {
      const int slot = next % kStages;
      load_stage(s.stage[slot][0], a, a_row0, m, k, (int64_t)next * kStageBytes, wide);
      load_stage(s.stage[slot][1], b, b_row0, n, k, (int64_t)next * kStageBytes, wide);
    }
    cp_async_commit();
    const uint8_t* sa_tile = s.stage[kt % kStages][0];
    const uint8_t* sb_tile = s.stage[kt % kStages][1];
    const int64_t k0 = (int64_t)kt * kStageBytes;
    if (kMode == kPerTensor) {
      steps(acc, sa_tile, sb_tile, w);
    } else if (kMode == kBlock) {  // a 128-K block is one or two stages
      steps(part, sa_tile, sb_tile, w);
      if ((kt + 1) % (128 / kStageBytes) == 0 || kt + 1 == stages) {
        float a_scale[4][2], b_scale[4][2];
        block_scales(w, sa, sb, (uint32_t)(k0 / 128), a_scale, b_scale);
        promote(acc, part, a_scale, b_scale);
        zero<4>(part);
      }
    } else {  // kMx: a 32-K block per step
#pragma unroll
      for (int ks = 0; ks < kStageBytes / 32; ++ks) {
        if (k0 + ks * 32 >= k) break;
        step(part, sa_tile, sb_tile, w, ks);
        float a_scale[4][2], b_scale[4][2];
        mx_scales(mx, sa.e8m0, sb.e8m0, (uint32_t)((k0 + ks * 32) / 32), a_scale, b_scale);
        promote(acc, part, a_scale, b_scale);
        zero<4>(part);
      }
    }
  }
  cp_async_wait<0>();
  store_c(c, acc, w, m, n, factor);
}

}  // namespace fp8

#if QMLIR_WGMMA
// ---- FP8 on Hopper (sm_90a): wgmma from shared memory ----------------------------------------
// The same launch as fp8:: (256 threads, a 128 x 128 tile, 3 stages of 64 K-bytes, 48 KiB) and
// the same cp.async pipeline, the stages laid out in wgmma's core matrices. Each of the two
// warpgroups computes 64 rows x 128 columns with two m64n128k32 instructions per stage; fp8-block
// accumulates a 128-K block (two stages) in `part` and promotes it as fp8:: does.
namespace wg {

using fp8::kStageBytes;
using fp8::kStages;
using fp8::kThreads;
using fp8::kTile;

// the descriptors' strides (gemm_variants.py builds a probe with them swapped)
#if defined(QMLIR_WGMMA_DESC_SWAP)
constexpr uint32_t kDescLbo = fp8::kCoreSbo, kDescSbo = fp8::kCoreLbo;
#else
constexpr uint32_t kDescLbo = fp8::kCoreLbo, kDescSbo = fp8::kCoreSbo;
#endif

// probe: per-tensor sums promoted to f32 after every instruction (gemm_variants.py)
#if defined(QMLIR_WGMMA_PROMOTE_EACH)
constexpr bool kPromoteEach = true;
#else
constexpr bool kPromoteEach = false;
#endif

constexpr int kWarpgroupRows = 64;
constexpr uint32_t kWarpgroupBytes = kWarpgroupRows / 8 * fp8::kCoreSbo;  // A rows of a warpgroup

struct Thread {
  int group, warp, lane;  // warpgroup (0..1: rows 64 * group), warp in it, lane
};

__device__ __forceinline__ Thread thread() {
  const int t = threadIdx.x;
  return Thread{t / 128, (t % 128) / 32, t % 32};
}

// row (in the tile) of accumulator half h (registers i with (i % 4) / 2 == h)
__device__ __forceinline__ int acc_row(const Thread& t, int h) {
  return t.group * kWarpgroupRows + t.warp * 16 + t.lane / 4 + 8 * h;
}

// column (in the tile) of accumulator register i
__device__ __forceinline__ int acc_col(const Thread& t, int i) {
  return 8 * (i / 4) + 2 * (t.lane % 4) + (i % 2);
}

__device__ __forceinline__ void zero(float d[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.0f;
}

// acc += part * (a_scale[row] * b_scale[col]) for K block kb
__device__ __forceinline__ void promote(float acc[64], const float part[64], const Thread& t,
                                        const Scales& sa, const Scales& sb, int64_t a_row0,
                                        int64_t b_row0, uint32_t kb) {
  const float a_scale[2] = {sa.at(a_row0 + acc_row(t, 0), kb), sa.at(a_row0 + acc_row(t, 1), kb)};
  if (sb.dims == 2) {  // one 128 x 128 block of B per tile
    const float b_scale = sb.at(b_row0, kb);
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += part[i] * (a_scale[(i % 4) / 2] * b_scale);
    return;
  }
  float b_scale[32];
#pragma unroll
  for (int j = 0; j < 32; ++j) b_scale[j] = sb.at(b_row0 + acc_col(t, 4 * (j / 2) + j % 2), kb);
#pragma unroll
  for (int i = 0; i < 64; ++i) {
    acc[i] += part[i] * (a_scale[(i % 4) / 2] * b_scale[2 * (i / 4) + i % 2]);
  }
}

__device__ __forceinline__ void store_c(float* c, const float acc[64], const Thread& t,
                                        int64_t a_row0, int64_t b_row0, int32_t m, int32_t n,
                                        float factor) {
  const bool pairs = n % 2 == 0 && (uintptr_t)c % 8 == 0;
#pragma unroll
  for (int i = 0; i < 64; i += 2) {
    const int64_t row = a_row0 + acc_row(t, (i % 4) / 2), col = b_row0 + acc_col(t, i);
    if (row >= m) continue;
    const float v0 = acc[i] * factor, v1 = acc[i + 1] * factor;
    float* p = c + row * n + col;
    if (pairs && col + 1 < n) {
      *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
    } else {
      if (col < n) p[0] = v0;
      if (col + 1 < n) p[1] = v1;
    }
  }
}

template <ScaleMode kMode>
__device__ __forceinline__ void gemm(const uint8_t* a, const Scales& sa, const uint8_t* b,
                                     const Scales& sb, float* c, int32_t m, int32_t n, int32_t k,
                                     float factor) {
  static_assert(kMode != kMx, "mxfp8 stays on mma.sync");
  fp8::Shared& s = fp8::shared();
  const Thread t = thread();
  const bool wide = k % 16 == 0 && (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0;
  const int64_t a_row0 = (int64_t)blockIdx.y * kTile, b_row0 = (int64_t)blockIdx.x * kTile;
  const int stages = (int)qmlir_ceil_div((uint32_t)k, kStageBytes);
  float acc[64], part[64];
  zero(acc);
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < stages) {
      const int64_t k0 = (int64_t)st * kStageBytes;
      fp8::load_stage<fp8::CoreMatrices>(s.stage[st][0], a, a_row0, m, k, k0, wide);
      fp8::load_stage<fp8::CoreMatrices>(s.stage[st][1], b, b_row0, n, k, k0, wide);
    }
    fp8::cp_async_commit();
  }
  for (int kt = 0; kt < stages; ++kt) {
    fp8::cp_async_wait<kStages - 2>();
    qmlir_fence_proxy_async();  // this thread's copies of stage kt, before wgmma reads them
    __syncthreads();  // stage kt is in; every warpgroup is done with stage kt - 1
    const int next = kt + kStages - 1;
    if (next < stages) {
      const int slot = next % kStages;
      const int64_t k0 = (int64_t)next * kStageBytes;
      fp8::load_stage<fp8::CoreMatrices>(s.stage[slot][0], a, a_row0, m, k, k0, wide);
      fp8::load_stage<fp8::CoreMatrices>(s.stage[slot][1], b, b_row0, n, k, k0, wide);
    }
    fp8::cp_async_commit();
    const uint32_t a_tile = fp8::smem_addr(s.stage[kt % kStages][0]) + t.group * kWarpgroupBytes;
    const uint32_t b_tile = fp8::smem_addr(s.stage[kt % kStages][1]);
    const int64_t k0 = (int64_t)kt * kStageBytes;
    float* d = kMode == kPerTensor && !kPromoteEach ? acc : part;
    qmlir_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kStageBytes / 32; ++ks) {  // 32 K-bytes: two core matrices
      const bool first = kMode == kBlock ? (k0 % 128 == 0 && ks == 0) : kPromoteEach;
      qmlir_wgmma_m64n128k32_e4m3(
          d, qmlir_wgmma_desc(a_tile + 2 * ks * fp8::kCoreLbo, kDescLbo, kDescSbo),
          qmlir_wgmma_desc(b_tile + 2 * ks * fp8::kCoreLbo, kDescLbo, kDescSbo), !first);
      if (kPromoteEach) {  // probe: each instruction's sum alone, added in f32
        qmlir_wgmma_commit();
        qmlir_wgmma_wait<0>();
        qmlir_wgmma_hold(d);
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] += part[i];
        qmlir_wgmma_fence();
      }
    }
    qmlir_wgmma_commit();
    qmlir_wgmma_wait<0>();
    qmlir_wgmma_hold(d);
    if (kMode == kBlock && ((kt + 1) % (128 / kStageBytes) == 0 || kt + 1 == stages)) {
      promote(acc, part, t, sa, sb, a_row0, b_row0, (uint32_t)(k0 / 128));
    }
  }
  fp8::cp_async_wait<0>();
  store_c(c, acc, t, a_row0, b_row0, m, n, factor);
}

}  // namespace wg
#endif  // QMLIR_WGMMA

// ---- FP8 for a few rows (a decode step) -------------------------------------------------------
// At M <= 16 the 128 x 128 tiles above launch N/128 workgroups, 16 for a 2048-wide projection,
// which stream the weights at a few percent of the GPU's bandwidth (RESULTS.md, 2026-11-27: 7.3
// of a 1.1B decode step's 10.2 ms; 49 us for a 2048 x 2048 projection at one row, where this
// path takes 7 us, 2026-11-27 sixth session). Here a workgroup (the same 256 threads) computes
// 16 rows (M padded with zero rows) x 16 columns over all of K, its 8 warps each taking every
// 8th 128-K block: entry points qmlir_gemm_fp8_per_tensor_few_rows / qmlir_gemm_fp8_block_few_rows
// (the tiled kernels' bindings and constants; M <= 16), grid (ceil(N/16), 1), for a static M <=
// 16; a dynamic M runs qmlir_gemm_fp8_*_any_rows below, which branch on m (see there for what
// the branch costs). Fragments come straight from global memory, 16 bytes a load: a
// thread's 4 lanes of a row read the 128-K block's bytes [16q, 16q+16) and [64+16q, 80+16q),
// and the K positions within a block are permuted the same way for A and B (mma step s takes
// words 2s and 2s+1 of both), which leaves each block's sum as it is, up to its order. Partial
// sums per 128-K block are promoted with the block scales as the tiled kernels do; the warps'
// sums are added in shared memory in warp order (deterministic).
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
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) sums[warp][g + 8 * (e / 2)][8 * j + 2 * q + (e % 2)] = acc[j][e];
  __syncthreads();
  const int row = threadIdx.x / kCols, col = threadIdx.x % kCols;  // 256 threads: every output
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) total += sums[w][row][col];
  if (row < m && n0 + col < n) c[(int64_t)row * n + n0 + col] = total * factor;
}

// the few-rows kernels: their own 8 KiB of shared memory
template <ScaleMode kMode>
__device__ __forceinline__ void gemm(const uint8_t* a, const Scales& sa, const uint8_t* b,
                                     const Scales& sb, float* c, int32_t m, int32_t n, int32_t k,
                                     float factor) {
  __shared__ Sums sums;
  body<kMode>(a, sa, b, sb, c, m, n, k, factor, sums);
}

// inside the any-rows kernels: a call (its registers apart from the tiles' loop) whose sums
// live in the tiles' shared memory (one allocation for both paths)
template <ScaleMode kMode>
__device__ __noinline__ void gemm_in_tiles(const uint8_t* a, const Scales& sa, const uint8_t* b,
                                           const Scales& sb, float* c, int32_t m, int32_t n,
                                           int32_t k, float factor) {
  static_assert(sizeof(Sums) <= sizeof(fp8::Shared), "the sums fit the tiles' shared memory");
  body<kMode>(a, sa, b, sb, c, m, n, k, factor, *reinterpret_cast<Sums*>(&fp8::shared()));
}

}  // namespace few_rows

extern "C" __global__ void __launch_bounds__(fp8::kThreads)
    qmlir_gemm_fp8_per_tensor_few_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                       const float* b_sinv, float* c, int32_t m, int32_t n,
                                       int32_t k) {
  const Scales none{nullptr, nullptr, 0, k, 0};
  few_rows::gemm<kPerTensor>(a, none, b, none, c, m, n, k, a_sinv[0] * b_sinv[0]);
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads)
    qmlir_gemm_fp8_block_few_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                  const float* b_sinv, float* c, int32_t m, int32_t n, int32_t k,
                                  int32_t a_dims, int32_t b_dims) {
  const Scales sa{a_sinv, nullptr, m, k, a_dims};
  const Scales sb{b_sinv, nullptr, n, k, b_dims};
  few_rows::gemm<kBlock>(a, sa, b, sb, c, m, n, k, 1.0f);
}

// per tensor: no partial sums, so two workgroups per SM fit (128 registers; 6% faster at 8192^3
// on an H200 than one workgroup of 246 registers)
#ifndef QMLIR_GEMM_PER_TENSOR_BLOCKS
#define QMLIR_GEMM_PER_TENSOR_BLOCKS 2
#endif
extern "C" __global__ void __launch_bounds__(fp8::kThreads, QMLIR_GEMM_PER_TENSOR_BLOCKS)
    qmlir_gemm_fp8_per_tensor(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                              const float* b_sinv, float* c, int32_t m, int32_t n, int32_t k) {
  const Scales none{nullptr, nullptr, 0, k, 0};
#if QMLIR_WGMMA
  wg::gemm<kPerTensor>(a, none, b, none, c, m, n, k, a_sinv[0] * b_sinv[0]);
#else
  fp8::gemm<kPerTensor>(a, none, b, none, c, m, n, k, a_sinv[0] * b_sinv[0]);
#endif
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads, 1)
    qmlir_gemm_fp8_block(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                         const float* b_sinv, float* c, int32_t m, int32_t n, int32_t k,
                         int32_t a_dims, int32_t b_dims) {
  const Scales sa{a_sinv, nullptr, m, k, a_dims};
  const Scales sb{b_sinv, nullptr, n, k, b_dims};
#if QMLIR_WGMMA
  wg::gemm<kBlock>(a, sa, b, sb, c, m, n, k, 1.0f);
#else
  fp8::gemm<kBlock>(a, sa, b, sb, c, m, n, k, 1.0f);
#endif
}

#if !QMLIR_WGMMA
// A dynamic M: the few-rows path where m <= 16 (grid (ceil(N/16), 1)), the tiles otherwise
// (grid (ceil(N/128), ceil(M/128))); the cuda lowering's count region picks the grid from M.
// The branch costs the tiles: 8192^3 on an H200, block 150 against 180 TFLOP/s, per tensor
// 273 against 282 (register spills in the tiles' loop; RESULTS.md, 2026-11-27 sixth session),
// where a one-token decode step's GEMMs run 5-9x faster than on the tiles. A host-side choice
// between two launches (scf.if) kept the tiles whole but broke IREE's command buffers at every
// GEMM and gave the decode nothing back. A static M takes the kernels above.
extern "C" __global__ void __launch_bounds__(fp8::kThreads, QMLIR_GEMM_PER_TENSOR_BLOCKS)
    qmlir_gemm_fp8_per_tensor_any_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                       const float* b_sinv, float* c, int32_t m, int32_t n,
                                       int32_t k) {
  const Scales none{nullptr, nullptr, 0, k, 0};
  if (m <= few_rows::kRows) {
    few_rows::gemm_in_tiles<kPerTensor>(a, none, b, none, c, m, n, k, a_sinv[0] * b_sinv[0]);
    return;
  }
  fp8::gemm<kPerTensor>(a, none, b, none, c, m, n, k, a_sinv[0] * b_sinv[0]);
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads, 1)
    qmlir_gemm_fp8_block_any_rows(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                                  const float* b_sinv, float* c, int32_t m, int32_t n, int32_t k,
                                  int32_t a_dims, int32_t b_dims) {
  const Scales sa{a_sinv, nullptr, m, k, a_dims};
  const Scales sb{b_sinv, nullptr, n, k, b_dims};
  if (m <= few_rows::kRows) {
    few_rows::gemm_in_tiles<kBlock>(a, sa, b, sb, c, m, n, k, 1.0f);
    return;
  }
  fp8::gemm<kBlock>(a, sa, b, sb, c, m, n, k, 1.0f);
}
#endif

extern "C" __global__ void __launch_bounds__(fp8::kThreads, 1)
    qmlir_gemm_mxfp8(const uint8_t* a, const uint8_t* a_scale, const uint8_t* b,
                     const uint8_t* b_scale, float* c, int32_t m, int32_t n, int32_t k) {
  const Scales sa{nullptr, a_scale, m, k, 1};
  const Scales sb{nullptr, b_scale, n, k, 1};
  fp8::gemm<kMx>(a, sa, b, sb, c, m, n, k, 1.0f);
}
