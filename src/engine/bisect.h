#pragma once
// Delta debugging between two runs of one task: which of the values they took from the
// world turn the good outcome into the bad one.
//
// Design note:
//  - The values are the slots of engine/recording.h's RunInputs: validation#k (tensor),
//    turn#k (token), clock#ROUND (trace). A slot differs when the two runs hold different
//    values there, or only one holds it.
//  - A mix is the good run's inputs with the bad run's values in a chosen set of slots,
//    replayed strictly (no compilation, no model); its outcome is "certified" or
//    "not certified (REASON)". A mix whose replay leaves the record (a gap) is unresolved:
//    neither good nor bad, never a crash.
//  - ddmin (Zeller and Hildebrandt, 2002) over the differing slots finds a set that gives
//    the bad outcome and from which no single slot can be dropped. Outcomes are cached by
//    the set of slots, so no mix is replayed twice.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/recording.h"

namespace kforge {

struct InputSlot {
  std::string key;  ///< "validation#1", "turn#0", "clock#2"
  Layer layer = Layer::kControl;
  int64_t seq_a = 0, seq_b = 0;  ///< 0 : absent from that run
};

/// The slots whose values differ between `a` and `b`.
std::vector<InputSlot> DifferingSlots(const RunInputs& a, const RunInputs& b);
/// `a` with `b`'s values in `slots`.
RunInputs MixInputs(const RunInputs& a, const RunInputs& b, const std::vector<InputSlot>& slots);

struct BisectTrial {
  std::vector<std::string> slots;
  std::string outcome;
};

struct BisectResult {
  std::string outcome_good, outcome_bad;
  std::vector<InputSlot> differing;
  std::vector<InputSlot> minimal;   ///< empty when the bisection could not conclude (see `error`)
  std::vector<BisectTrial> trials;  ///< every replay made, in order
  int cache_hits = 0;
  std::string error;  ///< why there is no answer ("" when there is)
  nlohmann::json ToJson() const;
};

/// The outcome of replaying a mix: "certified", "not certified (REASON)", or one starting
/// with "unresolved".
using MixOutcome = std::function<std::string(const RunInputs& mix)>;

BisectResult Bisect(const RunInputs& good, const RunInputs& bad, const MixOutcome& outcome_of);

}  // namespace kforge
