#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdint>
// C = A B, __half in and out, float accumulation; 32x32 shared-memory tiles; each thread computes a 1x4 strip of C
// (blockDim 32x8). Edge tiles load zeros past the matrix bounds.
using T = __half;
constexpr int kTile = 32;
__global__ void matmul_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                              int m, int k, int n) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float bs[kTile][kTile + 1];
  int row0 = blockIdx.y * kTile, col = blockIdx.x * kTile + threadIdx.x;
  float acc[4] = {0, 0, 0, 0};
  for (int t = 0; t < k; t += kTile) {
    for (int i = threadIdx.y; i < kTile; i += blockDim.y) {
      int ar = row0 + i, ac = t + threadIdx.x, br = t + i;
      as[i][threadIdx.x] = ar < m && ac < k ? (float)a[(int64_t)ar * k + ac] : 0.0f;
      bs[i][threadIdx.x] = br < k && col < n ? (float)b[(int64_t)br * n + col] : 0.0f;
    }
    __syncthreads();
    for (int e = 0; e < kTile; ++e) {
      float bv = bs[e][threadIdx.x];
      for (int j = 0; j < 4; ++j) acc[j] += as[threadIdx.y + 8 * j][e] * bv;
    }
    __syncthreads();
  }
  for (int j = 0; j < 4; ++j) {
    int r = row0 + threadIdx.y + 8 * j;
    if (r < m && col < n) c[(int64_t)r * n + col] = (T)acc[j];
  }
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int m = (int)in[0].shape[0], k = (int)in[0].shape[1], n = (int)in[1].shape[1];
  dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  matmul_kernel<<<grid, dim3(kTile, 8), 0, (cudaStream_t)stream>>>((const T*)in[0].data, (const T*)in[1].data,
                                                                   (T*)out[0].data, m, k, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
