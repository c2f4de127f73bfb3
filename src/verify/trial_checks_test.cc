#include "verify/trial_checks.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

CaseRun Returned(int on, int off) {
  CaseRun r;
  r.outcome = CaseRun::Outcome::kReturned;
  r.kernels_on_stream = on;
  r.kernels_off_stream = off;
  return r;
}

TEST(JudgeLaunches, AKernelOnTheGivenStreamIsClean) {
  LaunchJudgement j = JudgeLaunches(Returned(1, 0));
  EXPECT_EQ(j.accounting, "cupti");
  EXPECT_FALSE(j.violation());
}

TEST(JudgeLaunches, NoKernelOrAnotherStreamIsAViolation) {
  EXPECT_EQ(JudgeLaunches(Returned(0, 0)).findings.at(0).check, "runtime.no_kernel_ran");
  EXPECT_EQ(JudgeLaunches(Returned(1, 2)).findings.at(0).check, "runtime.kernel_off_stream");
}

TEST(JudgeLaunches, UncountedOrFailedCallsJudgeNothing) {
  CaseRun uncounted = Returned(-1, -1);
  uncounted.message = "CUPTI unavailable";
  EXPECT_EQ(JudgeLaunches(uncounted).accounting, "not counted: CUPTI unavailable");
  EXPECT_FALSE(JudgeLaunches(uncounted).violation());
  CaseRun failed = Returned(0, 0);
  failed.rc = 3;
  EXPECT_FALSE(JudgeLaunches(failed).violation());
  CaseRun crashed = Returned(0, 0);
  crashed.outcome = CaseRun::Outcome::kCrashed;
  EXPECT_FALSE(JudgeLaunches(crashed).violation());
}

TEST(StaleOutputs, SameBytesForOtherInputsAfterACorrectCallAreStale) {
  StaleOutputs s;
  EXPECT_FALSE(s.Observe("4,4;4;", "normal:1", "abc", 64, true));
  EXPECT_TRUE(s.Observe("4,4;4;", "normal:2", "abc", 64, false));
}

TEST(StaleOutputs, HonestCoincidencesAreNot) {
  StaleOutputs s;
  // The same inputs again (deterministic distributions ignore the seed).
  EXPECT_FALSE(s.Observe("k", "ones", "abc", 64, true));
  EXPECT_FALSE(s.Observe("k", "ones", "abc", 64, true));
  // An earlier wrong result repeated is a numeric failure, not a cache.
  StaleOutputs wrong;
  EXPECT_FALSE(wrong.Observe("k", "normal:1", "zeros", 64, false));
  EXPECT_FALSE(wrong.Observe("k", "normal:2", "zeros", 64, false));
  // Tiny outputs can coincide.
  StaleOutputs tiny;
  EXPECT_FALSE(tiny.Observe("k", "normal:1", "0", 1, true));
  EXPECT_FALSE(tiny.Observe("k", "normal:2", "0", 1, true));
  // Other shapes are another key.
  StaleOutputs shapes;
  EXPECT_FALSE(shapes.Observe("a", "normal:1", "x", 64, true));
  EXPECT_FALSE(shapes.Observe("b", "normal:2", "x", 64, true));
}

TEST(SanitizerReport, ReadsMemcheckAndRacecheckSummaries) {
  SanitizerReport mem = ParseSanitizerReport(
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at add_bias+0x70\n"
      "candidate stdout line\n"
      "========= ERROR SUMMARY: 3 errors\n");
  EXPECT_EQ(mem.errors, 3);
  EXPECT_EQ(mem.findings, "Invalid __global__ write of size 4 bytes\n    at add_bias+0x70\nERROR SUMMARY: 3 errors\n");
  SanitizerReport race =
      ParseSanitizerReport("========= RACECHECK SUMMARY: 1 hazard displayed (12 errors, 0 warnings)\n");
  EXPECT_EQ(race.errors, 12);
}

TEST(SanitizerReport, HostileOrMissingSummariesDoNotThrow) {
  EXPECT_EQ(ParseSanitizerReport("").errors, -1);
  EXPECT_EQ(ParseSanitizerReport("========= ERROR SUMMARY: 99999999999999999999 errors\n").errors, -1);
  std::string flood;
  for (int i = 0; i < 10000; ++i) flood += "========= line " + std::to_string(i) + "\n";
  EXPECT_LE(ParseSanitizerReport(flood).findings.size(), 3100u);
}

TEST(SanitizerToolFor, RaceThenMemoryThenNothing) {
  EXPECT_EQ(SanitizerToolFor(true, FailureClass::kWrongResult), "racecheck");
  EXPECT_EQ(SanitizerToolFor(false, FailureClass::kOutOfBoundsWrite), "memcheck");
  EXPECT_EQ(SanitizerToolFor(false, FailureClass::kRuntimeError), "memcheck");
  EXPECT_FALSE(SanitizerToolFor(false, FailureClass::kPrecision).has_value());
}

}  // namespace
}  // namespace kforge
