#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cub/cub.cuh>

// Uses CUB's device-wide reduction.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, (float*)in[0].data, (float*)out[0].data, (int)in[0].shape[1]);
  return 0;
}
