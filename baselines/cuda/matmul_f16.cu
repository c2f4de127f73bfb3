// Baseline for kforge bench: cuBLAS GemmEx, __half in and out with float accumulation
// (CUBLAS_COMPUTE_32F). Row-major C = A B is column-major C^T = B^T A^T, so the operands are
// passed swapped.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  static cublasHandle_t handle = nullptr;
  if (handle == nullptr && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 2;
  cublasSetStream(handle, (cudaStream_t)stream);
  int m = (int)in[0].shape[0], k = (int)in[0].shape[1], n = (int)in[1].shape[1];
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t st = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, in[1].data, CUDA_R_16F, n, in[0].data,
                                   CUDA_R_16F, k, &zero, out[0].data, CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}
