#include "verify/verdict.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace kforge {
namespace {

Verdict SampleVerdict() {
  Verdict v;
  v.passed = false;
  v.level = Level::kL2Light;
  v.failure = FailureClass::kNanInf;
  v.message = "case big/normal: 3 NaN";
  v.task_name = "softmax";
  v.backend = BackendKind::kCuda;
  v.seed = 18446744073709551615ull;
  v.full_requested = true;
  v.fixed_inputs = {"outlier_rows"};
  v.random_shapes = {{{"N", 7}, {"M", 3}}};
  v.device = {{"name", "H200"}};
  CaseEvidence c;
  c.set = TrialSet::kFull;
  c.name = "big";
  c.params = {{"N", 4}};
  c.distribution = "normal";
  c.failure = FailureClass::kNanInf;
  c.outcome = "returned";
  c.kernels_on_stream = 1;
  c.kernels_off_stream = 0;
  OutputEvidence o;
  o.name = "y";
  o.compare.mismatches = 3;
  o.compare.max_abs_error = INFINITY;
  o.compare.worst_ratio = NAN;
  o.compare.first = {Mismatch{2, {0, 2}, NAN, 0.25}};
  o.guard_damage = {-4};
  c.outputs.push_back(o);
  ProbeEvidence p;
  p.stats.name = "row_max";
  p.stats.min = -INFINITY;
  p.has_reference = true;
  p.ref_max = 3.5;
  c.probes.push_back(p);
  v.cases.push_back(c);
  v.integrity.push_back({"static.stream_escape", "launch on stream 0", 12});
  return v;
}

TEST(Verdict, RoundTripsThroughJsonExactly) {
  nlohmann::json j = SampleVerdict().ToJson();
  EXPECT_EQ(Verdict::FromJson(j).ToJson(), j);
  Verdict back = Verdict::FromJson(j);
  EXPECT_EQ(back.backend, BackendKind::kCuda);
  EXPECT_EQ(back.failure, FailureClass::kNanInf);
  EXPECT_TRUE(std::isinf(back.cases[0].outputs[0].compare.max_abs_error));
  EXPECT_TRUE(std::isnan(back.cases[0].outputs[0].compare.worst_ratio));
}

TEST(Verdict, RefusesWhatItCannotRead) {
  nlohmann::json j = SampleVerdict().ToJson();
  nlohmann::json newer = j;
  newer["schema_version"] = kVerdictSchemaVersion + 1;
  EXPECT_THROW(Verdict::FromJson(newer), UsageError);
  nlohmann::json unknown_class = j;
  unknown_class["failure_class"] = "cosmic_rays";
  EXPECT_THROW(Verdict::FromJson(unknown_class), UsageError);
  nlohmann::json missing = j;
  missing.erase("cases");
  EXPECT_THROW(Verdict::FromJson(missing), UsageError);
  EXPECT_THROW(Verdict::FromJson(nlohmann::json::array()), UsageError);
}

TEST(Verdict, NameTablesCoverEveryValue) {
  for (int i = 0; i <= static_cast<int>(FailureClass::kEnvironment); ++i) {
    FailureClass c = static_cast<FailureClass>(i), back;
    ASSERT_NE(FailureClassName(c), "?");
    ASSERT_TRUE(TryParseFailureClass(FailureClassName(c), &back));
    EXPECT_EQ(back, c);
  }
  for (int i = 0; i <= static_cast<int>(Level::kL2Full); ++i) {
    Level l = static_cast<Level>(i), back;
    ASSERT_TRUE(TryParseLevel(LevelName(l), &back));
    EXPECT_EQ(back, l);
  }
}

}  // namespace
}  // namespace kforge
