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
//   qmlir_gemm_fp8_rowwise: one f32 scale_inv per row of each operand over all of K
//     (fp8-rowwise; 1D [1, pad4(rows)]): K summed as per tensor, C = acc * (a_sinv[row] *
//     b_sinv[col]) at the end.
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
// The FP8 tiles themselves live in include/qmlir_gemm_fp8.cuh, shared with gemm_few_rows.cu (the
// kernels for M <= 16 and for a dynamic M), a family of its own so that a module launching only
// these kernels does not carry that PTX.
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

#include "qmlir_gemm_fp8.cuh"

extern "C" __global__ void __launch_bounds__(kThreads)
    qmlir_gemm_nvfp4(const uint8_t* a, const uint8_t* a_scale, const float* a_sdec,
                     const uint8_t* b, const uint8_t* b_scale, const float* b_sdec, float* c,
                     int32_t m, int32_t n, int32_t k) {
  gemm_nvfp4(a, a_scale, a_sdec, b, b_scale, b_sdec, c, m, n, k);
}


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
    store_two(c + row * n + col, col, n, acc[i] * factor, acc[i + 1] * factor, pairs);
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

extern "C" __global__ void __launch_bounds__(fp8::kThreads, QMLIR_GEMM_PER_TENSOR_BLOCKS)
    qmlir_gemm_fp8_rowwise(const uint8_t* a, const float* a_sinv, const uint8_t* b,
                           const float* b_sinv, float* c, int32_t m, int32_t n, int32_t k) {
  const Scales sa{a_sinv, nullptr, m, k, 1};
  const Scales sb{b_sinv, nullptr, n, k, 1};
  fp8::gemm<kRowwise>(a, sa, b, sb, c, m, n, k, 1.0f);
}

extern "C" __global__ void __launch_bounds__(fp8::kThreads, 1)
    qmlir_gemm_mxfp8(const uint8_t* a, const uint8_t* a_scale, const uint8_t* b,
                     const uint8_t* b_scale, float* c, int32_t m, int32_t n, int32_t k) {
  const Scales sa{nullptr, a_scale, m, k, 1};
  const Scales sb{nullptr, b_scale, n, k, 1};
  fp8::gemm<kMx>(a, sa, b, sb, c, m, n, k, 1.0f);
}
