#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
// NEAR-MISS: the input row pitch is computed as 2 * output width, which is one short when the width is odd.
// 2x2 window, stride 2, floor: one thread per output element, grid-stride.
__global__ void maxpool_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t planes, int64_t h,
                               int64_t w) {
  int64_t oh = h / 2, ow = w / 2, total = planes * oh * ow;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t j = i % ow, r = i / ow % oh, p = i / (ow * oh);
    int64_t w2 = 2 * ow;  // the row pitch taken from the output: wrong when w is odd
    const float* base = x + (p * h + 2 * r) * w2 + 2 * j;
    y[i] = fmaxf(fmaxf(base[0], base[1]), fmaxf(base[w2], base[w2 + 1]));
  }
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t planes = in[0].shape[0] * in[0].shape[1], h = in[0].shape[2], w = in[0].shape[3];
  int64_t total = planes * (h / 2) * (w / 2);
  int blocks = (int)((total + 255) / 256 < 8192 ? (total + 255) / 256 : 8192);
  if (blocks == 0) return 0;
  maxpool_kernel<<<blocks, 256, 0, (cudaStream_t)stream>>>((const float*)in[0].data, (float*)out[0].data, planes, h, w);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
