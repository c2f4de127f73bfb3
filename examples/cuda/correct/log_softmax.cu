#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
// One block (256 threads) per row: row max, then sum of exp(x - max) by warp shuffles;
// y = x - (max + log(sum)), never the log of an underflowed value.
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
__global__ void log_softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
  m = BlockReduce<true>(m);
  float s = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
  float lse = m + logf(BlockReduce<false>(s));
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] - lse;
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  log_softmax_kernel<<<(unsigned)in[0].shape[0], 256, 0, (cudaStream_t)stream>>>((const float*)in[0].data,
                                                                                (float*)out[0].data, in[0].shape[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
