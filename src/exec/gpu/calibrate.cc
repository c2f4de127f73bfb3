#include "exec/gpu/calibrate.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace kforge {
namespace {

/// The cuBLAS entry points calibration needs, from libcublas loaded with dlopen so that the
/// runner itself does not depend on it.
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t) = nullptr;
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
                         cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int,
                         cublasComputeType_t, cublasGemmAlgo_t) = nullptr;

  bool Load(const std::string& configured, std::string* error) {
    void* h = nullptr;
    for (const char* name : {configured.c_str(), "libcublas.so.13", "libcublas.so.12", "libcublas.so"})
      if (name != nullptr && *name && (h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (h == nullptr) {
      *error = "cannot load cuBLAS (libcublas.so.13); set KFORGE_CUBLAS to its path";
      return false;
    }
    create = reinterpret_cast<decltype(create)>(::dlsym(h, "cublasCreate_v2"));
    destroy = reinterpret_cast<decltype(destroy)>(::dlsym(h, "cublasDestroy_v2"));
    set_stream = reinterpret_cast<decltype(set_stream)>(::dlsym(h, "cublasSetStream_v2"));
    set_math_mode = reinterpret_cast<decltype(set_math_mode)>(::dlsym(h, "cublasSetMathMode"));
    gemm = reinterpret_cast<decltype(gemm)>(::dlsym(h, "cublasGemmEx"));
    if (!create || !destroy || !set_stream || !set_math_mode || !gemm) {
      *error = "the loaded cuBLAS lacks an entry point calibration needs";
      return false;
    }
    return true;
  }
};

/// Best time in ms of `reps` runs of `body` on `stream` after `warmup` untimed ones. The
/// best rather than the median: a ceiling is what the device can do.
template <typename F>
float BestMs(cudaStream_t stream, int warmup, int reps, F body) {
  for (int i = 0; i < warmup; ++i) body();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best = 1e30f;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(a, stream);
    body();
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    best = std::min(best, ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

}  // namespace

int CalibrateDevice(const std::string& cublas) {
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  // Copy bandwidth: 1 GiB device to device; bytes moved = read + written.
  const size_t copy_bytes = size_t{1} << 30;
  void *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, copy_bytes) != cudaSuccess || cudaMalloc(&dst, copy_bytes) != cudaSuccess) {
    std::fprintf(stderr, "calibration needs 2 GiB of free device memory\n");
    return 3;
  }
  cudaMemsetAsync(src, 1, copy_bytes, stream);
  float copy_ms =
      BestMs(stream, 3, 20, [&] { cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice, stream); });
  cudaFree(src);
  cudaFree(dst);
  double copy_bw = 2.0 * copy_bytes / (copy_ms * 1e-3);

  Cublas blas;
  std::string error;
  if (!blas.Load(cublas, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 3;
  }
  cublasHandle_t handle;
  if (blas.create(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasCreate failed\n");
    return 3;
  }
  blas.set_stream(handle, stream);
  // Pedantic math: fp32 products stay fp32 (no TF32 tensor cores), bf16 accumulates in fp32.
  blas.set_math_mode(handle, CUBLAS_PEDANTIC_MATH);
  const int n = 8192;
  const size_t elems = static_cast<size_t>(n) * n;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  __nv_bfloat16 *ah = nullptr, *bh = nullptr;
  if (cudaMalloc(&a, elems * 4) != cudaSuccess || cudaMalloc(&b, elems * 4) != cudaSuccess ||
      cudaMalloc(&c, elems * 4) != cudaSuccess || cudaMalloc(&ah, elems * 2) != cudaSuccess ||
      cudaMalloc(&bh, elems * 2) != cudaSuccess) {
    std::fprintf(stderr, "calibration needs 1.1 GiB of free device memory for the matrix products\n");
    return 3;
  }
  // Random-looking data, not zeros: a product of zeros runs faster than real work.
  {
    std::vector<float> host(elems);
    std::vector<__nv_bfloat16> host_bf16(elems);
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < elems; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      host[i] = static_cast<float>(state >> 40) / static_cast<float>(1 << 24) - 0.5f;
      host_bf16[i] = __float2bfloat16(host[i]);
    }
    cudaMemcpy(a, host.data(), elems * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(b, host.data(), elems * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(ah, host_bf16.data(), elems * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(bh, host_bf16.data(), elems * 2, cudaMemcpyHostToDevice);
  }
  const float one = 1.0f, zero = 0.0f;
  float f32_ms = BestMs(stream, 2, 5, [&] {
    blas.gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_32F, n, b, CUDA_R_32F, n, &zero, c, CUDA_R_32F,
              n, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
  });
  blas.set_math_mode(handle, CUBLAS_DEFAULT_MATH);
  float bf16_ms = BestMs(stream, 3, 10, [&] {
    blas.gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, ah, CUDA_R_16BF, n, bh, CUDA_R_16BF, n, &zero, c,
              CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  });
  cudaError_t e = cudaDeviceSynchronize();
  blas.destroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(ah);
  cudaFree(bh);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "calibration failed: %s\n", cudaGetErrorString(e));
    return 3;
  }
  double flops = 2.0 * n * static_cast<double>(n) * n;
  std::printf(
      "{\"copy_bytes_per_s\": %.6e, \"fp32_matmul_flops_per_s\": %.6e, \"bf16_matmul_flops_per_s\": %.6e, "
      "\"method\": {\"copy\": \"cudaMemcpyAsync D2D 1 GiB, bytes read+written, best of 20\", "
      "\"fp32\": \"cublasGemmEx 8192^3 CUBLAS_COMPUTE_32F_PEDANTIC (no TF32), best of 5\", "
      "\"bf16\": \"cublasGemmEx 8192^3 bf16 in, fp32 accumulate, best of 10\"}}\n",
      copy_bw, flops / (f32_ms * 1e-3), flops / (bf16_ms * 1e-3));
  return 0;
}

}  // namespace kforge
