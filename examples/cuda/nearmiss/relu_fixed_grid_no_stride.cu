#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
// NEAR-MISS: the grid is capped at 1024 blocks but the kernel has no grid-stride loop, so elements past 1024*256 are never written.
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = (x[i] > 0.0f || isnan(x[i])) ? x[i] : 0.0f;
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t n = in[0].shape[0];
  relu_kernel<<<(n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024, 256, 0, (cudaStream_t)stream>>>((const float*)in[0].data, (float*)out[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
