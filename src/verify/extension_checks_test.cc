#include "verify/extension_checks.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kforge
