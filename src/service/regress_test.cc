#include "service/regress.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

Measurement Pass(double ms, const std::string& sha = "abc") { return {"pass", "L2", sha, ms, "cases", ""}; }

class RegressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("kforge-regress");
    golden_ = dir_->path() + "/golden.json";
    WriteFileAtomic(golden_, R"({"kforge_golden": 1, "noise_band": 0.25,
      "kernels": [{"task": "relu", "candidate": "k/relu.cc"}, {"task": "t/softmax.json", "candidate": "k/softmax.cc"}]})");
  }
  /// A fake timer: each kernel's measurement comes from `now` by task.
  MeasureFn Fake() {
    return [this](const GoldenKernel& k) {
      seen_.push_back(k.candidate_path);
      return now_.at(k.task);
    };
  }
  std::unique_ptr<TempDir> dir_;
  std::string golden_;
  std::map<std::string, Measurement> now_ = {{"relu", Pass(1.0)}, {"t/softmax.json", Pass(2.0)}};
  std::vector<std::string> seen_;
};

TEST_F(RegressTest, NewKernelsAreStaleUntilAcceptedThenTheSameMeasurementsPass) {
  RegressReport first = Regress(golden_, Fake(), false);
  EXPECT_EQ(first.status(), RegressStatus::kStale);
  EXPECT_EQ(seen_[0], dir_->path() + "/k/relu.cc");  // paths resolve against the golden file
  RegressReport accepted = Regress(golden_, Fake(), true);
  EXPECT_TRUE(accepted.accepted);
  EXPECT_EQ(accepted.status(), RegressStatus::kSame);
  Golden g = LoadGolden(golden_);
  ASSERT_TRUE(g.kernels[1].expect.has_value());
  EXPECT_EQ(g.kernels[1].task, "t/softmax.json");  // written back as it was written
  EXPECT_DOUBLE_EQ(g.kernels[1].expect->median_ms, 2.0);
  EXPECT_EQ(Regress(golden_, Fake(), false).status(), RegressStatus::kSame);
}

TEST_F(RegressTest, ALostVerdictIsARegression) {
  Regress(golden_, Fake(), true);
  now_["relu"] = {"wrong_result", "L1", "abc", 0, "", "output 0 differs at [3]"};
  RegressReport r = Regress(golden_, Fake(), false);
  EXPECT_EQ(r.status(), RegressStatus::kRegressed);
  EXPECT_EQ(r.kernels[0].status, RegressStatus::kRegressed);
  EXPECT_NE(r.kernels[0].reasons[0].find("verdict lost"), std::string::npos);
  EXPECT_EQ(r.kernels[1].status, RegressStatus::kSame);
}

TEST_F(RegressTest, TwiceAsSlowIsARegressionAndNoiseWithinTheBandIsNot) {
  Regress(golden_, Fake(), true);
  now_["relu"] = Pass(1.2);  // within 25%
  EXPECT_EQ(Regress(golden_, Fake(), false).status(), RegressStatus::kSame);
  now_["t/softmax.json"] = Pass(4.0);  // 2x
  RegressReport r = Regress(golden_, Fake(), false);
  EXPECT_EQ(r.status(), RegressStatus::kRegressed);
  EXPECT_NE(r.kernels[1].reasons[0].find("slower"), std::string::npos);
}

TEST_F(RegressTest, ChangedBytesAFixOrASpeedupMakeTheExpectationsStale) {
  now_["relu"] = {"wrong_result", "L1", "abc", 0, "", ""};
  Regress(golden_, Fake(), true);
  now_["relu"] = Pass(1.0);  // fixed
  EXPECT_EQ(Regress(golden_, Fake(), false).kernels[0].status, RegressStatus::kStale);
  Regress(golden_, Fake(), true);
  now_["relu"] = Pass(1.0, "def");  // edited
  EXPECT_EQ(Regress(golden_, Fake(), false).kernels[0].status, RegressStatus::kStale);
  now_["relu"] = Pass(0.4);  // much faster
  EXPECT_EQ(Regress(golden_, Fake(), false).kernels[0].status, RegressStatus::kStale);
}

TEST_F(RegressTest, GoldenKernelsAreCheckedOnTheFullSetSoAFullOnlyNearMissIsAVerdictLost) {
  // A near-miss that passes the light set and fails the full one (the max-init-0 softmax).
  bool near_miss = false;
  auto measure = [&](const GoldenKernel& k) {
    if (near_miss && k.full) return Measurement{"wrong_result", "L1", "new", 0, "", "all-negative rows differ"};
    return Pass(1.0, near_miss ? "new" : "abc");
  };
  Regress(golden_, measure, true);
  near_miss = true;
  RegressReport r = Regress(golden_, measure, false);
  EXPECT_EQ(r.kernels[0].status, RegressStatus::kRegressed);
  EXPECT_NE(r.kernels[0].reasons[0].find("verdict lost"), std::string::npos) << r.kernels[0].reasons[0];
  EXPECT_TRUE(LoadGolden(golden_).kernels[0].full);
}

/// A timer that answers each kernel from a queue of times (the last one repeats).
MeasureFn Timer(std::map<std::string, std::vector<double>>* times, int* calls) {
  return [=](const GoldenKernel& k) {
    ++*calls;
    std::vector<double>& q = (*times)[k.task];
    const double ms = q.front();
    if (q.size() > 1) q.erase(q.begin());
    return Pass(ms);
  };
}

TEST_F(RegressTest, CpuTimingNoiseNeverFlipsTheExitCode) {
  int calls = 0;
  std::map<std::string, std::vector<double>> times = {{"relu", {1.0, 1.1, 0.9}}, {"t/softmax.json", {2.0}}};
  Regress(golden_, Timer(&times, &calls), true);
  EXPECT_DOUBLE_EQ(LoadGolden(golden_).kernels[0].expect->median_ms, 1.0);  // the median of 3 runs

  // One fast outlier, then ordinary runs: measured again, judged on the median.
  times = {{"relu", {0.6, 1.05}}, {"t/softmax.json", {2.0}}};
  RegressReport r = Regress(golden_, Timer(&times, &calls), false);
  EXPECT_EQ(r.status(), RegressStatus::kSame) << r.Text();

  // Runs on both sides of the band: too noisy to judge, said, and not counted.
  times = {{"relu", {0.5, 1.0, 0.55, 0.6, 0.5}}, {"t/softmax.json", {2.0}}};
  calls = 0;
  r = Regress(golden_, Timer(&times, &calls), false);
  EXPECT_EQ(r.status(), RegressStatus::kSame) << r.Text();
  EXPECT_EQ(calls, 5 + 1);
  ASSERT_EQ(r.kernels[0].reasons.size(), 1u);
  EXPECT_NE(r.kernels[0].reasons[0].find("too noisy to judge"), std::string::npos) << r.kernels[0].reasons[0];

  // Every run slower: a regression, however many runs it took to be sure.
  times = {{"relu", {2.0, 2.1, 1.9}}, {"t/softmax.json", {2.0}}};
  r = Regress(golden_, Timer(&times, &calls), false);
  EXPECT_EQ(r.kernels[0].status, RegressStatus::kRegressed) << r.Text();
  EXPECT_NE(r.kernels[0].reasons.back().find("every one of 5 runs"), std::string::npos) << r.Text();
}

TEST_F(RegressTest, AMalformedGoldenFileIsRefusedWithTheFieldNamed) {
  for (const char* bad : {"[]", R"({"kernels": []})", R"({"kforge_golden": 1})",
                          R"({"kforge_golden": 1, "noise_band": -1, "kernels": []})",
                          R"({"kforge_golden": 1, "kernels": [{"task": 3, "candidate": "x"}]})",
                          R"({"kforge_golden": 1, "kernels": [{"task": "a", "candidate": "x", "backend": "tpu"}]})"}) {
    WriteFileAtomic(golden_, bad);
    EXPECT_THROW(Regress(golden_, Fake(), false), UsageError) << bad;
  }
  EXPECT_TRUE(seen_.empty());
}

}  // namespace
}  // namespace kforge
