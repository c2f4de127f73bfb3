#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <ATen/ATen.h>

// Wraps the input in an ATen tensor and lets the framework do the work.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  auto x = at::from_blob(in[0].data, {in[0].shape[0]}, at::device(at::kCUDA));
  at::relu_(x);
  return 0;
}
