// Forensics patterns and symptoms on verdicts built by hand: each names where the wrong
// elements are and what they look like, from the evidence alone.
#include "verify/forensics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/task.h"
#include "testing/testing.h"

namespace kforge {
namespace {

Task Softmax() { return LoadTaskFile(testing::SourceDir() + "/tasks/softmax.json"); }

/// A failing trial of softmax on [rows, cols] whose wrong elements are `bad` (flat
/// indices), each got = expected * scale + offset.
CaseEvidence Trial(TrialSet set, const std::string& dist, int64_t rows, int64_t cols, const std::vector<int64_t>& bad,
                   double scale = 1.0, double offset = 0.5) {
  CaseEvidence c;
  c.set = set;
  c.name = std::to_string(rows) + "_" + std::to_string(cols);
  c.params = {{"rows", rows}, {"cols", cols}};
  c.distribution = dist;
  c.outcome = "returned";
  OutputEvidence o;
  o.name = "y";
  o.compare.elements = rows * cols;
  o.compare.mismatches = static_cast<int64_t>(bad.size());
  o.compare.mismatch_indices = bad;
  o.compare.worst_ratio = 1000;
  for (size_t i = 0; i < bad.size() && i < 16; ++i) {
    const double expected = 0.25 + 0.01 * static_cast<double>(i);
    o.compare.samples.push_back({bad[i], {bad[i] / cols, bad[i] % cols}, expected * scale + offset, expected});
  }
  c.failure = bad.empty() ? FailureClass::kNone : FailureClass::kWrongResult;
  c.outputs.push_back(o);
  return c;
}

Verdict Failing(std::vector<CaseEvidence> cases) {
  Verdict v;
  v.failure = FailureClass::kWrongResult;
  v.cases = std::move(cases);
  return v;
}

std::vector<int64_t> Tail(int64_t rows, int64_t cols, int64_t width) {
  std::vector<int64_t> idx;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = cols - width; c < cols; ++c) idx.push_back(r * cols + c);
  return idx;
}

TEST(Forensics, MissingTailOfEveryRowIsARowTailOfTheLastPartialBlock) {
  Forensics f = Diagnose(Softmax(), Failing({Trial(TrialSet::kLight, "normal", 8, 100, Tail(8, 100, 4))}));
  EXPECT_TRUE(f.Has("row_tail")) << f.Text();
  EXPECT_EQ(f.tail_width, 4);
  EXPECT_TRUE(f.Has("last_partial_block")) << f.Text();
  EXPECT_EQ(f.block, 8);  // 100 % 8 == 4
}

TEST(Forensics, EveryElementWrongByAConstantScale) {
  std::vector<int64_t> all;
  for (int64_t i = 0; i < 4 * 33; ++i) all.push_back(i);
  Forensics f = Diagnose(Softmax(), Failing({Trial(TrialSet::kLight, "normal", 4, 33, all, 2.0, 0.0)}));
  EXPECT_TRUE(f.Has("every_element")) << f.Text();
  EXPECT_TRUE(f.Has("constant_scale")) << f.Text();
  EXPECT_NEAR(f.scale, 2.0, 1e-12);
}

TEST(Forensics, AConstantOffsetIsNamed) {
  std::vector<int64_t> all;
  for (int64_t i = 0; i < 4 * 33; ++i) all.push_back(i);
  Forensics f = Diagnose(Softmax(), Failing({Trial(TrialSet::kLight, "normal", 4, 33, all, 1.0, 0.125)}));
  EXPECT_TRUE(f.Has("constant_offset")) << f.Text();
  EXPECT_NEAR(f.offset, 0.125, 1e-12);
}

TEST(Forensics, OnlyTheFirstRowOrAFewScatteredElements) {
  std::vector<int64_t> first_row;
  for (int64_t c = 0; c < 33; ++c) first_row.push_back(c);
  Forensics first = Diagnose(Softmax(), Failing({Trial(TrialSet::kLight, "normal", 8, 33, first_row)}));
  EXPECT_TRUE(first.Has("first_rows")) << first.Text();
  // One wrong element in each row and each column, none at an edge pattern.
  Forensics scattered = Diagnose(
      Softmax(),
      Failing({Trial(TrialSet::kLight, "normal", 8, 8,
                     {0 * 8 + 3, 1 * 8 + 6, 2 * 8 + 1, 3 * 8 + 4, 4 * 8 + 7, 5 * 8 + 2, 6 * 8 + 5, 7 * 8 + 0})}));
  EXPECT_TRUE(scattered.Has("scattered")) << scattered.Text();
}

TEST(Forensics, PassingLightFailingFullAndDistributionDependence) {
  Forensics f = Diagnose(
      Softmax(), Failing({Trial(TrialSet::kLight, "normal", 4, 33, {}), Trial(TrialSet::kLight, "normal", 4, 33, {}),
                          Trial(TrialSet::kFull, "large_magnitude", 4, 33, {5, 6, 7, 8})}));
  EXPECT_TRUE(f.Has("passes_light_fails_full")) << f.Text();
  EXPECT_TRUE(f.Has("distribution_dependent")) << f.Text();
  EXPECT_EQ(f.failing_distributions, std::vector<std::string>{"large_magnitude"});
}

TEST(Forensics, NanOnLargeInputsIsAnOverflow) {
  CaseEvidence nan = Trial(TrialSet::kFull, "large_magnitude", 4, 33, {1, 2});
  nan.failure = FailureClass::kNanInf;
  nan.outputs[0].compare.nan_inf_mismatches = 2;
  Forensics f = Diagnose(Softmax(), Failing({Trial(TrialSet::kFull, "normal", 4, 33, {}), nan}));
  EXPECT_TRUE(f.Has("nan_inf"));
  EXPECT_TRUE(f.Has("overflow_on_large_inputs")) << f.Text();
}

TEST(Forensics, NonNumericFailuresNameTheirSymptom) {
  Verdict build;
  build.failure = FailureClass::kBuildError;
  EXPECT_TRUE(Diagnose(Softmax(), build).Has("build_error"));
  Verdict timeout;
  timeout.failure = FailureClass::kTimeout;
  EXPECT_TRUE(Diagnose(Softmax(), timeout).Has("timeout"));
  Verdict passed;
  passed.passed = true;
  EXPECT_TRUE(Diagnose(Softmax(), passed).symptoms.empty());
}

TEST(Forensics, RoundTripsThroughJson) {
  Forensics f = Diagnose(Softmax(), Failing({Trial(TrialSet::kLight, "normal", 8, 100, Tail(8, 100, 4))}));
  Forensics back = ForensicsFromJson(f.ToJson());
  EXPECT_EQ(back.patterns, f.patterns);
  EXPECT_EQ(back.symptoms, f.symptoms);
  EXPECT_EQ(back.tail_width, f.tail_width);
  EXPECT_EQ(back.block, f.block);
  EXPECT_EQ(back.Text(), f.Text());
}

}  // namespace
}  // namespace kforge
