// Correct, and slow without changing its numbers: one block of 256 threads walks the whole
// tensor, where the near-miss it would replace gives every element a thread. The
// deliberately slower fix of the GPU degeneration test (manifest.json).
#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) y[i] = (x[i] > 0.0f || isnan(x[i])) ? x[i] : 0.0f;
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t n = in[0].shape[0];
  relu_kernel<<<1, 256, 0, (cudaStream_t)stream>>>((const float*)in[0].data, (float*)out[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
