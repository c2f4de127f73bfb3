#pragma once
// The values a repair run takes from the world, as one seam a replay can pin.
//
// Design note:
//  - A run takes three kinds of value it cannot derive: a validation's verdict (tensor
//    layer: compiling and running the candidate), a repairer's turn (token layer: what a
//    model or an outside program answered) and the clock read that closes a round (trace
//    layer). A user's decision between rounds comes through RepairEnv::between_rounds.
//  - Each is asked for by position (the n-th validation, the n-th turn, the clock read
//    of a round) together with what the engine is asking about (the candidate and its seed, the
//    candidate the turn repairs, the round), so the same request made twice is two values.
//  - An implementation answers with the recorded value, nullopt to have the engine take it
//    live, or throws ReplayGap when the layer is pinned and the recording holds no answer
//    to this question (the trajectory left the recording). Never a live call in its place.
//  - A deterministic repairer's turn (recipes) is control logic, not a value: the engine
//    re-runs it, and the replay compares what it proposes with the recording.
#include <cstdint>
#include <optional>
#include <string>

#include "agent/repairer.h"
#include "verify/verdict.h"

namespace kforge {

/// What a validation is asked about.
struct ValidationQuestion {
  int iteration = 0;      ///< the n-th validation of the run (0: the initial candidate)
  std::string candidate;  ///< artifact hash of the source
  uint64_t seed = 0;
};

/// A recorded validation: its verdict, and the diagnosis made from it when the run was
/// recorded (null when it passed, or when a counterfactual changed the verdict). The
/// diagnosis reads evidence the verdict document summarises (every mismatch index), so a
/// replay takes it from the record rather than re-deriving it from the summary.
struct PinnedValidation {
  Verdict verdict;
  nlohmann::json forensics;
  /// The recorded small output tensors (engine/kept_outputs.h): their artifact and the file
  /// that holds it, which the replay adopts as it is ("" : none recorded).
  std::string tensors, tensors_path;
};

/// What a repairer's turn is asked about.
struct TurnQuestion {
  int turn = 0;  ///< the n-th turn of the run
  int round = 0;
  std::string current;  ///< the candidate being repaired ("" : written from the task)
};

/// A recorded turn: the repairer's answer, and the tool calls it made (the engine makes
/// them again through its tool host, so their answers are re-derived and compared).
struct PinnedTurn {
  TurnResult result;
  nlohmann::json tool_calls = nlohmann::json::array();
};

class PinnedValues {
 public:
  virtual ~PinnedValues() = default;
  virtual std::optional<PinnedValidation> Validation(const ValidationQuestion& q) = 0;
  virtual std::optional<PinnedTurn> Turn(const TurnQuestion& q) = 0;
  /// Seconds since the run started, read once when round `round` closes.
  virtual std::optional<int64_t> ElapsedSeconds(int round) = 0;
};

}  // namespace kforge
