#include "verify/compare.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kforge {
namespace {

Tolerance Tol(double atol, double rtol) {
  Tolerance t;
  t.atol = atol;
  t.rtol = rtol;
  return t;
}

struct Fixture {
  TensorSpec spec{"y", DType::kFloat32, {"n"}};
  std::vector<float> got;
  std::vector<double> ref;
  CompareResult Run(Tolerance tol = Tol(1e-6, 1e-5), int64_t k = 1) {
    CompareInput in;
    in.spec = &spec;
    in.shape = {static_cast<int64_t>(ref.size())};
    in.got = got.data();
    in.reference = &ref;
    in.tolerance = tol;
    in.reduction_size = k;
    return CompareOutput(in);
  }
};

TEST(CompareTest, ExactMatchPasses) {
  Fixture f{.got = {1, 2, 3}, .ref = {1, 2, 3}};
  EXPECT_TRUE(f.Run().passed());
}

TEST(CompareTest, NaNPositionsMustMatch) {
  Fixture f{.got = {0, NAN, 3}, .ref = {NAN, NAN, 3}};
  CompareResult r = f.Run();
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.nan_inf_mismatches, 1);
  EXPECT_EQ(r.first[0].index, 0);
}

TEST(CompareTest, InfSignMatters) {
  Fixture f{.got = {INFINITY, -INFINITY}, .ref = {-INFINITY, -INFINITY}};
  EXPECT_EQ(f.Run().nan_inf_mismatches, 1);
}

TEST(CompareTest, PoisonIsUnwrittenNotNaN) {
  Fixture f{.got = {0, 0, 0, 0}, .ref = {1, 2, 3, 4}};
  PoisonOutput(DType::kFloat32, f.got.data(), 4);
  f.got[0] = 1;
  f.got[1] = 2;
  CompareResult r = f.Run();
  EXPECT_EQ(r.unwritten, 2);
  EXPECT_EQ(r.first[0].index, 2);
  // A NaN produced by arithmetic is not mistaken for poison.
  float computed_nan = std::sqrt(-1.0f);
  EXPECT_FALSE(IsPoison(DType::kFloat32, &computed_nan, 0));
}

TEST(CompareTest, ToleranceScalesWithReductionLength) {
  Fixture f{.got = {1.0f + 2e-5f}, .ref = {1.0}};
  EXPECT_FALSE(f.Run(Tol(1e-6, 1e-5), 1).passed());
  EXPECT_TRUE(f.Run(Tol(1e-6, 1e-5), 10000).passed());  // sqrt(1e4) * 1e-6 * rms(1) = 1e-4
}

TEST(CompareTest, ReportsErrorStatistics) {
  Fixture f{.got = {1, 2, 3.5}, .ref = {1, 2, 3}};
  CompareResult r = f.Run();
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 0.5);
  EXPECT_NEAR(r.max_rel_error, 0.5 / 3, 1e-12);
  EXPECT_NEAR(r.rel_l2_error, 0.5 / std::sqrt(14.0), 1e-12);
  EXPECT_EQ(r.first[0].coords, std::vector<int64_t>{2});
}

TEST(CompareTest, ArgmaxAcceptsAnyMaximalIndex) {
  TensorSpec spec{"y", DType::kInt64, {"rows"}};
  std::vector<double> x = {1, 5, 5, 0, /* row 2 */ -1, -2, -3, -4};
  std::vector<double> ref = {1, 0};
  std::vector<int64_t> got = {2, 0};
  CompareInput in;
  in.spec = &spec;
  in.shape = {2};
  in.got = got.data();
  in.reference = &ref;
  in.comparison = Comparison::kArgmax;
  in.argmax_source = &x;
  in.argmax_cols = 4;
  EXPECT_TRUE(CompareOutput(in).passed());
  got = {3, 0};
  EXPECT_EQ(CompareOutput(in).mismatches, 1);
  got = {1, 99};  // out of range is a mismatch, not a crash
  EXPECT_EQ(CompareOutput(in).mismatches, 1);
}

TEST(CompareTest, UnravelIsRowMajor) {
  EXPECT_EQ(Unravel(7, {2, 3, 4}), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(Unravel(23, {2, 3, 4}), (std::vector<int64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

TEST(CompareTest, OneHugeValueCannotWidenTheToleranceElsewhere) {
  // A relu that zeroes every ordinary element whenever a huge value is present.
  Fixture f;
  for (int i = 0; i < 1000; ++i) {
    double v = 0.5 + (i % 7) * 0.25;
    f.ref.push_back(v);
    f.got.push_back(0.0f);
  }
  f.ref[500] = 1.7e38;
  f.got[500] = 1.7e38f;
  CompareResult r = f.Run(Tol(1e-5, 1e-5));
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.mismatches, 999);
  EXPECT_LT(r.allowed_abs, 1e-3);
}

TEST(CompareTest, ToleranceScaleIgnoresOutliersButNotOrdinaryValues) {
  std::vector<double> ref(100, 2.0);
  EXPECT_DOUBLE_EQ(ToleranceScale(ref), 2.0);
  ref[3] = 1e30;
  ref[7] = -INFINITY;
  EXPECT_DOUBLE_EQ(ToleranceScale(ref), 2.0);
  std::vector<double> large(100, 1e30);  // all large: the scale is large
  EXPECT_DOUBLE_EQ(ToleranceScale(large), 1e30);
  EXPECT_EQ(ToleranceScale({}), 0.0);
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

/// A 1x1 matmul output 0.731 that is the sum of terms of norm 40 (heavy-tailed inputs,
/// cancelling): the H200's cuBLAS result was 5.2e-5 off, within the float error of terms
/// that large but 1.7 times what rms(reference) alone allowed.
TEST(CompareTest, SumsOfLargeTermsAreHeldToTheirTermsNotTheirSize) {
  TensorSpec spec{"c", DType::kFloat32, {"1"}};
  std::vector<double> ref = {0.7311866};
  std::vector<double> norm = {40.0};
  float got = 0.7311351f;
  CompareInput in;
  in.spec = &spec;
  in.shape = {1};
  in.got = &got;
  in.reference = &ref;
  in.tolerance = Tolerance{1e-6, 1e-5, 0, ""};
  in.reduction_size = 1024;
  EXPECT_FALSE(CompareOutput(in).passed()) << "without the terms' norm";
  in.term_norm = &norm;
  EXPECT_TRUE(CompareOutput(in).passed());
  got = 0.74f;  // a wrong result is still far outside
  EXPECT_FALSE(CompareOutput(in).passed());
}

}  // namespace
}  // namespace kforge
