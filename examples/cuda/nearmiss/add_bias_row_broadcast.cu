#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
// NEAR-MISS: bias broadcast along the wrong axis (indexed by row).
// y[r, c] = x[r, c] + b[c]; 2-D grid: blockIdx.y walks rows, x threads walk columns.
__global__ void add_bias_kernel(const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ y,
                                int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < cols; c += (int64_t)gridDim.x * blockDim.x)
      y[r * cols + c] = x[r * cols + c] + b[r % cols];
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  dim3 grid((unsigned)((cols + 255) / 256 < 256 ? (cols + 255) / 256 : 256), (unsigned)(rows < 65535 ? rows : 65535));
  add_bias_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>((const float*)in[0].data, (const float*)in[1].data,
                                                          (float*)out[0].data, rows, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
