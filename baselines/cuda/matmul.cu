// Baseline for kforge bench: cuBLAS SGEMM, fp32 with pedantic math (no TF32). Row-major
// C = A B is column-major C^T = B^T A^T, so the operands are passed swapped.
#include <cublas_v2.h>
#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void* stream) {
  static cublasHandle_t handle = nullptr;
  if (handle == nullptr && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 2;
  cublasSetStream(handle, (cudaStream_t)stream);
  cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH);
  int m = (int)in[0].shape[0], k = (int)in[0].shape[1], n = (int)in[1].shape[1];
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t st = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, (const float*)in[1].data, n,
                                  (const float*)in[0].data, k, &zero, (float*)out[0].data, n);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}
