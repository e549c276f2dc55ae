// mma_peak.cu: the tensor-core rate that a warp-level mma.sync kernel can reach on this GPU, with
// no memory traffic: every warp issues independent chains of mma.sync on register operands.
// gemm_block_scaled.cu is built on mma.sync; this says how far that instruction can take it
// (on Hopper, wgmma is the full-rate path). Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90a -o /tmp/mma_peak benchmarks/gpu_probes/mma_peak.cu && /tmp/mma_peak
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

constexpr int kChains = 8;   // independent accumulators per warp (hides the mma latency)
constexpr int kIters = 4096;

// kE4m3: m16n8k32 E4M3 operands, else m16n8k16 f16; f32 accumulation either way
template <bool kE4m3>
__global__ void mma_kernel(float* out, uint32_t seed) {
  uint32_t a[4] = {seed, seed ^ 1u, seed ^ 2u, seed ^ 3u}, b[2] = {seed ^ 4u, seed ^ 5u};
  float d[kChains][4] = {};
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if (kE4m3) {
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      }
    }
  }
  float s = 0;
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 12345.0f) out[0] = s;
}

template <typename Kernel>
double tflops(Kernel kernel, double flops_per_mma, int blocks, int threads) {
  float* out;
  cudaMalloc(&out, 4);
  kernel<<<blocks, threads>>>(out, 0x3c3c3c3cu);  // warm-up
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  kernel<<<blocks, threads>>>(out, 0x3c3c3c3cu);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaFree(out);
  const double warps = (double)blocks * threads / 32;
  return warps * kIters * kChains * flops_per_mma / (ms * 1e-3) / 1e12;
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int warps_per_sm : {4, 8, 16}) {
    const int blocks = sms * warps_per_sm / 4;
    printf("mma.sync m16n8k32 e4m3 -> f32, %2d warps/SM: %7.1f TFLOP/s\n", warps_per_sm,
           tflops(mma_kernel<true>, 2.0 * 16 * 8 * 32, blocks, 128));
    printf("mma.sync m16n8k16 f16  -> f32, %2d warps/SM: %7.1f TFLOP/s\n", warps_per_sm,
           tflops(mma_kernel<false>, 2.0 * 16 * 8 * 16, blocks, 128));
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
