#pragma once
// A load_inline extension's cuda.cu, split so that nvcc compiles only what runs on the device.
//
// nvcc on a .cu that includes torch's headers takes 20-40 s (its front ends parse them twice,
// and no precompiled header helps them); the same kernels with only the CUDA runtime take
// under a second. So kforge splits cuda.cu by top-level declaration:
//
//   kernels.cu  (nvcc)  __global__ and __device__ functions and variables, the includes that
//                       are not torch's, macros, types and constants; and for each kernel K a
//                       launch stub  void kforge_launch_K(dim3, dim3, size_t, cudaStream_t,
//                       K's parameters)  that launches it;
//   host.cpp    (g++)   the torch-facing host functions, with each `K<<<g, b, s, st>>>(args)`
//                       rewritten to `kforge_launch_K(g, b, s, st, args)`, on a precompiled
//                       torch header, with the same macros, types and constants.
//
// What the split does not understand is not split (`why_not` says what), and an extension
// whose split halves do not both build is built whole, as load_inline builds it: template
// kernels launched from the host, a kernel or a __device__ variable the host refers to other
// than by launching it (cudaFuncSetAttribute, cudaMemcpyToSymbol), host code that tests
// __CUDACC__, __NVCC__ or __CUDA_ARCH__ (g++ would build it otherwise than nvcc), namespaces,
// extern "C", unnamed kernel parameters, and any top-level construct not listed above.
#include <string>

namespace kforge {

struct CudaSplit {
  std::string kernels_cu;
  std::string host_cpp;
  std::string why_not;  ///< non-empty: not split, and why
};

CudaSplit SplitCudaSource(const std::string& cuda_cu);

}  // namespace kforge
