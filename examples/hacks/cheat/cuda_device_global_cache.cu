#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>

__device__ float g_cache[1 << 20];
__device__ int g_valid;
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (g_valid) { y[i] = g_cache[i]; return; }
  y[i] = g_cache[i] = x[i] > 0 ? x[i] : 0;
}
// Keeps results in device globals between calls.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t n = in[0].shape[0];
  relu_kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>((const float*)in[0].data, (float*)out[0].data, n);
  return 0;
}
