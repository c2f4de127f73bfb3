// End-to-end tests of KernelBench tasks: the real kforge binary on the bundled
// KernelBench-format examples (examples/kernelbench/manifest.json says what each must get).
// They need Python with PyTorch and libtorch's headers (Debian's python3-torch and
// libtorch-dev, which scripts/install-deps.sh installs); without them each test is skipped
// and says why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "testing/kernelbench_cases.h"
#include "testing/testing.h"

namespace kforge {
namespace {

bool HaveTorch(std::string* why) {
  if (::access("/usr/lib/python3/dist-packages/torch/include/torch/extension.h", R_OK) == 0) return true;
  *why = "PyTorch's headers are not installed (Debian: python3-torch libtorch-dev)";
  return false;
}

class KernelBenchTest : public ::testing::TestWithParam<int> {};

nlohmann::json Cases() { return testing::KernelBenchCases("cases"); }

TEST_P(KernelBenchTest, VerdictMatchesTheManifest) {
  std::string why;
  if (!HaveTorch(&why)) GTEST_SKIP() << why;
  testing::CheckKernelBenchCase(Cases()[GetParam()], {});
}

INSTANTIATE_TEST_SUITE_P(Manifest, KernelBenchTest, ::testing::Range(0, static_cast<int>(Cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return testing::KernelBenchCaseName(Cases()[info.param]);
                         });

}  // namespace
}  // namespace kforge
