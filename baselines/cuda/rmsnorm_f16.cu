// Baseline for kforge bench (__half in and out, float math): a straightforward kernel, one block (256 threads) per row with
// shared-memory tree reductions.
#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdint>
using T = __half;
#include <cfloat>
__device__ float TreeSum(float v, float* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  float t = red[0];
  __syncthreads();
  return t;
}
__device__ float TreeMax(float v, float* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  float t = red[0];
  __syncthreads();
  return t;
}
__global__ void k(const T* x, const T* w, T* y, int64_t cols) {
  __shared__ float red[256];
  const int64_t row = blockIdx.x;
  float q = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) q += (float)x[row * cols + c] * (float)x[row * cols + c];
  float rstd = 1.0f / sqrtf(TreeSum(q, red) / (float)cols + 1e-6f);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[row * cols + c] = (T)((float)x[row * cols + c] * rstd * (float)w[c]);
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t cols = in[0].shape[1];
  k<<<(unsigned)in[0].shape[0], 256, 0, (cudaStream_t)stream>>>((const T*)in[0].data, (const T*)in[1].data, (T*)out[0].data, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
