#include "engine/scoring.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kforge {
namespace {

Verdict WithTrials(Level level, int passed, int failed, double worst_ratio) {
  Verdict v;
  v.level = level;
  v.passed = failed == 0 && level == Level::kL2Full;
  v.failure = v.passed ? FailureClass::kNone : FailureClass::kPrecision;
  for (int i = 0; i < passed + failed; ++i) {
    CaseEvidence c;
    c.set = TrialSet::kLight;
    c.name = "case" + std::to_string(i);
    c.distribution = "normal";
    if (i >= passed) c.failure = FailureClass::kPrecision;
    OutputEvidence o;
    o.compare.worst_ratio = worst_ratio;
    o.compare.mismatches = i >= passed ? 5 : 0;
    c.outputs.push_back(o);
    v.cases.push_back(c);
  }
  return v;
}

TEST(ScoreVerdict, HigherLevelsAndMorePassesScoreHigher) {
  EXPECT_GT(ScoreVerdict(WithTrials(Level::kL2Light, 1, 1, 2)), ScoreVerdict(WithTrials(Level::kL1Compile, 1, 1, 2)));
  EXPECT_GT(ScoreVerdict(WithTrials(Level::kL1Compile, 2, 0, 2)), ScoreVerdict(WithTrials(Level::kL1Compile, 1, 1, 2)));
  EXPECT_GT(ScoreVerdict(WithTrials(Level::kL1Compile, 1, 1, 1.5)),
            ScoreVerdict(WithTrials(Level::kL1Compile, 1, 1, 1e3)));
}

TEST(ScoreVerdict, IntegrityScoresBelowEverythingAndNanCountsAsUnbounded) {
  Verdict cheat = WithTrials(Level::kL2Full, 4, 0, 0);
  cheat.passed = false;
  cheat.failure = FailureClass::kIntegrity;
  EXPECT_EQ(ScoreVerdict(cheat), -1);
  EXPECT_EQ(ScoreVerdict(WithTrials(Level::kL1Compile, 1, 1, NAN)),
            ScoreVerdict(WithTrials(Level::kL1Compile, 1, 1, 1e12)));
}

TEST(ScoreVerdict, ADegenerateRepairScoresBelowEveryCertifiedOneAndAboveLowerLevels) {
  Verdict degenerate = WithTrials(Level::kL2Full, 4, 0, 0.0);  // correct, tiny errors: the best numbers
  degenerate.passed = false;
  degenerate.failure = FailureClass::kDegenerate;
  const Verdict certified = WithTrials(Level::kL2Full, 4, 0, 0.9);  // correct, errors near the tolerance
  EXPECT_LT(ScoreVerdict(degenerate), ScoreVerdict(certified));
  EXPECT_GT(ScoreVerdict(degenerate), ScoreVerdict(WithTrials(Level::kL2Light, 4, 0, 0.0)));
}

TEST(FailureSignature, NamesTheClassAndTheFirstFailingTrial) {
  Verdict v = WithTrials(Level::kL1Compile, 1, 2, 3);
  EXPECT_EQ(FailureSignature(v), "precision:light/case1/normal:5");
  v.cases[1].set = TrialSet::kDiagnostic;  // diagnostic trials never count
  EXPECT_EQ(FailureSignature(v), "precision:light/case2/normal:5");
}

}  // namespace
}  // namespace kforge
