#include "engine/study_stats.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(StudyStatsTest, PassAtKMatchesHandComputedValues) {
  // n=5, c=2, k=1: c/n.
  EXPECT_DOUBLE_EQ(PassAtK(5, 2, 1), 0.4);
  // n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10.
  EXPECT_NEAR(PassAtK(5, 2, 2), 0.7, 1e-12);
  // n=3, c=1, k=3: every sample drawn, the success among them.
  EXPECT_DOUBLE_EQ(PassAtK(3, 1, 3), 1.0);
  EXPECT_DOUBLE_EQ(PassAtK(3, 0, 2), 0.0);
  // n=10, c=3, k=5: 1 - C(7,5)/C(10,5) = 1 - 21/252.
  EXPECT_NEAR(PassAtK(10, 3, 5), 1 - 21.0 / 252, 1e-12);
}

TEST(StudyStatsTest, FastPCountsCorrectAndFasterOverEverySample) {
  // Five samples: two wrong (no speedup), speedups 0.5, 1.0 and 2.5.
  const std::vector<std::optional<double>> s = {std::nullopt, 0.5, 1.0, std::nullopt, 2.5};
  EXPECT_DOUBLE_EQ(FastP(s, 0), 3.0 / 5);    // the correct share
  EXPECT_DOUBLE_EQ(FastP(s, 1), 1.0 / 5);    // strictly faster: 1.0 is not
  EXPECT_DOUBLE_EQ(FastP(s, 1.5), 1.0 / 5);  // 2.5
  EXPECT_DOUBLE_EQ(FastP(s, 2), 1.0 / 5);
  EXPECT_DOUBLE_EQ(FastP(s, 3), 0.0);
  EXPECT_DOUBLE_EQ(FastP({}, 1), 0.0);
}

TEST(StudyStatsTest, McNemarExactMatchesTheBinomialTail) {
  EXPECT_DOUBLE_EQ(McNemarExactP(0, 0), 1.0);
  // b=0, c=5: 2 * 0.5^5.
  EXPECT_NEAR(McNemarExactP(0, 5), 0.0625, 1e-12);
  // b=1, c=6: 2 * (1 + 7) / 128.
  EXPECT_NEAR(McNemarExactP(1, 6), 0.125, 1e-12);
  EXPECT_NEAR(McNemarExactP(6, 1), 0.125, 1e-12);
  // Balanced: the two-sided value is capped at 1.
  EXPECT_DOUBLE_EQ(McNemarExactP(3, 3), 1.0);
  // b=2, c=10: 2 * (1 + 12 + 66) / 4096.
  EXPECT_NEAR(McNemarExactP(2, 10), 158.0 / 4096, 1e-12);
}

TEST(StudyStatsTest, BonferroniMultipliesAndCaps) {
  EXPECT_DOUBLE_EQ(Bonferroni(0.01, 3), 0.03);
  EXPECT_DOUBLE_EQ(Bonferroni(0.5, 3), 1.0);
  EXPECT_DOUBLE_EQ(Bonferroni(0.2, 0), 0.2);
}

TEST(StudyStatsTest, PairedBootstrapIsSeededAndBracketsTheEstimate) {
  std::vector<double> a = {1, 1, 0, 1, 1, 0, 1, 1}, b = {0, 1, 0, 0, 1, 0, 0, 1};
  Interval i = PairedBootstrap(a, b, 2000, 7);
  EXPECT_DOUBLE_EQ(i.estimate, 3.0 / 8);
  EXPECT_LE(i.low, i.estimate);
  EXPECT_GE(i.high, i.estimate);
  EXPECT_GE(i.low, 0.0);  // no item favours b
  EXPECT_LE(i.high, 1.0);
  Interval again = PairedBootstrap(a, b, 2000, 7);
  EXPECT_EQ(i.low, again.low);
  EXPECT_EQ(i.high, again.high);
  // Identical arms: a point interval at 0.
  Interval same = PairedBootstrap(a, a, 500, 1);
  EXPECT_EQ(same.low, 0);
  EXPECT_EQ(same.high, 0);
  EXPECT_EQ(PairedBootstrap({}, {}, 10, 1).estimate, 0);
}

}  // namespace
}  // namespace kforge
