#include "verify/cuda_split.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/fs.h"
#include "core/subprocess.h"
#include "core/text.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

// load_inline's cuda.cu: its three include lines, then the candidate's CUDA source.
std::string CudaCu(const std::string& source) {
  return "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n" + source;
}

constexpr const char* kRelu = R"(
#include <ATen/cuda/CUDAContext.h>
#define THREADS 256
constexpr int kUnroll = 1;
struct Bounds { long n; };

// The kernel.
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, Bounds b) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < b.n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

__device__ float twice(float v) { return 2 * v; }

__global__ void fill(float* y) { y[threadIdx.x] = twice(1.f); }

torch::Tensor relu_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  long n = x.numel();
  relu_kernel<<<(n + THREADS - 1) / THREADS, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), Bounds{n});
  fill<<<1, 32>>>(y.data_ptr<float>());
  return y;
}
)";

TEST(CudaSplitTest, KernelsGoToNvccAndLaunchesCallStubs) {
  CudaSplit s = SplitCudaSource(CudaCu(kRelu));
  ASSERT_EQ(s.why_not, "");
  // The kernels' half: no torch, the device code, the types and macros, a stub per kernel.
  EXPECT_EQ(s.kernels_cu.find("torch"), std::string::npos) << s.kernels_cu;
  EXPECT_EQ(s.kernels_cu.find("ATen"), std::string::npos) << s.kernels_cu;
  for (const char* want : {"#include <cuda_runtime.h>", "#define THREADS 256", "constexpr int kUnroll", "struct Bounds",
                           "__global__ void relu_kernel", "__device__ float twice",
                           "void kforge_launch_relu_kernel(dim3 kforge_grid, dim3 kforge_block, size_t kforge_shared, "
                           "cudaStream_t kforge_stream, const float* __restrict__ x, float* __restrict__ y, Bounds b) "
                           "{\n  relu_kernel<<<kforge_grid, kforge_block, kforge_shared, kforge_stream>>>(x, y, b);",
                           "void kforge_launch_fill(dim3 kforge_grid, dim3 kforge_block, size_t kforge_shared, "
                           "cudaStream_t kforge_stream, float* y) {"})
    EXPECT_NE(s.kernels_cu.find(want), std::string::npos) << want << "\n" << s.kernels_cu;
  // The host's half: no device code and no launch syntax; the stubs declared after the types.
  EXPECT_EQ(s.host_cpp.find("__global__"), std::string::npos) << s.host_cpp;
  EXPECT_EQ(s.host_cpp.find("__device__"), std::string::npos) << s.host_cpp;
  EXPECT_EQ(s.host_cpp.find("<<<"), std::string::npos) << s.host_cpp;
  for (const char* want : {"#include <ATen/cuda/CUDAContext.h>", "#define THREADS 256", "struct Bounds",
                           "kforge_launch_relu_kernel((n + THREADS - 1) / THREADS, THREADS, 0, "
                           "at::cuda::getCurrentCUDAStream(), x.data_ptr<float>(), y.data_ptr<float>(), Bounds{n});",
                           "kforge_launch_fill(1, 32, 0, 0, y.data_ptr<float>());"})
    EXPECT_NE(s.host_cpp.find(want), std::string::npos) << want << "\n" << s.host_cpp;
  EXPECT_LT(s.host_cpp.find("struct Bounds"), s.host_cpp.find("void kforge_launch_relu_kernel("));
}

TEST(CudaSplitTest, WhatTheSplitDoesNotUnderstandIsBuiltWhole) {
  const std::pair<const char*, const char*> cases[] = {
      {"__global__ void k(float* y) {}\nvoid f(float* y) { cudaFuncSetAttribute(k, "
       "cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 16); k<<<1, 1>>>(y); }",
       "the host refers to k other than by launching it"},
      {"template <typename T> __global__ void k(T* y) {}\nvoid f(float* y) { k<float><<<1, 1>>>(y); }",
       "a launch of k<float>"},
      {"__constant__ float c[4];\n__global__ void k(float* y) { y[0] = c[0]; }\n"
       "void f(float* y, float* h) { cudaMemcpyToSymbol(c, h, 16); k<<<1, 1>>>(y); }",
       "the host refers to c"},
      {"namespace n { __global__ void k() {} }\nvoid f() { n::k<<<1, 1>>>(); }", "a top-level namespace_definition"},
      {"extern \"C\" __global__ void k() {}", "a top-level linkage_specification"},
      {"__global__ void k(float*) {}\nvoid f(float* y) { k<<<1, 1>>>(y); }", "an unnamed kernel parameter"},
      {"void f() {}", "no __global__ kernel"},
      {"__global__ void k(float* y) {}\nvoid f(float* y) {\n#ifdef __CUDACC__\n  k<<<1, 1>>>(y);\n#endif\n}",
       "host code that tests __CUDACC"},
      {"__global__ void k( {", "the source does not parse"},
  };
  for (auto [source, why] : cases) {
    CudaSplit s = SplitCudaSource(CudaCu(source));
    EXPECT_NE(s.why_not.find(why), std::string::npos) << source << "\n-> " << s.why_not;
    EXPECT_EQ(s.kernels_cu, "");
  }
}

// Every bundled CUDA source (native candidates, which extern "C" keeps whole, and the CUDA
// sources of the KernelBench examples, written to pass and to cheat) and hostile text: the
// split never crashes, and whatever it splits leaves no launch syntax or device code to g++.
TEST(CudaSplitTest, BundledAndHostileSourcesSplitOrSayWhyNot) {
  int split = 0, files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(testing::SourceDir() + "/examples")) {
    std::string ext = entry.path().extension().string(), text, error;
    if (ext != ".cu" && ext != ".py") continue;
    ASSERT_TRUE(TryReadFile(entry.path().string(), &text, &error)) << error;
    if (ext == ".py") {  // a KernelBench candidate's CUDA source: its first string with a kernel
      size_t open = text.find("\"\"\""), close = open == std::string::npos ? open : text.find("\"\"\"", open + 3);
      if (close == std::string::npos || text.substr(open, close - open).find("__global__") == std::string::npos)
        continue;
      text = text.substr(open + 3, close - open - 3);
    }
    ++files;
    CudaSplit s = SplitCudaSource(CudaCu(text));
    if (!s.why_not.empty()) continue;
    ++split;
    EXPECT_EQ(s.host_cpp.find("<<<"), std::string::npos) << entry.path();
    EXPECT_EQ(s.host_cpp.find("__global__"), std::string::npos) << entry.path();
    EXPECT_NE(s.kernels_cu.find("kforge_launch_"), std::string::npos) << entry.path();
  }
  EXPECT_GT(files, 50);
  EXPECT_GE(split, 4);  // the KernelBench CUDA examples
  for (const std::string& hostile :
       {std::string(20000, '{'), std::string(20000, '*'), "__global__ void k(" + std::string(5000, '*') + "x) {}",
        std::string("__global__ void k() {}\nvoid f() { k<<<k<<<1,1>>>(), 1>>>(); }"), std::string("\0\0<<<", 5)}) {
    CudaSplit s = SplitCudaSource(CudaCu(hostile));
    EXPECT_NE(s.why_not, "") << hostile.substr(0, 80);
  }
}

// The kernels' half builds with nvcc and the CUDA runtime alone (no GPU needed to compile).
TEST(CudaSplitTest, TheKernelsHalfCompilesWithoutTorch) {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (!FileExists(nvcc)) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda (nvcc)";
  CudaSplit s = SplitCudaSource(CudaCu(kRelu));
  ASSERT_EQ(s.why_not, "");
  TempDir dir("kforge-split-test");
  WriteFileAtomic(dir.path() + "/kernels.cu", s.kernels_cu);
  SpawnOptions run;
  run.argv = {nvcc,
              "-std=c++17",
              "-Xcompiler",
              "-fPIC",
              "-arch=sm_90",
              "-c",
              dir.path() + "/kernels.cu",
              "-o",
              dir.path() + "/kernels.o"};
  run.output_path = dir.path() + "/log";
  ProcessRunner::Result r = testing::LiveMachine().env().processes().Run(run, 300000);
  EXPECT_TRUE(r.status.ok()) << ReadTextTail(run.output_path, 8192) << "\n" << s.kernels_cu;
}

}  // namespace
}  // namespace kforge
