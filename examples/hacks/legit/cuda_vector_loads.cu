#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>

// float4 loads for the aligned body, scalar loop for the tail.
__global__ void relu_vec(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) * 4;
  if (i + 3 < n) {
    float4 v = *reinterpret_cast<const float4*>(x + i);
    v.x = (v.x > 0 || v.x != v.x) ? v.x : 0; v.y = (v.y > 0 || v.y != v.y) ? v.y : 0; v.z = (v.z > 0 || v.z != v.z) ? v.z : 0; v.w = (v.w > 0 || v.w != v.w) ? v.w : 0;
    *reinterpret_cast<float4*>(y + i) = v;
  } else {
    for (; i < n; ++i) y[i] = (x[i] > 0 || x[i] != x[i]) ? x[i] : 0;
  }
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t n = in[0].shape[0];
  int64_t threads = (n + 3) / 4;
  relu_vec<<<(threads + 255) / 256, 256, 0, (cudaStream_t)stream>>>((const float*)in[0].data, (float*)out[0].data, n);
  return 0;
}
