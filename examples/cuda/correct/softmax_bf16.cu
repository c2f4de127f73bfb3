#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdint>
// Softmax, __nv_bfloat16 in and out: one block (256 threads) per row, float math (max, then sum of
// exp by warp shuffles), one rounding at the store.
using T = __nv_bfloat16;
template <bool kMax>
__device__ float BlockReduce(float v) {
  __shared__ float warp_vals[32];
  __shared__ float total;
  for (int o = 16; o > 0; o >>= 1) {
    float other = __shfl_down_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  if ((threadIdx.x & 31) == 0) warp_vals[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < (blockDim.x >> 5) ? warp_vals[threadIdx.x] : (kMax ? -INFINITY : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
      float other = __shfl_down_sync(0xffffffffu, v, o);
      v = kMax ? fmaxf(v, other) : v + other;
    }
    if (threadIdx.x == 0) total = v;
  }
  __syncthreads();
  float t = total;
  __syncthreads();
  return t;
}
__global__ void softmax_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t cols) {
  const T* xr = x + blockIdx.x * cols;
  T* yr = y + blockIdx.x * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, (float)xr[c]);
  m = BlockReduce<true>(m);
  float s = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf((float)xr[c] - m);
  float inv = 1.0f / BlockReduce<false>(s);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = (T)(expf((float)xr[c] - m) * inv);
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  softmax_kernel<<<(unsigned)in[0].shape[0], 256, 0, (cudaStream_t)stream>>>((const T*)in[0].data, (T*)out[0].data,
                                                                            in[0].shape[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
