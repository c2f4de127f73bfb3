#include "exec/runner/quantiles.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(LoopQuantilesTest, NearestRankOverUnsortedTimes) {
  std::vector<double> ns;
  for (int i = 10; i >= 1; --i) ns.push_back(i * 100.0);  // 1000, 900, ..., 100
  LoopQuantiles q = QuantilesOf(ns);
  EXPECT_DOUBLE_EQ(q.min, 100);
  EXPECT_DOUBLE_EQ(q.max, 1000);
  EXPECT_DOUBLE_EQ(q.median, 600);  // rank 0.5 * 9 + 0.5 -> index 5
  EXPECT_DOUBLE_EQ(q.p10, 200);     // index 1
  EXPECT_DOUBLE_EQ(q.p90, 900);     // index 8
  EXPECT_DOUBLE_EQ(q.mean, 550);
  EXPECT_LE(q.min, q.p10);
  EXPECT_LE(q.p90, q.max);
}

TEST(LoopQuantilesTest, NoTimesNoFigures) {
  LoopQuantiles q = QuantilesOf({});
  EXPECT_EQ(q.median, 0);
  EXPECT_EQ(q.max, 0);
}

}  // namespace
}  // namespace kforge
