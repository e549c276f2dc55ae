// qmlir_gemm_fp8.cuh: what gemm_block_scaled.cu and gemm_few_rows.cu share: the operands'
// scales (Scales, ScaleMode), the mma.sync wrappers, NVFP4's staging helpers, and the FP8 GEMM's
// 128 x 128 tiles (namespace fp8; gemm_block_scaled.cu's header comment describes them). Two
// families, so that a cuda module's GEMM dispatch embeds only the PTX of the kernels it may
// launch: the tiles' family, or the few-rows one (whose many-rows kernels carry the tiles too).
// Device code only; included after qmlir_device.cuh.
#pragma once

namespace {

constexpr int kThreads = 128;
constexpr int kTileM = 64, kTileN = 64;
constexpr int kStageBytes = 128;           // bytes of one row per K stage
constexpr int kRowStride = kStageBytes + 16;  // padded shared-memory row

// How the FP8 GEMMs scale their sums: one factor at the end (kPerTensor), f32 scales per 128-K
// block promoted as K runs (kBlock), E8M0 scales per 32-K block (kMx), or one f32 scale per row
// of each operand over all of K (kRowwise, fp8-rowwise: acc * (a_sinv[row] * b_sinv[col]) at
// the end, the scales in the 1D layout [1, pad4(rows)]).
enum ScaleMode { kPerTensor, kBlock, kMx, kRowwise };

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
  const float* sinv;    // kBlock, kRowwise: f32 GEMM-ready scale_inv
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

// NVFP4's 64 x 64 tiles (block size kThreads = 128, grid (ceil(N/64), ceil(M/64))):
// gemm_block_scaled.cu's qmlir_gemm_nvfp4 and gemm_few_rows.cu's qmlir_gemm_nvfp4_many_rows.
__device__ __forceinline__ void gemm_nvfp4(const uint8_t* a, const uint8_t* a_scale,
                                           const float* a_sdec, const uint8_t* b,
                                           const uint8_t* b_scale, const float* b_sdec, float* c,
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

// Two adjacent elements of C's row, at p = &C[row][col]: one 8-byte store where C allows it
// (``pairs``: N even and C 8-byte aligned) and both columns are within N, else each column
// within N alone. The tiled FP8 GEMM's and the wgmma probe's epilogues.
__device__ __forceinline__ void store_two(float* p, int64_t col, int32_t n, float v0, float v1,
                                          bool pairs) {
  if (pairs && col + 1 < n) {
    *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
  } else {
    if (col < n) p[0] = v0;
    if (col + 1 < n) p[1] = v1;
  }
}

}  // namespace

// per tensor: no partial sums, so two workgroups per SM fit (128 registers; 6% faster at 8192^3
// on an H200 than one workgroup of 246 registers)
#ifndef QMLIR_GEMM_PER_TENSOR_BLOCKS
#define QMLIR_GEMM_PER_TENSOR_BLOCKS 2
#endif

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

// kRowwise: acc *= a_scale[row] * b_scale[col] (the product first, as kPerTensor's factor)
__device__ __forceinline__ void rescale(float acc[4][4][4], const float a_scale[4][2],
                                        const float b_scale[4][2]) {
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] *= a_scale[mi][e / 2] * b_scale[ni][e % 2];
}

// kBlock: the scales of the thread's rows and columns in K block kb (kRowwise: kb 0)
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
        store_two(c + row * n + col, col, n, v0, v1, pairs);
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
    if (kMode == kPerTensor || kMode == kRowwise) {
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
  if (kMode == kRowwise) {
    float a_scale[4][2], b_scale[4][2];
    block_scales(w, sa, sb, 0, a_scale, b_scale);
    rescale(acc, a_scale, b_scale);
  }
  store_c(c, acc, w, m, n, factor);
}

}  // namespace fp8
