#include "engine/agreement.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

RunActions Actions(const std::string& task, std::vector<std::string> actions, bool success, int rounds = 1) {
  RunActions r;
  r.task = task;
  r.actions = std::move(actions);
  r.finished = true;
  r.success = success;
  r.reason = success ? "certified" : "round_budget";
  r.rounds = rounds;
  return r;
}

TEST(Agreement, IdenticalSequencesAgreeFully) {
  TaskAgreement t = AgreementOf(
      {Actions("relu", {"adopt a", "finish certified"}, true), Actions("relu", {"adopt a", "finish certified"}, true)});
  EXPECT_DOUBLE_EQ(t.identical_pairs, 1.0);
  EXPECT_DOUBLE_EQ(t.mean_similarity, 1.0);
  EXPECT_DOUBLE_EQ(t.pass_rate, 1.0);
  EXPECT_EQ(t.reasons["certified"], 2);
}

TEST(Agreement, SimilarityIsOneMinusEditDistanceOverTheLongerSequence) {
  TaskAgreement t = AgreementOf({Actions("relu", {"adopt a", "adopt b", "finish certified"}, true, 2),
                                 Actions("relu", {"adopt a", "finish round_budget"}, false, 4)});
  EXPECT_DOUBLE_EQ(t.identical_pairs, 0.0);
  EXPECT_NEAR(t.mean_similarity, 1.0 - 2.0 / 3.0, 1e-12);  // substitute one, drop one
  EXPECT_DOUBLE_EQ(t.pass_rate, 0.5);
  EXPECT_DOUBLE_EQ(t.rounds_mean, 3.0);
  EXPECT_NEAR(t.rounds_sd, std::sqrt(2.0), 1e-12);
}

TEST(PassRates, ADifferenceWithinTwoStandardErrorsIsNoise) {
  // Two tasks, four runs each: 2/4 and 3/4 against 3/4 and 3/4.
  std::vector<RunActions> a, b;
  for (int i = 0; i < 4; ++i) {
    a.push_back(Actions("relu", {}, i < 2));
    a.push_back(Actions("softmax", {}, i < 3));
    b.push_back(Actions("relu", {}, i < 3));
    b.push_back(Actions("softmax", {}, i < 3));
  }
  PassRateComparison c = ComparePassRates(a, b);
  EXPECT_EQ(c.tasks, 2);
  EXPECT_DOUBLE_EQ(c.difference, 0.125);
  const double var = (0.25 / 4 + 0.1875 / 4) + (0.1875 / 4 + 0.1875 / 4);
  EXPECT_NEAR(c.noise_se, std::sqrt(var) / 2, 1e-12);
  EXPECT_TRUE(c.noise_estimable);
  EXPECT_TRUE(c.within_noise);
}

TEST(PassRates, ASweepingDifferenceIsNotNoiseAndOneRunPerTaskCannotTell) {
  std::vector<RunActions> a, b;
  for (int i = 0; i < 8; ++i) {
    a.push_back(Actions("relu", {}, false));
    b.push_back(Actions("relu", {}, true));
  }
  PassRateComparison c = ComparePassRates(a, b);
  EXPECT_DOUBLE_EQ(c.difference, 1.0);
  EXPECT_FALSE(c.within_noise);
  PassRateComparison single = ComparePassRates({Actions("relu", {}, false)}, {Actions("relu", {}, true)});
  EXPECT_FALSE(single.noise_estimable);
  EXPECT_FALSE(single.within_noise);
}

}  // namespace
}  // namespace kforge
