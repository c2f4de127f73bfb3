// End-to-end tests of KernelBench tasks: the real kforge binary on the bundled
// KernelBench-format examples (examples/kernelbench/manifest.json says what each must get).
// They need Python with PyTorch and libtorch's headers (Debian's python3-torch and
// libtorch-dev, which scripts/install-deps.sh installs); without them each test is skipped
// and says why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>

#include <nlohmann/json.hpp>

#include "testing/testing.h"

namespace kforge {
namespace {

using testing::RunCli;
using testing::SourceDir;

bool HaveTorch(std::string* why) {
  if (::access("/usr/lib/python3/dist-packages/torch/include/torch/extension.h", R_OK) == 0) return true;
  *why = "PyTorch's headers are not installed (Debian: python3-torch libtorch-dev)";
  return false;
}

class KernelBenchTest : public ::testing::TestWithParam<int> {};

nlohmann::json Cases() { return testing::ReadJson(SourceDir() + "/examples/kernelbench/manifest.json")["cases"]; }

TEST_P(KernelBenchTest, VerdictMatchesTheManifest) {
  std::string why;
  if (!HaveTorch(&why)) GTEST_SKIP() << why;
  const nlohmann::json c = Cases()[GetParam()];
  std::string dir = SourceDir() + "/examples/kernelbench/";
  std::vector<std::string> args = {"verify", dir + c["reference"].get<std::string>(),
                                   dir + c["candidate"].get<std::string>(), "--json", "--seed", "7"};
  if (c.value("full", false)) args.push_back("--full");
  if (c.contains("timeout")) args.insert(args.end(), {"--timeout", c["timeout"].get<std::string>()});
  auto r = RunCli(args, "", 900);
  SCOPED_TRACE(c.dump() + "\n" + r.out.substr(0, 4000) + "\n" + r.err.substr(0, 4000));
  if (c.contains("exit")) {
    EXPECT_EQ(r.exit_code, c["exit"].get<int>());
    EXPECT_NE(r.err.find(c["error"].get<std::string>()), std::string::npos);
    return;
  }
  bool passed = c["passed"].get<bool>();
  EXPECT_EQ(r.exit_code, passed ? 0 : 1);
  nlohmann::json v = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v["passed"], passed);
  ASSERT_TRUE(v["kernelbench"].is_object());
  if (c.contains("kernelbench_correct")) EXPECT_EQ(v["kernelbench"]["correct"], c["kernelbench_correct"]);
  if (c.contains("failure_class")) EXPECT_EQ(v["failure_class"], c["failure_class"]);
  if (c.contains("check")) {
    bool found = false;
    for (const auto& f : v["integrity"]) found = found || f["check"] == c["check"];
    EXPECT_TRUE(found) << "no integrity finding " << c["check"];
  }
  if (passed) {
    EXPECT_EQ(v["level"], c.value("full", false) ? "L2_full" : "L2_light");
    EXPECT_EQ(v["kernelbench"]["trials"].size(), 5u);
  }
}

INSTANTIATE_TEST_SUITE_P(Manifest, KernelBenchTest, ::testing::Range(0, static_cast<int>(Cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           nlohmann::json c = Cases()[info.param];
                           std::string name = c["candidate"].get<std::string>() + "_on_" +
                                              c["reference"].get<std::string>();
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace kforge
