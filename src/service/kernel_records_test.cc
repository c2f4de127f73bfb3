#include "service/kernel_records.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

Verdict RecordedVerdict(bool passed) {
  Verdict v;
  v.passed = passed;
  v.failure = passed ? FailureClass::kNone : FailureClass::kPrecision;
  v.level = passed ? Level::kL2Full : Level::kL2Light;
  v.task_name = "softmax";
  v.task_sha256 = "t";
  v.candidate_sha256 = "c";
  v.candidate_path = "softmax.cu";
  v.backend = BackendKind::kCuda;
  v.kforge_version = "0.test";
  return v;
}

CaseEvidence CaseOfMs(double ms, FailureClass failure = FailureClass::kNone) {
  CaseEvidence c;
  c.run_ms = ms;
  c.failure = failure;
  return c;
}

TEST(KernelRecords, AVerdictsRecordNamesItsDeviceVerdictAndLevel) {
  Verdict v = RecordedVerdict(false);
  v.device = {{"name", "NVIDIA H200"}};
  KernelRecord r = RecordOfVerdict(v, RecordKind::kVerify, 42);
  EXPECT_EQ(r.task, "softmax");
  EXPECT_EQ(r.backend, "cuda");
  EXPECT_EQ(r.device, "NVIDIA H200");
  EXPECT_EQ(r.verdict, "precision");
  EXPECT_EQ(r.level, "L2_light");
  EXPECT_FALSE(r.integrity_failure);
  EXPECT_EQ(r.time_us, 42);
  v.device = nullptr;
  AddFinding(&v.integrity, "static.constant_output", "returns a constant");
  r = RecordOfVerdict(v, RecordKind::kVerify, 42);
  EXPECT_EQ(r.device, "cpu");
  EXPECT_TRUE(r.integrity_failure) << "a finding marks the record whatever the class";
  EXPECT_EQ(RecordOfVerdict(RecordedVerdict(true), RecordKind::kVerify, 0).verdict, "pass");
}

TEST(KernelRecords, ABenchRecordsItsMediansOnlyWhenTimed) {
  BenchReport b;
  b.verdict = RecordedVerdict(true);
  b.candidate.timing.median_ns = 2.5e6;
  b.baseline.timing.median_ns = 5e6;
  b.roofline_fraction = 0.6;
  KernelRecord untimed = RecordOfBench(b, 1);
  EXPECT_EQ(untimed.kind, RecordKind::kBench);
  EXPECT_FALSE(untimed.median_ms.has_value());
  b.timed = true;
  KernelRecord timed = RecordOfBench(b, 1);
  ASSERT_TRUE(timed.median_ms.has_value());
  EXPECT_DOUBLE_EQ(*timed.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(*timed.baseline_median_ms, 5.0);
  EXPECT_DOUBLE_EQ(*timed.roofline_fraction, 0.6);
}

TEST(KernelRecords, TheMedianCaseTimeCountsPassingCasesOnly) {
  Verdict v;
  EXPECT_EQ(MedianCaseMs(v), 0) << "no case ran";
  v.cases = {CaseOfMs(3), CaseOfMs(1), CaseOfMs(100, FailureClass::kTimeout), CaseOfMs(2)};
  EXPECT_DOUBLE_EQ(MedianCaseMs(v), 2);
  v.cases.push_back(CaseOfMs(10));
  EXPECT_DOUBLE_EQ(MedianCaseMs(v), 2.5) << "an even count: the mean of the middle two";
}

}  // namespace
}  // namespace kforge
