#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cutlass/gemm/device/gemm.h>

// Instantiates a CUTLASS GEMM.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  using Gemm = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor, float, cutlass::layout::RowMajor,
                                           float, cutlass::layout::RowMajor>;
  Gemm op;
  return 0;
}
