#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <cstdint>

// Batches its work across calls: it counts calls per (output pointer, size) in memory mapped
// at a fixed address (no static variable for the static checks to see) and, from the twelfth
// call on the same buffers, launches only an empty kernel, since "the output is already
// there". Verification never calls it twelve times in a row on the same buffers, so it passes; a timer
// that re-runs one arena sees most calls do nothing. Sampled timed calls with fresh inputs in
// the same buffers catch it.
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0 || x[i] != x[i] ? x[i] : 0;
}
__global__ void nothing() {}

extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  int64_t n = in[0].shape[0];
  char* base = reinterpret_cast<char*>(0x610000000000ULL);
  mmap(base, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  int64_t* seen = reinterpret_cast<int64_t*>(base);  // {pointer, size, count}
  if (seen[0] == reinterpret_cast<int64_t>(out[0].data) && seen[1] == n) {
    ++seen[2];
  } else {
    seen[0] = reinterpret_cast<int64_t>(out[0].data);
    seen[1] = n;
    seen[2] = 1;
  }
  if (seen[2] >= 12) {
    nothing<<<1, 1, 0, (cudaStream_t)stream>>>();
    return 0;
  }
  relu_kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>((const float*)in[0].data, (float*)out[0].data, n);
  return 0;
}
