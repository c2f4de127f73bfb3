#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdint>
// bfloat16 in and out, float math, one rounding at the store. One block (128 threads) per (batch*head, query row): scores for every key in dynamic
// shared memory, a stable softmax over them, then each thread accumulates output columns.
using T = __nv_bfloat16;
#ifndef KF_CAUSAL
#define KF_CAUSAL 0
#endif
__device__ float BlockReduce(float v, bool take_max, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) {
    float other = __shfl_down_sync(0xffffffffu, v, o);
    v = take_max ? fmaxf(v, other) : v + other;
  }
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = scratch[0];
  for (int i = 1; i < (int)(blockDim.x >> 5); ++i) t = take_max ? fmaxf(t, scratch[i]) : t + scratch[i];
  __syncthreads();
  return t;
}
__global__ void attention_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                 T* __restrict__ o, int s, int d, float scale) {
  extern __shared__ float scores[];
  __shared__ float scratch[32];
  int64_t head = blockIdx.y, i = blockIdx.x;
  const T* qi = q + (head * s + i) * d;
  const T* kh = k + head * s * d;
  const T* vh = v + head * s * d;
  int last = KF_CAUSAL ? (int)i : s - 1;
  float m = -INFINITY;
  for (int j = threadIdx.x; j <= last; j += blockDim.x) {
    float dot = 0;
    for (int e = 0; e < d; ++e) dot += (float)qi[e] * (float)kh[(int64_t)j * d + e];
    scores[j] = dot * scale;
    m = fmaxf(m, scores[j]);
  }
  m = BlockReduce(m, true, scratch);
  float sum = 0;
  for (int j = threadIdx.x; j <= last; j += blockDim.x) sum += (scores[j] = expf(scores[j] - m));
  float inv = 1.0f / BlockReduce(sum, false, scratch);
  for (int e = threadIdx.x; e < d; e += blockDim.x) {
    float acc = 0;
    for (int j = 0; j <= last; ++j) acc += scores[j] * (float)vh[(int64_t)j * d + e];
    o[(head * s + i) * d + e] = (T)(acc * inv);
  }
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t bh = in[0].shape[0] * in[0].shape[1];
  int s = (int)in[0].shape[2], d = (int)in[0].shape[3];
  size_t shared = (size_t)s * sizeof(float);
  if (shared > 48 * 1024) return 2;  // longer sequences need a tiled (flash) kernel
  attention_kernel<<<dim3(s, (unsigned)bh), 128, shared, (cudaStream_t)stream>>>(
      (const T*)in[0].data, (const T*)in[1].data, (const T*)in[2].data, (T*)out[0].data, s, d,
      1.0f / sqrtf((float)d));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
