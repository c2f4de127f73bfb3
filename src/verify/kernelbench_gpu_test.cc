// KernelBench-format CUDA (load_inline) and Triton ModelNew candidates on the GPU, through the
// real CLI: examples/kernelbench/manifest.json's "gpu_cases". Skipped, saying why, without a
// GPU or without a Python whose PyTorch sees it.
#include <gtest/gtest.h>

#include "core/error.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "testing/fakes.h"
#include "testing/kernelbench_cases.h"
#include "testing/testing.h"

namespace kforge {
namespace {

nlohmann::json Cases() { return testing::KernelBenchCases("gpu_cases"); }

class KernelBenchGpuTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    try {
      testing::LiveMachine().Device();
      if (!FindTorch(testing::LiveMachine()).cuda) GTEST_SKIP() << "this machine's PyTorch has no CUDA";
    } catch (const EnvironmentError& e) {
      GTEST_SKIP() << "no GPU or no PyTorch here: " << e.what();
    }
  }
};

TEST_P(KernelBenchGpuTest, VerdictMatchesTheManifest) {
  testing::CheckKernelBenchCase(Cases()[GetParam()], {"--backend", "cuda"});
}

TEST_F(KernelBenchGpuTest, CudaAndTritonCandidatesAreTimedWithCudaEvents) {
  testing::CheckKernelBenchTiming("level1/19_ReLU.py", "cuda/relu.py", {"--backend", "cuda"}, "cuda_event");
  testing::CheckKernelBenchTiming("level1/19_ReLU.py", "triton/relu.py", {"--backend", "cuda"}, "cuda_event");
}

INSTANTIATE_TEST_SUITE_P(Manifest, KernelBenchGpuTest, ::testing::Range(0, static_cast<int>(Cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return testing::KernelBenchCaseName(Cases()[info.param]);
                         });

}  // namespace
}  // namespace kforge
