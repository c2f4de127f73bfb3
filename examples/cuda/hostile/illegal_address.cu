#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>

// Writes through a wild device pointer: an illegal address that poisons the CUDA context.
// The engine must record a runtime_error and go on to the next candidate.
__global__ void wild_write(float* y) { reinterpret_cast<float*>(0x10)[threadIdx.x] = 1.0f; y[0] = 0; }
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  wild_write<<<1, 32, 0, (cudaStream_t)stream>>>((float*)out[0].data);
  return 0;
}
