#include "verify/kernelbench_verdict.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

using nlohmann::json;

KernelBenchVerdict SampleKernelBenchVerdict() {
  KernelBenchVerdict v;
  v.procedure = "KernelBench main";
  v.version = "main";
  v.policy = "benchmark";
  v.python = "/usr/bin/python3";
  v.torch = "2.11.0";
  v.correct = true;
  v.compiled = true;
  v.weights = "same";
  v.judge_seconds = 0.25;
  v.trials = {{"kernelbench_0", 42, true, "", 1e-6, 1e-8}, {"kernelbench_1", 43, false, "output0 has shape [2]", 0, 0}};
  v.measurements["attribution"] = {{"policy", "benchmark"}, {"framework_compute", {{"aten::addmm", 8}}}};
  v.measurements["extensions"] = json::array({json{{"name", "relu"}, {"binding", "thunks"}}});
  return v;
}

TEST(KernelBenchVerdictTest, ItsJsonReadsBackAsTheSameVerdict) {
  const KernelBenchVerdict v = SampleKernelBenchVerdict();
  const json j = v.ToJson();
  EXPECT_EQ(j["correct"], true);
  EXPECT_EQ(j["trials"].size(), 2u);
  EXPECT_EQ(j["trials"][1]["issue"], "output0 has shape [2]");
  EXPECT_EQ(j["attribution"]["framework_compute"]["aten::addmm"], 8);
  EXPECT_FALSE(j.contains("not_given"));
  const KernelBenchVerdict back = KernelBenchVerdict::FromJson(j);
  EXPECT_EQ(back.ToJson(), j);
  EXPECT_EQ(back.trials[0].seed, 42u);
  EXPECT_EQ(back.correct, true);
}

TEST(KernelBenchVerdictTest, NotGivenIsNullWithItsReasonNeverFalse) {
  KernelBenchVerdict v = SampleKernelBenchVerdict();
  v.correct.reset();
  v.not_given = "KernelBench's own trials were not run (--certified-only)";
  const json j = v.ToJson();
  EXPECT_TRUE(j["correct"].is_null());
  EXPECT_EQ(KernelBenchVerdict::FromJson(j).correct, std::nullopt);
  EXPECT_NE(v.SummaryLines().find("not given (KernelBench's own trials were not run"), std::string::npos);
}

TEST(KernelBenchVerdictTest, ARecordWithFieldsOfTheWrongTypeKeepsOnlyTheRightOnes) {
  const KernelBenchVerdict v = KernelBenchVerdict::FromJson(
      {{"correct", "yes"}, {"policy", 3}, {"trials", {{{"trial", "t"}, {"passed", "true"}}, 7}}, {"launches", {1}}});
  EXPECT_EQ(v.correct, std::nullopt);
  EXPECT_EQ(v.policy, "");
  ASSERT_EQ(v.trials.size(), 1u);
  EXPECT_FALSE(v.trials[0].passed);
  EXPECT_EQ(v.measurements["launches"], json::array({1}));
  EXPECT_EQ(KernelBenchVerdict::FromJson(json::array()).ToJson()["correct"], nullptr);
}

TEST(KernelBenchVerdictTest, TheSummarySaysTheProcedureTheCountAndTheFrameworkCompute) {
  const std::string s = SampleKernelBenchVerdict().SummaryLines();
  EXPECT_NE(s.find("KernelBench-compatible verdict (procedure main): correct (1/2 trials within torch.allclose)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("policy: benchmark; framework compute in forward: aten::addmm"), std::string::npos) << s;
}

}  // namespace
}  // namespace kforge
