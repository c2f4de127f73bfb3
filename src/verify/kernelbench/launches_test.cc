#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "verify/kernelbench/verifier.h"

namespace kforge {
namespace {

using nlohmann::json;

std::vector<std::string> LaunchChecks(const json& report, json* kept = nullptr) {
  std::vector<IntegrityFinding> findings;
  json k = KernelBenchLaunchFindings(report, /*completed=*/1, &findings);
  if (kept != nullptr) *kept = k;
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.check);
  return out;
}

TEST(KernelBenchLaunchTest, KernelsOnTheCurrentStreamAreClean) {
  json r = {{"ok", true},
            {"current_stream", 7},
            {"kernels", 2},
            {"other_streams", json::array()},
            {"other_stream_kernels", json::array()}};
  EXPECT_TRUE(LaunchChecks(r).empty());
}

TEST(KernelBenchLaunchTest, NoKernelAndOtherStreamsAreViolations) {
  EXPECT_EQ(LaunchChecks({{"ok", true}, {"kernels", 0}}), std::vector<std::string>{"launch.no_kernel"});
  json kept;
  EXPECT_EQ(LaunchChecks({{"ok", true},
                          {"kernels", 1},
                          {"other_streams", {13}},
                          {"other_stream_kernels", {"relu_kernel(float const*, float*, long)"}}},
                         &kept),
            std::vector<std::string>{"launch.other_stream"});
  EXPECT_EQ(kept["other_stream_kernels"][0], "relu_kernel(float const*, float*, long)");
}

TEST(KernelBenchLaunchTest, AMissingOrFailedAccountFailsClosed) {
  // A forward that raises under the profiler, or a report the candidate's process removed,
  // judged nothing before: now each is a finding.
  json kept;
  EXPECT_EQ(LaunchChecks({{"ok", false}, {"error", "CUPTI_ERROR_NOT_INITIALIZED"}}, &kept),
            std::vector<std::string>{"launch.unaccounted"});
  EXPECT_EQ(kept["ok"], false);
  EXPECT_EQ(kept["error"], "CUPTI_ERROR_NOT_INITIALIZED");
  EXPECT_EQ(LaunchChecks(json()), std::vector<std::string>{"launch.unaccounted"});
  EXPECT_EQ(LaunchChecks(json::array()), std::vector<std::string>{"launch.unaccounted"});
}

TEST(KernelBenchLaunchTest, OneJudgedForwardWithoutKernelsIsNoKernel) {
  // Fallback on some inputs: the kernel ran on most trials, the host computed one.
  EXPECT_EQ(LaunchChecks({{"ok", true}, {"kernels", 9}, {"fewest_kernels", 0}, {"forwards", 10}}),
            std::vector<std::string>{"launch.no_kernel"});
  EXPECT_TRUE(LaunchChecks({{"ok", true}, {"kernels", 10}, {"fewest_kernels", 1}, {"forwards", 10}}).empty());
  EXPECT_EQ(LaunchChecks({{"ok", true}, {"kernels", 10}, {"fewest_kernels", "1"}}),
            std::vector<std::string>{"launch.no_kernel"});  // a typed field of the wrong type counts as none
}

TEST(KernelBenchLaunchTest, HostileReportsAreCutAndTyped) {
  // The report comes from the candidate's own process: wrong types, huge and invalid text.
  json kept;
  std::vector<std::string> checks =
      LaunchChecks({{"ok", true},
                    {"kernels", "many"},
                    {"other_streams", {1}},
                    {"other_stream_kernels", {std::string(100000, 'k'), 42, "\xff\xfe", "a", "b", "c", "d", "e"}},
                    {"extra", "ignored"}},
                   &kept);
  EXPECT_EQ(checks, (std::vector<std::string>{"launch.no_kernel", "launch.other_stream"}));
  EXPECT_EQ(kept["kernels"], 0);
  EXPECT_FALSE(kept.contains("extra"));
  ASSERT_EQ(kept["other_stream_kernels"].size(), 5u);
  EXPECT_LE(kept["other_stream_kernels"][0].get<std::string>().size(), 210u);
  EXPECT_NO_THROW((void)kept.dump());  // valid UTF-8 throughout
  EXPECT_EQ(LaunchChecks({{"ok", "yes"}, {"kernels", 0}}),
            std::vector<std::string>{"launch.unaccounted"});  // "ok" must be true, not truthy
  EXPECT_EQ(LaunchChecks({{"ok", true}}), std::vector<std::string>{"launch.no_kernel"});  // fields missing
}

}  // namespace
}  // namespace kforge
