#pragma once
// Re-derives the decisions of a recorded repair run from its record alone. Each validation's
// score, class and signature come back from its stored verdict (the tensor layer stands in
// for the candidate's processes); each round's close comes back from the state folded
// before it and the clock reading it recorded (the trace layer stands in for the clock);
// the seed is in run_started. No live clock, entropy or process is used. A difference means
// the engine's decisions depend on something the record lacks.
#include <string>
#include <vector>

#include "record/artifact_store.h"
#include "record/event_log.h"

namespace kforge {

struct DecisionReplay {
  int validations = 0;                   ///< validated events re-scored
  int rounds = 0;                        ///< round_closed events re-decided
  std::vector<std::string> differences;  ///< one sentence each
};

DecisionReplay ReplayDecisions(const std::vector<Event>& events, const ArtifactStore& artifacts);

}  // namespace kforge
