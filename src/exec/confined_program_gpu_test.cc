// The GPU worker's confinement without bubblewrap (the mode GPU machines run in): CUDA starts
// inside it, and a worker cannot read its sibling's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/env.h"
#include "exec/confined_program.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "testing/fakes.h"
#include "testing/kernelbench_cases.h"

namespace kforge {
namespace {

bool Has(const std::vector<std::string>& layers, const char* layer) {
  return std::find(layers.begin(), layers.end(), layer) != layers.end();
}

TEST(ConfinedProgramGpuTest, CudaStartsUnderLandlockAndSeccomp) {
  std::string why;
  if (!testing::HaveCudaTorch(&why)) GTEST_SKIP() << why;
  Machine& machine = testing::LiveMachine();
  ConfinedProgram worker(machine, SandboxLimits{}, /*gpu=*/true);
  ExitStatus status = worker.Run(
      {FindTorch(machine).python, "-c", "import torch; torch.zeros(1, device='cuda').add_(1); print('cuda ok')"},
      {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=."}, 300000);
  std::string out = worker.OutputTail(4000);
  EXPECT_TRUE(status.ok()) << status.Describe() << "\n" << out;
  EXPECT_NE(out.find("cuda ok"), std::string::npos) << out;
  std::vector<std::string> layers = worker.layers();
  std::string named;
  for (const auto& l : layers) named += l + " ";
  if (machine.config().gpu_worker_without.empty()) {
    EXPECT_TRUE(Has(layers, "seccomp")) << named;
    EXPECT_TRUE(Has(layers, "landlock") || Has(layers, "bubblewrap")) << named << "(a kernel without Landlock?)";
  }
}

TEST(ConfinedProgramGpuTest, AGpuWorkerCannotReadItsSiblingsOutput) {
  std::string why;
  if (!testing::HaveCudaTorch(&why)) GTEST_SKIP() << why;
  std::vector<std::string> layers;
  ExitStatus status;
  std::string out = testing::ReadSiblingsOutput(/*gpu=*/true, &layers, &status);
  EXPECT_EQ(out.find("the answer"), std::string::npos) << out;
  EXPECT_FALSE(status.ok()) << out;
}

}  // namespace
}  // namespace kforge
