#pragma once
// The decisions that close a repair round, each a named unit: which proposal is adopted,
// whether the best snapshot is restored, and which guard stops the run or opens a new
// attempt. They are pure functions of the folded run state (and the current candidate's
// forensics), so a resumed or replayed run decides exactly as the original did.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/run_config.h"
#include "engine/run_state.h"
#include "verify/forensics.h"

namespace kforge {

/// What a round's close looks at.
struct RoundInput {
  const RunConfig* config = nullptr;
  const Scored* current = nullptr;
  const Scored* best = nullptr;
  const std::vector<Scored>* results = nullptr;  ///< this round's validations, in order
  bool had_proposals = false;                    ///< the repairer proposed anything (seen or not)
  bool turn_failed = false;                      ///< the repairer's turn failed (no proposal, with a reason)
  RoundCounters counters;
  int turns = 0;
  int attempt = 1;
  int rounds_in_attempt = 0;
  int extra_rounds = 0;
  bool extended = false;
  int64_t elapsed_s = 0;  ///< run time charged to the budget (pauses excluded)
};

/// The input of the round `s` is closing, from the folded state (the clock reading is the
/// round's recorded `clock_read`).
RoundInput RoundInputFrom(const RunState& s);

/// The best of this round's results (highest score; the first on ties), or null.
const Scored* TopResult(const std::vector<Scored>& results);

// The guards. Each returns the decision it takes, or nothing.
std::vector<GuardDecision> IntegrityGuard(const std::vector<Scored>& results);
std::optional<GuardDecision> RollbackGuard(const RunConfig& c, int rounds_without_best, const Scored& current_after,
                                           const Scored& best_after);
std::optional<GuardDecision> RepeatedFailureGuard(const RunConfig& c, int repeated, const Scored& current_after);
std::optional<GuardDecision> StagnationGuard(const RunConfig& c, int stagnant, const Scored& current_after);
/// Errors just above the tolerance that no change reduces (forensics near_pass or
/// fp16_ceiling of the candidate now current).
std::optional<GuardDecision> NearPassGuard(bool improved, int rounds_without_best, const Forensics& f);
std::optional<GuardDecision> TurnBudgetGuard(const RunConfig& c, int turns);
std::optional<GuardDecision> WallClockGuard(const RunConfig& c, int64_t elapsed_s);
/// At the end of an attempt's rounds (or when its build-error / precision rounds are used
/// up): a soft extension once when the last round improved, else a new attempt, else stop.
std::optional<GuardDecision> AttemptBudgetGuard(const RoundInput& in, const RoundCounters& after, bool improved,
                                                const Scored& current_after);

/// Closes a round. `forensics_of` gives a candidate's diagnosis (empty when it passed).
RoundDecision CloseRoundDecision(const RoundInput& in, const std::function<Forensics(const Scored&)>& forensics_of);

}  // namespace kforge
