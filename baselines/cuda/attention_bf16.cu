// Baseline for kforge bench (__nv_bfloat16 in and out, float math): a straightforward kernel, one thread per output element
// (row max, row sum and weighted sum each recomputed from the scores).
#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdint>
using T = __nv_bfloat16;
#include <cfloat>
__global__ void k(const T* q, const T* kk, const T* v, T* o, int64_t bh, int64_t s, int64_t d,
                  float scale) {
  int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (idx >= bh * s * d) return;
  int64_t e = idx % d, i = idx / d % s, t = idx / (d * s);
  const T* qi = q + (t * s + i) * d;
  const T* kt = kk + t * s * d;
  const T* vt = v + t * s * d;
  int64_t last = 0 ? i : s - 1;
  float m = -FLT_MAX;
  for (int64_t j = 0; j <= last; ++j) {
    float dot = 0;
    for (int64_t c = 0; c < d; ++c) dot += (float)qi[c] * (float)kt[j * d + c];
    m = fmaxf(m, dot * scale);
  }
  float sum = 0, acc = 0;
  for (int64_t j = 0; j <= last; ++j) {
    float dot = 0;
    for (int64_t c = 0; c < d; ++c) dot += (float)qi[c] * (float)kt[j * d + c];
    float p = expf(dot * scale - m);
    sum += p;
    acc += p * (float)vt[j * d + e];
  }
  o[idx] = (T)(acc / sum);
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t bh = in[0].shape[0] * in[0].shape[1], s = in[0].shape[2], d = in[0].shape[3];
  k<<<(unsigned)((bh * s * d + 255) / 256), 256, 0, (cudaStream_t)stream>>>(
      (const T*)in[0].data, (const T*)in[1].data, (const T*)in[2].data, (T*)out[0].data, bh, s, d,
      1.0f / sqrtf((float)d));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
