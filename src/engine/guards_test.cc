#include "engine/guards.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

Scored S(const std::string& candidate, double score, FailureClass failure = FailureClass::kPrecision,
         const std::string& signature = "sig") {
  Scored s;
  s.candidate = candidate;
  s.score = score;
  s.failure = failure;
  s.passed = failure == FailureClass::kNone;
  s.integrity = failure == FailureClass::kIntegrity;
  s.level = Level::kL1Compile;
  s.signature = signature;
  s.origin = "kb:x";
  return s;
}

struct Round {
  RunConfig config;
  Scored current = S("cur", 20), best = S("cur", 20);
  std::vector<Scored> results;
  RoundInput Input() {
    RoundInput in;
    in.config = &config;
    in.current = &current;
    in.best = &best;
    in.results = &results;
    in.had_proposals = !results.empty();
    in.turns = 1;
    in.rounds_in_attempt = 1;
    return in;
  }
};

Forensics None(const Scored&) { return {}; }

TEST(Guards, IntegrityRejectsEveryCheatingProposal) {
  auto g = IntegrityGuard({S("a", 30), S("b", -1, FailureClass::kIntegrity), S("c", -1, FailureClass::kIntegrity)});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].action, GuardAction::kReject);
  EXPECT_NE(g[1].reason.find("c"), std::string::npos);
}

TEST(Guards, EachStopsAtItsLimitAndNotBefore) {
  RunConfig c;
  Scored s = S("x", 12);
  EXPECT_FALSE(RepeatedFailureGuard(c, c.repeated_failure_limit - 1, s));
  EXPECT_EQ(RepeatedFailureGuard(c, c.repeated_failure_limit, s)->guard, GuardKind::kRepeatedFailure);
  EXPECT_FALSE(StagnationGuard(c, c.stagnation_rounds - 1, s));
  EXPECT_EQ(StagnationGuard(c, c.stagnation_rounds, s)->action, GuardAction::kStop);
  EXPECT_FALSE(TurnBudgetGuard(c, c.turns_per_session - 1));
  EXPECT_EQ(TurnBudgetGuard(c, c.turns_per_session)->guard, GuardKind::kTurnBudget);
  EXPECT_FALSE(WallClockGuard(c, c.wall_clock_s - 1));
  EXPECT_EQ(WallClockGuard(c, c.wall_clock_s)->guard, GuardKind::kWallClock);
}

TEST(Guards, NearPassStopsOnlyWithoutProgressAndWithItsSymptom) {
  Forensics near;
  near.patterns.push_back("near_pass");
  EXPECT_FALSE(NearPassGuard(/*improved=*/true, 3, near));
  EXPECT_FALSE(NearPassGuard(false, 1, near));
  EXPECT_FALSE(NearPassGuard(false, 3, Forensics{}));
  EXPECT_EQ(NearPassGuard(false, 2, near)->guard, GuardKind::kNearPass);
}

TEST(Guards, RollbackReturnsToTheBestAfterTooManyRoundsWithoutBeatingIt) {
  RunConfig c;
  EXPECT_FALSE(RollbackGuard(c, c.rollback_after - 1, S("now", 10), S("best", 20)));
  EXPECT_FALSE(RollbackGuard(c, c.rollback_after, S("best", 20), S("best", 20))) << "already at the best";
  EXPECT_EQ(RollbackGuard(c, c.rollback_after, S("now", 10), S("best", 20))->action, GuardAction::kRollback);
}

TEST(CloseRound, AdoptsTheBestImprovementAndCertifiesAPass) {
  Round r;
  r.results = {S("a", 25), S("b", 27), S("c", 26)};
  RoundDecision d = CloseRoundDecision(r.Input(), None);
  EXPECT_EQ(d.adopted, "b");
  EXPECT_EQ(d.new_best, "b");
  EXPECT_TRUE(d.improved);
  EXPECT_TRUE(d.stop.empty());

  r.results = {S("a", 25), S("ok", 45, FailureClass::kNone)};
  d = CloseRoundDecision(r.Input(), None);
  EXPECT_TRUE(d.success);
  EXPECT_EQ(d.stop, "certified");
  EXPECT_EQ(d.adopted, "ok");
}

TEST(CloseRound, NoProposalsAndOscillationStop) {
  Round r;
  RoundInput in = r.Input();
  EXPECT_EQ(CloseRoundDecision(in, None).stop, "no_proposals");
  in.had_proposals = true;  // proposed, but every one was seen before
  EXPECT_EQ(CloseRoundDecision(in, None).stop, "oscillation");
}

TEST(CloseRound, ACheatIsNeverAdoptedNorBest) {
  Round r;
  r.results = {S("cheat", 99, FailureClass::kIntegrity)};
  r.results[0].integrity = true;
  RoundDecision d = CloseRoundDecision(r.Input(), None);
  EXPECT_TRUE(d.adopted.empty());
  EXPECT_TRUE(d.new_best.empty());
  EXPECT_EQ(d.guards[0].guard, GuardKind::kIntegrity);
}

TEST(CloseRound, TheAttemptBudgetExtendsOnceThenOpensANewAttemptThenStops) {
  Round r;
  r.results = {S("a", 25)};
  RoundInput in = r.Input();
  in.rounds_in_attempt = r.config.rounds_per_attempt;
  RoundDecision d = CloseRoundDecision(in, None);
  EXPECT_EQ(d.extend, r.config.soft_extension_rounds) << "improved: one soft extension";
  in.extended = true;
  d = CloseRoundDecision(in, None);
  EXPECT_TRUE(d.new_attempt);
  EXPECT_TRUE(d.rollback);
  in.attempt = r.config.max_attempts;
  d = CloseRoundDecision(in, None);
  EXPECT_EQ(d.stop, "round_budget");
  // Build errors end an attempt early.
  r.results = {S("b", 5, FailureClass::kBuildError)};
  in = r.Input();
  in.counters.build_error_rounds = r.config.build_error_rounds - 1;
  d = CloseRoundDecision(in, None);
  EXPECT_TRUE(d.new_attempt) << DecisionJson(1, d).dump();
}

TEST(CloseRound, TheFirstStoppingGuardWins) {
  Round r;
  r.results = {S("a", 20)};  // no improvement, the same signature
  RoundInput in = r.Input();
  in.counters.repeated = r.config.repeated_failure_limit - 1;
  in.counters.stagnant = r.config.stagnation_rounds - 1;
  RoundDecision d = CloseRoundDecision(in, None);
  EXPECT_EQ(d.stop, "repeated_failure");
  EXPECT_EQ(d.stop_message, d.guards.back().reason);
}

}  // namespace
}  // namespace kforge
