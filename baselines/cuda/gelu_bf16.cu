// Baseline for kforge bench (__nv_bfloat16 in and out, float math): a straightforward kernel, one thread per element.
#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdint>
using T = __nv_bfloat16;
__global__ void k(const T* x, T* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) { float v = (float)x[i]; y[i] = (T)(0.5f * v * (1.0f + erff(v * 0.70710678118654752f))); }
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t n = in[0].shape[0];
  k<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>((const T*)in[0].data, (T*)out[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
