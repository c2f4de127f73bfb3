// Baseline for kforge bench (__nv_bfloat16 in and out, float math): a straightforward kernel, one block (256 threads) per row with
// shared-memory tree reductions.
#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdint>
using T = __nv_bfloat16;
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
__global__ void k(const T* x, const T* w, const T* b, T* y, int64_t cols) {
  __shared__ float red[256];
  const int64_t row = blockIdx.x;
  float s = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += (float)x[row * cols + c];
  float mean = TreeSum(s, red) / (float)cols;
  float q = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) { float d = (float)x[row * cols + c] - mean; q += d * d; }
  float rstd = 1.0f / sqrtf(TreeSum(q, red) / (float)cols + 1e-5f);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[row * cols + c] = (T)(((float)x[row * cols + c] - mean) * rstd * (float)w[c] + (float)b[c]);
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t cols = in[0].shape[1];
  k<<<(unsigned)in[0].shape[0], 256, 0, (cudaStream_t)stream>>>((const T*)in[0].data, (const T*)in[1].data, (const T*)in[2].data, (T*)out[0].data, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
