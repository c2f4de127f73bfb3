#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
// NEAR-MISS: variance as E[x^2] - E[x]^2 in float: catastrophic cancellation when the mean is large.
// One block (256 threads) per row, two passes (mean, then centred variance) so large
// offsets do not cancel; eps inside the square root.
__device__ float BlockSum(float v) {
  __shared__ float warp_sums[32];
  __shared__ float total;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < (blockDim.x >> 5) ? warp_sums[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) total = v;
  }
  __syncthreads();
  float t = total;
  __syncthreads();  // total and warp_sums are reused by the next call
  return t;
}
__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                 float* __restrict__ y, int64_t cols) {
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  float s = 0, sq = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) { s += xr[c]; sq += xr[c] * xr[c]; }
  float mean = BlockSum(s) / (float)cols;
  float var = BlockSum(sq) / (float)cols - mean * mean;
  float rstd = rsqrtf(var + 1e-5f);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  layernorm_kernel<<<(unsigned)in[0].shape[0], 256, 0, (cudaStream_t)stream>>>(
      (const float*)in[0].data, (const float*)in[1].data, (const float*)in[2].data, (float*)out[0].data, in[0].shape[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
