// qmlir_wgmma.cuh: Hopper's warpgroup MMA (wgmma, sm_90a only) for the FP8 GEMMs: shared-memory
// matrix descriptors of the no-swizzle K-major layout, the m64n128k32 E4M3 x E4M3 -> f32
// instruction and its fences. Included only where __CUDA_ARCH_FEAT_SM90_ALL is defined (NVRTC
// --gpu-architecture=compute_90a).
#pragma once

#include "qmlir_numerics.cuh"  // the fixed-width integer types under NVRTC


// A K-major operand tile in shared memory in 8 x 16-byte core matrices (128 contiguous bytes:
// 8 rows of 16 K-bytes): core matrix (row / 8, chunk) at (row / 8) * sbo + chunk * lbo.
// Descriptor: start address >> 4 (bits 0-13), leading byte offset >> 4 (the K-direction stride,
// bits 16-29), stride byte offset >> 4 (the M/N-direction stride, bits 32-45), no swizzle
// (bits 62-63 = 0), base offset 0.
__device__ __forceinline__ uint64_t qmlir_wgmma_desc(uint32_t smem_addr, uint32_t lbo,
                                                     uint32_t sbo) {
  return (uint64_t)((smem_addr & 0x3FFFFu) >> 4) | ((uint64_t)(lbo >> 4) << 16) |
         ((uint64_t)(sbo >> 4) << 32);
}

__device__ __forceinline__ void qmlir_wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void qmlir_wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void qmlir_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// shared memory written through the generic proxy (cp.async, st.shared) is read next by wgmma
// (the async proxy): each writing thread fences before the barrier that publishes it
__device__ __forceinline__ void qmlir_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// keeps the compiler from moving reads or writes of an accumulator across a wgmma wait
__device__ __forceinline__ void qmlir_wgmma_hold(float d[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d[64] (+)= A[64 x 32] x B[128 x 32]^T, E4M3 operands from shared memory, f32 accumulators:
// d = a x b when accumulate is 0, d + a x b otherwise. Thread t of the warpgroup holds
// d[i] at row 16 * (t / 32) + (t % 32) / 4 + 8 * ((i % 4) / 2), column 8 * (i / 4) + 2 * (t % 4)
// + i % 2.
__device__ __forceinline__ void qmlir_wgmma_m64n128k32_e4m3(float d[64], uint64_t a_desc,
                                                            uint64_t b_desc, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63 "
      "}, %64, %65, p, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),
        "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
        "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
        "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),
        "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}
