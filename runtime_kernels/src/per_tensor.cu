// per_tensor.cu: per-tensor FP8 (fp8-current: TE Float8CurrentScaling; fp8-delayed: DelayedScaling).
//
// Block size 256 (any multiple of 32 works); 1-D grids with grid-stride loops, so any grid size is
// correct (ceil(n / 1024) blocks, capped near 1024, covers each element once per thread group).
// Every buffer first (inputs, then outputs), then the i32 constants (hal.dispatch.extern ABI).
// Loads are float4 (four in flight per thread) and stores 4 bytes wide (streaming) for the
// first n/4*4 elements, then a scalar tail (scalar throughout when a pointer is not aligned
// for them).
#include "qmlir_device.cuh"

namespace {

__device__ __forceinline__ bool vector_ok(const float* x, const uint8_t* data) {
  return ((uintptr_t)x % 16 == 0) && (data == nullptr || (uintptr_t)data % 4 == 0);
}

// max|v| over a float4, NaN skipped
__device__ __forceinline__ float amax4(const float4 v) {
  return fmaxf(fmaxf(qmlir_abs_or_zero(v.x), qmlir_abs_or_zero(v.y)),
               fmaxf(qmlir_abs_or_zero(v.z), qmlir_abs_or_zero(v.w)));
}

// data = encode(x * scale) over n elements; returns this thread's max|x| (NaN skipped). The
// vector loop loads kUnroll float4 before using any, so that each thread keeps that many 16-byte
// loads in flight.
// kReverse walks the float4s from the last (the vector part; the scalar tail as before): a cast
// pass after an amax pass over the same x then starts with what the amax pass read last, which
// L2 may still hold.
template <bool kE5m2, bool kCast, bool kReverse = false>
__device__ __forceinline__ float cast_and_amax(const float* __restrict__ x, float scale,
                                               uint8_t* __restrict__ data, int32_t n) {
  constexpr int kUnroll = 4;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t vectors = vector_ok(x, data) ? n / 4 : 0;
  const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
  unsigned int* __restrict__ data4 = reinterpret_cast<unsigned int*>(data);
  if (kReverse) {
    x4 += vectors - 1;
    data4 += vectors - 1;
  }
  constexpr int64_t kStep = kReverse ? -1 : 1;
  float amax = 0.0f;
  int64_t i = first;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = x4[kStep * (i + u * stride)];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      amax = fmaxf(amax, amax4(v[u]));
      if (kCast) {
        __stcs(&data4[kStep * (i + u * stride)],
               qmlir_encode_fp8x4(v[u].x * scale, v[u].y * scale, v[u].z * scale, v[u].w * scale,
                                  kE5m2));
      }
    }
  }
  for (; i < vectors; i += stride) {
    const float4 v = x4[kStep * i];
    amax = fmaxf(amax, amax4(v));
    if (kCast) {
      __stcs(&data4[kStep * i],
             qmlir_encode_fp8x4(v.x * scale, v.y * scale, v.z * scale, v.w * scale, kE5m2));
    }
  }
  for (int64_t j = vectors * 4 + first; j < n; j += stride) {
    const float v = x[j];
    amax = fmaxf(amax, qmlir_abs_or_zero(v));
    if (kCast) data[j] = qmlir_encode_fp8(v * scale, kE5m2);
  }
  return amax;
}

template <bool kE5m2, bool kDelayed>
__device__ __forceinline__ void quantize(const float* x, const float* scale_buf, uint8_t* data,
                                         float* scale_inv, float* amax_inout, int32_t n) {
  const float scale = scale_buf[0];
  if (blockIdx.x == 0 && threadIdx.x == 0) scale_inv[0] = 1.0f / scale;
  // fp8-current's cast follows its amax pass over the same x: backwards, it starts with what L2
  // still holds of it (an H100 at 8192x8192: 211 -> 204 us for both passes)
  const float amax = cast_and_amax<kE5m2, true, !kDelayed>(x, scale, data, n);
  if (!kDelayed) return;
  const float block_amax = qmlir_block_max(amax);
  if (threadIdx.x == 0) qmlir_atomic_max_nonneg(amax_inout, block_amax);
}

}  // namespace

// amax[0] = max(amax[0], max|x|), NaN skipped (fmax). amax is in/out: the caller zero-fills it.
extern "C" __global__ void qmlir_amax_f32(const float* x, float* amax, int32_t n) {
  const float local = cast_and_amax<false, false>(x, 1.0f, nullptr, n);
  const float block_amax = qmlir_block_max(local);
  if (threadIdx.x == 0) qmlir_atomic_max_nonneg(amax, block_amax);
}

// scale[0] = TE compute_scale_from_amax(amax[0]); format 0 = E4M3 (448), 1 = E5M2 (57344);
// pow2 0/1; eps_bits = the f32 bits of amax_epsilon. Grid (1), one thread does the work.
extern "C" __global__ void qmlir_fp8_scale_from_amax(const float* amax, float* scale,
                                                     int32_t format, int32_t pow2,
                                                     int32_t eps_bits) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const float eps = qmlir_bits_f32((uint32_t)eps_bits);
  scale[0] = qmlir_fp8_scale(amax[0], qmlir_fp8_max(format == 1), eps, pow2 != 0);
}

// data = cast(x * scale[0]) (saturating RNE), scale_inv[0] = 1 / scale[0].
extern "C" __global__ void qmlir_quantize_fp8_e4m3(const float* x, const float* scale,
                                                   uint8_t* data, float* scale_inv, int32_t n) {
  quantize<false, false>(x, scale, data, scale_inv, nullptr, n);
}

extern "C" __global__ void qmlir_quantize_fp8_e5m2(const float* x, const float* scale,
                                                   uint8_t* data, float* scale_inv, int32_t n) {
  quantize<true, false>(x, scale, data, scale_inv, nullptr, n);
}

// fp8-delayed: cast with the stored scale and reduce this call's amax in the same pass (one read
// of x). amax is in/out (the caller zero-fills it) and comes before the outputs: IREE binds the
// operands first (the tied amax among them), then the untied results (data, scale_inv).
extern "C" __global__ void qmlir_quantize_fp8_delayed_e4m3(const float* x, const float* scale,
                                                           float* amax, uint8_t* data,
                                                           float* scale_inv, int32_t n) {
  quantize<false, true>(x, scale, data, scale_inv, amax, n);
}

extern "C" __global__ void qmlir_quantize_fp8_delayed_e5m2(const float* x, const float* scale,
                                                           float* amax, uint8_t* data,
                                                           float* scale_inv, int32_t n) {
  quantize<true, true>(x, scale, data, scale_inv, amax, n);
}
