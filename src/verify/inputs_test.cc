#include "verify/inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace kforge {
namespace {

std::string Hex(const std::vector<double>& v) {
  std::string s;
  char buf[64];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "%a ", x);
    s += buf;
  }
  return s;
}

/// A verdict's seed reproduces its inputs on any machine: these are the first float32
/// inputs of seed 42 (after rounding to float32), pinned.
TEST(FillInput, SeedGivesTheSameInputsEverywhere) {
  float buf[4];
  EXPECT_EQ(Hex(FillInput(Distribution::kNormal, 42, DType::kFloat32, buf, {4})),
            "-0x1.73d2fep-1 -0x1.b08802p-3 0x1.c5e22p-3 0x1.0ba8bcp-1 ");
  EXPECT_EQ(Hex(FillInput(Distribution::kHeavyTailed, 42, DType::kFloat32, buf, {4})),
            "-0x1.ad699ep+1 0x1.b0eaeep-1 0x1.e07aaap+0 -0x1.5e7a26p+0 ");
  EXPECT_EQ(Hex(FillInput(Distribution::kUniform, 42, DType::kFloat32, buf, {4})),
            "-0x1.aa1fd4p-1 -0x1.efb268p-3 0x1.70ba9ap-2 0x1.b2e2b6p-1 ");
}

// verify --determinism relies on this: the first k rows of a batch are the batch of k.
TEST(FillInput, NormalInputsOfFewerRowsAreThePrefixOfMoreRows) {
  std::vector<float> big(8 * 33), small(3 * 33);
  FillInput(Distribution::kNormal, 7, DType::kFloat32, big.data(), {8, 33});
  FillInput(Distribution::kNormal, 7, DType::kFloat32, small.data(), {3, 33});
  EXPECT_TRUE(std::equal(small.begin(), small.end(), big.begin()));
}

TEST(FillInput, ValuesAreWhatTheBufferHolds) {
  float buf[64];
  auto v = FillInput(Distribution::kNormal, 7, DType::kFloat32, buf, {8, 8});
  ASSERT_EQ(v.size(), 64u);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], static_cast<double>(buf[i]));
}

TEST(FillInput, RowPatternsRunAlongTheLastDimension) {
  float buf[12];
  auto v = FillInput(Distribution::kSignedRows, 3, DType::kFloat32, buf, {3, 4});
  for (int c = 0; c < 4; ++c) {
    EXPECT_GT(v[c], 0);
    EXPECT_LT(v[4 + c], 0);
    EXPECT_GT(v[8 + c], 0);
  }
  auto k = FillInput(Distribution::kConstantRows, 3, DType::kFloat32, buf, {3, 4});
  for (int r = 0; r < 3; ++r)
    for (int c = 1; c < 4; ++c) EXPECT_EQ(k[r * 4 + c], k[r * 4]);
}

/// rising_keys: with q all ones, key j's score is j times a gap of 150-300 in bfloat16 as in float, so every
/// gap stays far beyond exp's float range (a running max that skips the last key overflows).
TEST(FillInput, RisingKeysGiveScoresFarApart) {
  const int64_t seq = 128, d = 33;
  std::vector<uint16_t> q(seq * d), k(seq * d);
  std::vector<double> qv = FillInput(Distribution::kRisingKeys, 1, DType::kBFloat16, q.data(), {1, 1, seq, d}, 0);
  std::vector<double> kv = FillInput(Distribution::kRisingKeys, 1, DType::kBFloat16, k.data(), {1, 1, seq, d}, 1);
  double previous = -1e300;
  for (int64_t j = 0; j < seq; ++j) {
    double score = 0;
    for (int64_t e = 0; e < d; ++e) score += qv[e] * kv[j * d + e];
    score /= std::sqrt(static_cast<double>(d));
    EXPECT_GT(score - previous, 150) << "key " << j;
    previous = score;
  }
}

}  // namespace
}  // namespace kforge
