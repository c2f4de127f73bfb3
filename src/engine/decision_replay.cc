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
    std::optional<RunEvent> typed = Decode(e);
    if (!typed) continue;
    if (const auto* validated = std::get_if<ValidatedEvent>(&*typed)) {
      ++out.validations;
      const Scored& rec = validated->scored;
      const Verdict v = Verdict::FromJson(nlohmann::json::parse(artifacts.Get(rec.verdict)));
      const double score = ScoreVerdict(v);
      if (score != rec.score)
        out.differences.push_back(
            fmt::format("event {}: the verdict scores {} but {} was recorded", e.seq, score, rec.score));
      if (FailureSignature(v) != rec.signature)
        out.differences.push_back(fmt::format("event {}: the verdict's failure signature is '{}', not '{}'", e.seq,
                                              FailureSignature(v), rec.signature));
    } else if (const auto* closed = std::get_if<RoundClosedEvent>(&*typed); closed && s.current && s.best) {
      ++out.rounds;
      RoundDecision again = CloseRoundDecision(RoundInputFrom(s), forensics_of);
      if (!(again == closed->decision))
        out.differences.push_back(fmt::format(
            "event {} (round {}): re-deciding gives {}", e.seq, s.round,
            nlohmann::json::diff(DecisionJson(s.round, closed->decision), DecisionJson(s.round, again)).dump()));
    }
    s.Apply(*typed, e.wall_us);
  }
  return out;
}

}  // namespace kforge
