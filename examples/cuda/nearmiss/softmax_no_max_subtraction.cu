#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
// NEAR-MISS: exp(x) without subtracting the row max: overflows to inf on large inputs.
#include <cfloat>

// One block per row (256 threads); shared-memory tree reductions for max and sum.
__global__ void softmax_kernel(const float* x, float* y, int64_t cols) {
  __shared__ float red[256];
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  float m = -FLT_MAX;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(xr[c]);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  float inv = 1.0f / red[0];
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = __expf(xr[c]) * inv;
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  softmax_kernel<<<in[0].shape[0], 256, 0, (cudaStream_t)stream>>>((const float*)in[0].data, (float*)out[0].data,
                                                                   in[0].shape[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
