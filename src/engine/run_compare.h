#pragma once
// Two runs' records side by side: which recorded values differ, in which layer, and where
// the runs' trajectories first part.
//
// Design note:
//  - Events are aligned by position after dropping `cancelled` and `resumed` (they say when
//    a run was stopped, not what it decided). Where the event types at a position differ the
//    trajectories have parted; nothing after it is aligned.
//  - A difference is a leaf of the two payloads (a dotted path) with the layer of its event.
//    Where two validated events name different verdict artifacts, the verdicts themselves
//    are compared: their timing, compile and tool fields are the trace layer, the rest the
//    tensor layer. `run_started.kforge_version` and the events' wall-clock stamps are trace
//    and are not counted as a divergence.
//  - The divergence is the first position whose events differ in anything but those; the
//    first differing decision is the first differing control-layer event.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/recording.h"
#include "record/event_log.h"

namespace kforge {

struct ValueDifference {
  int64_t seq_a = 0, seq_b = 0;
  std::string type;
  Layer layer = Layer::kControl;
  std::string path;  ///< "score", "verdict>cases.3.run_ms"
  nlohmann::json a, b;
};

struct Divergence {
  size_t position = 0;  ///< in the aligned sequences
  int64_t seq_a = 0, seq_b = 0;
  std::string type_a, type_b;  ///< "" past the end of that run
  Layer layer = Layer::kControl;
  std::vector<ValueDifference> fields;        ///< empty when the types differ
  std::vector<std::string> before;            ///< the events just before it ("12 validated")
  std::vector<std::string> after_a, after_b;  ///< what followed in each run
};

struct RunComparison {
  size_t aligned = 0;  ///< positions compared
  size_t events_a = 0, events_b = 0;
  std::vector<ValueDifference> differences;  ///< every differing value, in order
  std::optional<Divergence> divergence;
  std::optional<Divergence> first_decision;
  size_t CountIn(Layer layer) const;
  nlohmann::json ToJson() const;
};

/// `a` and `b` read artifacts through `artifacts_a` and `artifacts_b`.
RunComparison CompareRuns(const std::vector<Event>& a, const ArtifactReader& artifacts_a, const std::vector<Event>& b,
                          const ArtifactReader& artifacts_b);

/// The divergence for the terminal: one line per differing field ("    score: 0.5 -> 1"), the
/// events before it and what followed in each run.
std::string DivergenceText(const Divergence& d, const std::string& name_a, const std::string& name_b);

}  // namespace kforge
