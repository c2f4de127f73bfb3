// The experiment runner's device pool on a real GPU: the bundled CUDA study
// (examples/experiments/cuda_recipes.json) with --devices 0, every cell on that device, never
// two at once, and the report's numbers for the one near-miss the recipes repair.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "exec/machine.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using testing::ReadText;

using nlohmann::json;

TEST(ExperimentGpuTest, TheCudaStudyLeasesTheOneGpuToOneCellAtATime) {
  try {
    testing::LiveMachine().Device();
  } catch (const EnvironmentError& e) {
    GTEST_SKIP() << "no GPU here: " << e.what();
  }
  TempDir dir("kforge-experiment-gpu");
  const std::string out = dir.path() + "/study";
  auto r = testing::RunCli({"experiment", "run", testing::ExamplePath("experiments/cuda_recipes.json"), "--out", out,
                            "--devices", "0", "--quiet"},
                           "", 900, {"KFORGE_KB_STATE=" + dir.path() + "/kb"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json status = json::parse(testing::RunCli({"experiment", "status", out, "--json"}).out);
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const auto& c : status["cells"]) {
    ASSERT_EQ(c["state"], "done") << c.dump();
    EXPECT_EQ(c["result"]["device"], "0") << c.dump();
    spans.push_back({c["result"]["started_us"], c["result"]["ended_us"]});
  }
  EXPECT_EQ(spans.size(), 6u);
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].second, spans[i].first);
  const std::string report = ReadText(out + "/report.md");
  EXPECT_NE(report.find("log_softmax_log_of_softmax"), std::string::npos) << report;
  std::cout << report;
}

}  // namespace
}  // namespace kforge
