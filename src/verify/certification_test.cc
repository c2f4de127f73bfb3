#include "verify/certification.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/task.h"
#include "testing/testing.h"
#include "verify/inputs.h"

namespace kforge {
namespace {

Task Load(const std::string& name) { return LoadTaskFile(testing::SourceDir() + "/tasks/" + name + ".json"); }

bool Has(const std::vector<Distribution>& v, Distribution d) { return std::find(v.begin(), v.end(), d) != v.end(); }

TEST(CertificationTest, FixedInputsFollowTheCategoryAndTheTaskFile) {
  Task softmax = Load("softmax");
  auto fixed = FixedInputsFor(softmax);
  EXPECT_TRUE(Has(fixed, Distribution::kNegativeOffset));
  EXPECT_TRUE(Has(fixed, Distribution::kConstantRows));
  Task relu = Load("relu");
  EXPECT_FALSE(Has(FixedInputsFor(relu), Distribution::kConstantRows));
  relu.fixed_inputs_add = {Distribution::kSortedRows};
  relu.fixed_inputs_remove = {Distribution::kIntegers};
  fixed = FixedInputsFor(relu);
  EXPECT_TRUE(Has(fixed, Distribution::kSortedRows));
  EXPECT_FALSE(Has(fixed, Distribution::kIntegers));
}

TEST(CertificationTest, RandomShapesUseTheCategorysFirstFixedInput) {
  EXPECT_EQ(RandomShapeCases(Load("softmax"), 5, 1).at(0).distributions.back(), Distribution::kNegativeOffset);
  // q.k of two negative_offset vectors is large and positive: attention gets signed rows.
  Task attention = Load("attention");
  EXPECT_FALSE(Has(FixedInputsFor(attention), Distribution::kNegativeOffset));
  EXPECT_EQ(RandomShapeCases(attention, 5, 1).at(0).distributions.back(), Distribution::kSignedRows);
}

TEST(CertificationTest, FixedInputsRunOnTwoFullCasesWhateverTheSeed) {
  Task softmax = Load("softmax");
  auto cases = FixedInputCases(softmax);
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& c : cases) {
    EXPECT_EQ(c.name.rfind("fixed:", 0), 0u);
    EXPECT_EQ(c.distributions, FixedInputsFor(softmax));
  }
}

TEST(CertificationTest, RandomShapesAreReproducibleBoundedAndUnpublished) {
  for (const char* name : {"softmax", "conv2d", "maxpool2d", "attention", "matmul", "relu"}) {
    Task t = Load(name);
    auto a = RandomShapeCases(t, 42, 2), b = RandomShapeCases(t, 42, 2), c = RandomShapeCases(t, 43, 2);
    ASSERT_EQ(a.size(), 2u) << name;
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].params, b[i].params) << name;
    bool differs = false;
    for (size_t i = 0; i < a.size() && i < c.size(); ++i) differs |= a[i].params != c[i].params;
    EXPECT_TRUE(differs) << name << ": another seed, other shapes";
    for (const auto& k : a) {
      for (const auto& f : t.full) EXPECT_NE(f.params, k.params) << name;
      for (const auto* list : {&t.inputs, &t.outputs})
        for (const auto& spec : *list)
          for (int64_t d : ResolveShape(spec, k.params)) EXPECT_GT(d, 0) << name << " " << k.name;
      for (const auto& [p, v] : k.params) {
        int64_t lo = INT64_MAX, hi = 0;
        for (const auto& f : t.full) lo = std::min(lo, f.params.at(p)), hi = std::max(hi, f.params.at(p));
        EXPECT_GE(v, lo) << name << " " << p;
        EXPECT_LE(v, hi) << name << " " << p;
      }
    }
  }
}

TEST(CertificationTest, RowPatternsHoldOnEveryRow) {
  const std::vector<int64_t> shape = {6, 33};
  std::vector<float> buf(6 * 33);
  auto rows = [&](Distribution d) { return FillInput(d, 7, DType::kFloat32, buf.data(), shape); };
  auto v = rows(Distribution::kConstantRows);
  for (int r = 0; r < 6; ++r)
    for (int c = 1; c < 33; ++c) EXPECT_EQ(v[r * 33 + c], v[r * 33]);
  v = rows(Distribution::kSignedRows);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 33; ++c) EXPECT_EQ(v[r * 33 + c] > 0, r % 2 == 0);
  v = rows(Distribution::kSortedRows);
  for (int r = 0; r < 6; ++r)
    for (int c = 1; c < 33; ++c)
      EXPECT_TRUE(r % 2 == 0 ? v[r * 33 + c - 1] <= v[r * 33 + c] : v[r * 33 + c - 1] >= v[r * 33 + c]);
  v = rows(Distribution::kOutlierRows);
  for (int r = 0; r < 6; ++r) {
    int huge = 0;
    for (int c = 0; c < 33; ++c) huge += std::fabs(v[r * 33 + c]) == 1e4;
    EXPECT_EQ(huge, 1) << r;
  }
  v = rows(Distribution::kNegativeOffset);
  for (double x : v) EXPECT_LT(x, -90);
  v = rows(Distribution::kTies);
  for (double x : v) EXPECT_TRUE(x == std::round(x) && std::fabs(x) <= 2);
}

}  // namespace
}  // namespace kforge
