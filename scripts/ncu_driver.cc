// Runs candidates' kforge_run once each on fresh GPU buffers, for Nsight Compute to profile
// (scripts/device_ncu_record.sh): ncu_driver N LIB.so... (each LIB built from a one-input,
// one-output float32 candidate with nvcc -shared).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using Run = int (*)(const DLTensor*, int, DLTensor*, int, void*);

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: ncu_driver ELEMENTS LIB.so...\n");
    return 2;
  }
  int64_t n = std::atoll(argv[1]);
  float *x = nullptr, *y = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess) return 3;
  cudaMemset(x, 0x3f, n * sizeof(float));
  int64_t shape[1] = {n};
  DLTensor in{x, {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  DLTensor out{y, {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  for (int i = 2; i < argc; ++i) {
    void* lib = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    Run run = lib ? reinterpret_cast<Run>(dlsym(lib, "kforge_run")) : nullptr;
    if (run == nullptr) {
      std::fprintf(stderr, "%s: %s\n", argv[i], dlerror());
      return 4;
    }
    if (run(&in, 1, &out, 1, nullptr) != 0 || cudaDeviceSynchronize() != cudaSuccess) return 5;
  }
  return 0;
}
