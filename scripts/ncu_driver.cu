// Runs candidates' kforge_run once each on fresh GPU buffers, for Nsight Compute to profile
// (scripts/device_ncu_record.sh, scripts/device_cupti_vs_ncu.sh):
//   ncu_driver [--flush dirty|clean] N LIB.so...
// (each LIB built from a one-input, one-output float32 candidate with nvcc -shared).
// --flush does what happens to the L2 before each call: "dirty" writes twice its size as
// kforge bench's thrash does (cudaMemset: the lines stay dirty, to be written back while the
// next kernel runs), "clean" then reads another buffer of that size (the dirty lines are
// written back during the read, and the L2 holds clean lines when the kernel starts).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using Run = int (*)(const DLTensor*, int, DLTensor*, int, void*);

__global__ void kforge_l2_read_sweep(const float4* p, size_t n, float* sink) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const float4 v = p[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) *sink = acc;  // never true for the memset's bytes: the reads are not dead code
}

int main(int argc, char** argv) {
  int a = 1;
  const char* flush = "";
  if (argc > 2 && !std::strcmp(argv[1], "--flush")) {
    flush = argv[2];
    a = 3;
  }
  if (argc < a + 2) {
    std::fprintf(stderr, "usage: ncu_driver [--flush dirty|clean] ELEMENTS LIB.so...\n");
    return 2;
  }
  int64_t n = std::atoll(argv[a]);
  float *x = nullptr, *y = nullptr, *sink = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&sink, sizeof(float)) != cudaSuccess)
    return 3;
  cudaMemset(x, 0x3f, n * sizeof(float));
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const size_t flush_bytes = 2 * static_cast<size_t>(prop.l2CacheSize);
  void *dirty = nullptr, *clean = nullptr;
  if (*flush && (cudaMalloc(&dirty, flush_bytes) != cudaSuccess || cudaMalloc(&clean, flush_bytes) != cudaSuccess))
    return 3;
  if (clean) cudaMemset(clean, 0, flush_bytes);
  int64_t shape[1] = {n};
  DLTensor in{x, {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  DLTensor out{y, {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  for (int i = a + 1; i < argc; ++i) {
    void* lib = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    Run run = lib ? reinterpret_cast<Run>(dlsym(lib, "kforge_run")) : nullptr;
    if (run == nullptr) {
      std::fprintf(stderr, "%s: %s\n", argv[i], dlerror());
      return 4;
    }
    if (dirty) cudaMemsetAsync(dirty, i & 0xff, flush_bytes);
    if (!std::strcmp(flush, "clean"))
      kforge_l2_read_sweep<<<4 * prop.multiProcessorCount, 256>>>(static_cast<const float4*>(clean),
                                                                  flush_bytes / sizeof(float4), sink);
    if (run(&in, 1, &out, 1, nullptr) != 0 || cudaDeviceSynchronize() != cudaSuccess) return 5;
  }
  return 0;
}
