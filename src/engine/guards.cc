#include "engine/guards.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kforge {
namespace {

constexpr double kEps = 1e-9;

GuardDecision Stop(GuardKind guard, std::string reason) { return {guard, GuardAction::kStop, std::move(reason)}; }

}  // namespace

RoundInput RoundInputFrom(const RunState& s) {
  RoundInput in;
  in.config = &s.config;
  in.current = &*s.current;
  in.best = &*s.best;
  in.results = &s.round_results;
  in.had_proposals = !s.proposals.empty();
  in.turn_failed = s.turn_failed;
  // Every model call counts against the turn budgets, as every repairer turn does.
  in.turns = std::max(s.turns, s.usage.model_calls);
  in.counters = {s.rounds_without_best, s.stagnant_rounds, s.repeated, s.build_error_rounds, s.precision_rounds};
  in.attempt = s.attempt;
  in.rounds_in_attempt = s.rounds_in_attempt;
  in.extra_rounds = s.extra_rounds;
  in.extended = s.extended;
  in.elapsed_s = s.clock_elapsed_s;
  return in;
}

const Scored* TopResult(const std::vector<Scored>& results) {
  const Scored* top = nullptr;
  for (const auto& r : results)
    if (top == nullptr || r.score > top->score + kEps) top = &r;
  return top;
}

std::vector<GuardDecision> IntegrityGuard(const std::vector<Scored>& results) {
  std::vector<GuardDecision> out;
  for (const auto& r : results)
    if (r.integrity)
      out.push_back({GuardKind::kIntegrity, GuardAction::kReject,
                     "proposal " + r.candidate.substr(0, 8) + " from " + r.origin + " cheats: " + r.message});
  return out;
}

std::optional<GuardDecision> RollbackGuard(const RunConfig& c, int rounds_without_best, const Scored& current_after,
                                           const Scored& best_after) {
  if (c.Without(Ablation::kAdaptiveScheduling) || rounds_without_best < c.rollback_after ||
      current_after.candidate == best_after.candidate)
    return std::nullopt;
  return GuardDecision{GuardKind::kBestSnapshot, GuardAction::kRollback,
                       fmt::format("{} rounds without beating the best (score {:.2f}); back to {}", rounds_without_best,
                                   best_after.score, best_after.candidate.substr(0, 8))};
}

std::optional<GuardDecision> RepeatedFailureGuard(const RunConfig& c, int repeated, const Scored& current_after) {
  if (repeated < c.repeated_failure_limit) return std::nullopt;
  return Stop(GuardKind::kRepeatedFailure,
              fmt::format("the same error ({}) {} rounds in a row", current_after.signature, repeated));
}

std::optional<GuardDecision> StagnationGuard(const RunConfig& c, int stagnant, const Scored& current_after) {
  if (c.Without(Ablation::kAdaptiveScheduling) || stagnant < c.stagnation_rounds) return std::nullopt;
  return Stop(GuardKind::kStagnation, fmt::format("score flat at {:.2f} for {} rounds", current_after.score, stagnant));
}

std::optional<GuardDecision> NearPassGuard(bool improved, int rounds_without_best, const Forensics& f) {
  if (improved || rounds_without_best < 2 || !(f.Has("near_pass") || f.Has("fp16_ceiling"))) return std::nullopt;
  return Stop(f.Has("fp16_ceiling") ? GuardKind::kFp16Ceiling : GuardKind::kNearPass,
              "errors sit just above the tolerance and no change reduces them");
}

std::optional<GuardDecision> TurnBudgetGuard(const RunConfig& c, int turns) {
  if (turns < c.turns_per_task && turns < c.turns_per_session) return std::nullopt;
  return Stop(GuardKind::kTurnBudget, fmt::format("{} repairer turns used", turns));
}

std::optional<GuardDecision> WallClockGuard(const RunConfig& c, int64_t elapsed_s) {
  if (elapsed_s < c.wall_clock_s) return std::nullopt;
  return Stop(GuardKind::kWallClock, fmt::format("{} s elapsed (limit {} s)", elapsed_s, c.wall_clock_s));
}

std::optional<GuardDecision> AttemptBudgetGuard(const RoundInput& in, const RoundCounters& after, bool improved,
                                                const Scored& current_after) {
  const RunConfig& c = *in.config;
  const bool sub_limit =
      after.build_error_rounds >= c.build_error_rounds || after.precision_rounds >= c.precision_rounds;
  if (in.rounds_in_attempt < c.rounds_per_attempt + in.extra_rounds && !sub_limit) return std::nullopt;
  if (improved && !in.extended && !sub_limit && c.soft_extension_rounds > 0 &&
      !c.Without(Ablation::kAdaptiveScheduling))
    return GuardDecision{
        GuardKind::kSoftBudget, GuardAction::kExtend,
        fmt::format("the last round improved the score ({:.2f} -> {:.2f})", in.current->score, current_after.score)};
  if (in.attempt < c.max_attempts)
    return GuardDecision{GuardKind::kAttemptBudget, GuardAction::kNewAttempt,
                         sub_limit ? fmt::format("{} build-error / {} precision rounds in this attempt",
                                                 after.build_error_rounds, after.precision_rounds)
                                   : fmt::format("{} rounds used in attempt {}", in.rounds_in_attempt, in.attempt)};
  return Stop(GuardKind::kRoundBudget, fmt::format("{} attempts used", in.attempt));
}

RoundDecision CloseRoundDecision(const RoundInput& in, const std::function<Forensics(const Scored&)>& forensics_of) {
  const RunConfig& c = *in.config;
  const Scored& cur = *in.current;
  RoundDecision d;
  d.counters = in.counters;
  d.guards = IntegrityGuard(*in.results);
  auto stop_with = [&](std::optional<GuardDecision> g) {
    if (!g) return false;
    d.guards.push_back(*g);
    if (g->action == GuardAction::kStop) d.stop = GuardKindName(g->guard);
    return true;
  };
  const Scored* top = TopResult(*in.results);
  if (top == nullptr && !in.turn_failed) {
    stop_with(in.had_proposals
                  ? Stop(GuardKind::kOscillation, "every proposal repeated a candidate already tried")
                  : Stop(GuardKind::kNoProposals, "the repairer had nothing to propose for this diagnosis"));
  } else if (top != nullptr && top->passed) {
    d.adopted = d.new_best = top->candidate;
    d.stop = "certified";
    d.success = true;
  } else {
    // A failed turn (a malformed answer, an endpoint that did not answer) is a round
    // without progress: the current candidate stays, and the budgets run on.
    RoundCounters& k = d.counters;
    const Scored* after = &cur;
    if (top == nullptr) {
      ++k.rounds_without_best;
      ++k.stagnant;
    } else {
      d.improved = top->score > cur.score + kEps;
      if (!top->integrity && (d.improved || top->level >= Level::kL1Compile)) {
        d.adopted = top->candidate;
        after = top;
      }
      if (top->score > in.best->score + kEps && !top->integrity) {
        d.new_best = top->candidate;
        k.rounds_without_best = 0;
      } else {
        ++k.rounds_without_best;
      }
      k.stagnant = std::fabs(after->score - cur.score) < kEps ? k.stagnant + 1 : 0;
      k.repeated = after->signature == cur.signature ? k.repeated + 1 : 0;
      if (top->failure == FailureClass::kBuildError) ++k.build_error_rounds;
      if (top->failure == FailureClass::kPrecision) ++k.precision_rounds;
    }
    const Scored& best_after = d.new_best.empty() ? *in.best : *top;  // new_best implies top
    if (auto g = RollbackGuard(c, k.rounds_without_best, *after, best_after)) {
      d.rollback = true;
      d.guards.push_back(*g);
    }
    // The first stopping guard wins, in this order.
    stop_with(RepeatedFailureGuard(c, k.repeated, *after)) || stop_with(StagnationGuard(c, k.stagnant, *after)) ||
        (!c.Without(Ablation::kAdaptiveScheduling) &&
         stop_with(NearPassGuard(d.improved, k.rounds_without_best, forensics_of(*after)))) ||
        stop_with(TurnBudgetGuard(c, in.turns)) || stop_with(WallClockGuard(c, in.elapsed_s));
    if (d.stop.empty()) {
      if (auto g = AttemptBudgetGuard(in, k, d.improved, *after)) {
        d.guards.push_back(*g);
        if (g->action == GuardAction::kExtend) {
          d.extend = c.soft_extension_rounds;
        } else if (g->action == GuardAction::kNewAttempt) {
          d.new_attempt = true;
          d.rollback = true;
        } else {
          d.stop = GuardKindName(g->guard);
        }
      }
    }
  }
  d.stop_message = d.success ? "certified on the full set" : d.guards.empty() ? "" : d.guards.back().reason;
  return d;
}

}  // namespace kforge
