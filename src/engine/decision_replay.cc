#include "engine/decision_replay.h"

#include <fmt/format.h>

#include "engine/guards.h"
#include "engine/run_state.h"
#include "engine/scoring.h"

namespace kforge {

DecisionReplay ReplayDecisions(const std::vector<Event>& events, const ArtifactStore& artifacts) {
  DecisionReplay out;
  RunState s;
  auto forensics_of = [&](const Scored& c) {
    return c.forensics.empty() ? Forensics{} : ForensicsFromJson(nlohmann::json::parse(artifacts.Get(c.forensics)));
  };
  for (const Event& e : events) {
    const EventType type = ParseEventType(e.type);
    if (type == EventType::kValidated) {
      ++out.validations;
      const Verdict v = Verdict::FromJson(nlohmann::json::parse(artifacts.Get(e.data.value("verdict", ""))));
      const double score = ScoreVerdict(v);
      if (score != e.data.value("score", 0.0))
        out.differences.push_back(fmt::format("event {}: the verdict scores {} but {} was recorded", e.seq, score,
                                              e.data.value("score", 0.0)));
      if (FailureSignature(v) != e.data.value("signature", ""))
        out.differences.push_back(fmt::format("event {}: the verdict's failure signature is '{}', not '{}'", e.seq,
                                              FailureSignature(v), e.data.value("signature", "")));
    } else if (type == EventType::kRoundClosed && s.current && s.best) {
      ++out.rounds;
      RoundInput in = RoundInputFrom(s);
      nlohmann::json again = CloseRoundDecision(in, forensics_of).ToJson(s.round);
      nlohmann::json recorded = e.data;
      recorded.erase("kb_updates");
      if (again != recorded)
        out.differences.push_back(fmt::format("event {} (round {}): re-deciding gives {}", e.seq, s.round,
                                              nlohmann::json::diff(recorded, again).dump()));
    }
    s.Apply(e);
  }
  return out;
}

}  // namespace kforge
