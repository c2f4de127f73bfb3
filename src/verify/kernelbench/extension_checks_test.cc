#include "verify/kernelbench/extension_checks.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kforge {
namespace {

bool Has(const std::vector<IntegrityFinding>& findings, const std::string& check, const std::string& text) {
  for (const auto& f : findings)
    if (f.check == check && f.detail.find(text) != std::string::npos) return true;
  return false;
}

TEST(ExtensionChecksTest, TorchHeadersAndTensorPlumbingAreTheExtensionsAbi) {
  const char* source =
      "#include <torch/extension.h>\n"
      "torch::Tensor relu(torch::Tensor x) {\n"
      "  auto xc = x.contiguous();\n"
      "  auto y = torch::empty_like(xc);\n"
      "  const float* in = xc.data_ptr<float>();\n"
      "  float* out = y.data_ptr<float>();\n"
      "  for (int64_t i = 0; i < xc.numel(); ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;\n"
      "  return y;\n"
      "}\n";
  EXPECT_TRUE(ExtensionChecks(source, BackendKind::kCpu).empty());
}

TEST(ExtensionChecksTest, TorchOperatorsAreTheFrameworkComputing) {
  const char* source =
      "#include <torch/extension.h>\n"
      "torch::Tensor f(torch::Tensor a, torch::Tensor b) {\n"
      "  auto c = torch::matmul(a, b);\n"
      "  return c.sum(1);\n"
      "}\n";
  auto findings = ExtensionChecks(source, BackendKind::kCpu);
  EXPECT_TRUE(Has(findings, "wrapper.framework_compute", "torch's matmul()"));
  EXPECT_TRUE(Has(findings, "wrapper.framework_compute", "tensor method .sum()"));
}

TEST(ExtensionChecksTest, OtherNativeFindingsStay) {
  // Not torch's ABI: the native checks still apply (here, a process started from the kernel).
  const char* source =
      "#include <torch/extension.h>\n"
      "#include <cstdlib>\n"
      "torch::Tensor f(torch::Tensor a) {\n"
      "  std::system(\"true\");\n"
      "  return a;\n"
      "}\n";
  auto findings = ExtensionChecks(source, BackendKind::kCpu);
  EXPECT_FALSE(findings.empty());
  for (const auto& f : findings) EXPECT_NE(f.check, "static.forbidden_include") << f.detail;
}

// The worker runs in the interpreter the extension is loaded into: an extension that runs
// Python or sets attributes there could rewrite the worker's reports. Bindings stay allowed.
TEST(ExtensionChecksTest, AnExtensionThatReachesTheInterpreterIsAFinding) {
  for (const char* reach : {"PyRun_SimpleString(\"import sys\");", "PyImport_ImportModule(\"__main__\");",
                            "py::module_::import(\"__main__\").attr(\"input_digests\") = py::none();",
                            "pybind11::exec(\"x = 1\");", "_PyEval_EvalFrameDefault(nullptr, nullptr, 0);"}) {
    const std::string source = std::string("#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor a) {\n  ") +
                               reach + "\n  return a;\n}\n";
    auto findings = ExtensionChecks(source, BackendKind::kCpu);
    EXPECT_TRUE(std::any_of(findings.begin(), findings.end(), [](const IntegrityFinding& f) {
      return f.check == "wrapper.interpreter_access";
    })) << reach;
  }
  const char* bindings =
      "#include <torch/extension.h>\n"
      "torch::Tensor f(torch::Tensor a) { return a; }\n"
      "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
      "  m.def(\"forward\", &f, \"forward\", py::arg(\"a\"));\n"
      "}\n";
  for (const auto& f : ExtensionChecks(bindings, BackendKind::kCpu))
    EXPECT_NE(f.check, "wrapper.interpreter_access") << f.detail;
}

// CUB, CUTLASS and CuTe compile into the candidate's own kernels; cuBLAS and cuDNN compute in
// a vendor's, which the policy judges (reported under KernelBench's rules, failed under strict).
TEST(ExtensionChecksTest, HeaderOnlyDeviceLibrariesAreTheCandidatesAndVendorLibrariesArePlacement) {
  const char* cub =
      "#include <torch/extension.h>\n"
      "#include <cub/cub.cuh>\n"
      "__global__ void k(const float* x, float* y, int n) {\n"
      "  using Reduce = cub::BlockReduce<float, 256>;\n"
      "  __shared__ typename Reduce::TempStorage tmp;\n"
      "  float s = Reduce(tmp).Sum(threadIdx.x < n ? x[threadIdx.x] : 0.f);\n"
      "  if (threadIdx.x == 0) y[0] = s;\n"
      "}\n"
      "torch::Tensor f(torch::Tensor x) { auto y = torch::empty({1}, x.options()); "
      "k<<<1, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel()); return y; }\n";
  EXPECT_TRUE(ExtensionChecks(cub, BackendKind::kCuda).empty());
  const char* cublas =
      "#include <torch/extension.h>\n"
      "#include <cublas_v2.h>\n"
      "__global__ void relu(float* c, int n) { int i = threadIdx.x; if (i < n) c[i] = fmaxf(c[i], 0.f); }\n"
      "torch::Tensor f(torch::Tensor a, torch::Tensor b) {\n"
      "  auto c = torch::empty({a.size(0), b.size(1)}, a.options());\n"
      "  cublasHandle_t h; cublasCreate(&h);\n"
      "  relu<<<1, 256>>>(c.data_ptr<float>(), c.numel());\n"
      "  return c;\n"
      "}\n";
  auto findings = ExtensionChecks(cublas, BackendKind::kCuda);
  EXPECT_TRUE(Has(findings, "static.library_compute", "cublas_v2.h"));
  EXPECT_TRUE(Has(findings, "static.library_compute", "cublasCreate"));
  for (const auto& f : findings) EXPECT_EQ(f.check, "static.library_compute") << f.detail;
}

TEST(ExtensionChecksTest, OwnCodeIsALoopOrAKernelHoweverTheFrameworkIsCalled) {
  EXPECT_TRUE(
      ExtensionHasOwnCode("torch::Tensor f(torch::Tensor x) {\n"
                          "  auto y = torch::empty_like(x);\n"
                          "  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 1;\n"
                          "  return y;\n}\n"));
  EXPECT_TRUE(
      ExtensionHasOwnCode("__global__ void k(float* y) { y[threadIdx.x] = 0; }\n"
                          "torch::Tensor f(torch::Tensor x) { k<<<1, 32>>>(x.data_ptr<float>()); return x; }\n"));
  EXPECT_TRUE(ExtensionHasOwnCode("void f(float* p, int n) { int i = 0; while (i < n) p[i++] = 0; }\n"));
  // Only the framework's operators, spelled any way: no code of the candidate's own.
  EXPECT_FALSE(ExtensionHasOwnCode("torch::Tensor f(torch::Tensor x) { return at::_ops::relu::call(x); }\n"));
  EXPECT_FALSE(ExtensionHasOwnCode("torch::Tensor f(torch::Tensor x) { return RECTIFY(x); }\n"));
  EXPECT_FALSE(
      ExtensionHasOwnCode("torch::Tensor f(torch::Tensor x) {\n"
                          "  auto p = (x > 0).to(x.scalar_type());\n  return x * p;\n}\n"));
  EXPECT_FALSE(ExtensionHasOwnCode("// for (;;) in a comment is not a loop\nint f() { return 0; }\n"));
  // A kernel behind a macro, and an algorithm with a lambda body, are the candidate's code.
  EXPECT_TRUE(
      ExtensionHasOwnCode("#define KERNEL __global__\nKERNEL void k(float* y, int n) { if (threadIdx.x < n) "
                          "y[threadIdx.x] = 0; }\n"));
  EXPECT_TRUE(
      ExtensionHasOwnCode("torch::Tensor f(torch::Tensor x) { auto y = torch::empty_like(x); float* p = "
                          "y.data_ptr<float>(); std::transform(p, p + 4, p, [](float v) { return v > 0 ? v : "
                          "0; }); return y; }\n"));
  // A CUTLASS GEMM instantiated by the candidate is device code compiled into it.
  EXPECT_TRUE(
      ExtensionHasOwnCode("using Gemm = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor>;\n"
                          "torch::Tensor f(torch::Tensor a) { Gemm op; op(); return a; }\n"));
  EXPECT_FALSE(ExtensionHasOwnCode("torch::Tensor f(torch::Tensor a) { cublasSgemm(h, a); return a; }\n"));
}

TEST(ExtensionChecksTest, AnOverlongLineIsScannedWholeWithoutTakingTheEngineDown) {
  // One 200,000-character line, with framework compute at its end: found, and no std::regex
  // sees more than a window of it (core/text.h: RegexWindows).
  const std::string source = "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor a) { auto " +
                             std::string(200000, 'v') + " = 1; ." + std::string(100000, 'w') +
                             "(a); return torch::matmul(a, a); }\n";
  auto findings = ExtensionChecks(source, BackendKind::kCpu);
  EXPECT_TRUE(Has(findings, "wrapper.framework_compute", "torch's matmul()"));
}

}  // namespace
}  // namespace kforge
