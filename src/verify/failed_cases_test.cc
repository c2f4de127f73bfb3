#include "verify/failed_cases.h"

#include <gtest/gtest.h>

#include "core/task.h"
#include "testing/testing.h"

namespace kforge {
namespace {

CaseEvidence FailedTrial(TrialSet set, std::string name, FailureClass failure, std::string message = "") {
  CaseEvidence c;
  c.set = set;
  c.name = std::move(name);
  c.distribution = "normal";
  c.failure = failure;
  c.message = std::move(message);
  return c;
}

TEST(FailedCases, TheVerdictTakesTheMostSevereTrialNotTheFirstAndNeverADiagnosticOne) {
  Verdict v;
  v.cases = {FailedTrial(TrialSet::kLight, "small", FailureClass::kPrecision),
             FailedTrial(TrialSet::kDiagnostic, "small", FailureClass::kIntegrity),
             FailedTrial(TrialSet::kFull, "large", FailureClass::kTimeout),
             FailedTrial(TrialSet::kFull, "odd", FailureClass::kNone)};
  ASSERT_NE(WorstCase(v), nullptr);
  EXPECT_EQ(WorstCase(v)->name, "large");
  std::swap(v.cases[0], v.cases[2]);
  EXPECT_EQ(WorstCase(v)->name, "large") << "the class does not depend on which trial ran first";
  EXPECT_EQ(DescribeFailure(v), "full case 'large' (normal) exceeded the time limit");
  v.cases = {FailedTrial(TrialSet::kLight, "small", FailureClass::kNone)};
  EXPECT_EQ(WorstCase(v), nullptr);
  EXPECT_EQ(DescribeFailure(v), "");
}

TEST(FailedCases, TheSentenceNamesAnIntegrityFindingFirstThenTheWrongOutput) {
  Verdict v;
  CaseEvidence c = FailedTrial(TrialSet::kLight, "small", FailureClass::kWrongResult);
  OutputEvidence out;
  out.name = "y";
  out.compare.elements = 64;
  out.compare.mismatches = 3;
  c.outputs.push_back(out);
  v.cases.push_back(c);
  EXPECT_EQ(DescribeFailure(v), "light case 'small' (normal): output 'y' has 3 of 64 elements wrong (wrong_result)");
  v.cases[0] = FailedTrial(TrialSet::kLight, "small", FailureClass::kRuntimeError, "SIGSEGV\nbacktrace...");
  EXPECT_EQ(DescribeFailure(v), "light case 'small' (normal): SIGSEGV") << "the first line of the message only";
  AddFinding(&v.integrity, "static.constant_output", "returns a constant");
  EXPECT_EQ(DescribeFailure(v), "integrity check static.constant_output failed: returns a constant");
}

TEST(FailedCases, TheCaseToRunAgainIsTheTasksCaseOfTheFirstFailingTrial) {
  const Task task = LoadTaskFile(testing::SourceDir() + "/tasks/relu.json");
  ASSERT_FALSE(task.light.empty());
  const std::string name = task.light[0].name;
  Verdict v;
  v.cases = {FailedTrial(TrialSet::kLight, "not-a-case", FailureClass::kWrongResult),
             FailedTrial(TrialSet::kLight, name + "#repeat2", FailureClass::kWrongResult)};
  Distribution dist{};
  ASSERT_NE(FirstFailingCase(v, task, &dist), nullptr);
  EXPECT_EQ(FirstFailingCase(v, task, &dist)->name, name) << "a repeat run names its case";
  EXPECT_EQ(dist, Distribution::kNormal);
  ASSERT_NE(NumericFailureCase(v, task), nullptr);
  v.cases.insert(v.cases.begin(), FailedTrial(TrialSet::kLight, name, FailureClass::kTimeout));
  EXPECT_EQ(NumericFailureCase(v, task), nullptr) << "a set that did not fail on its numbers gets no diagnostic trial";
}

}  // namespace
}  // namespace kforge
