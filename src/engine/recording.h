#pragma once
// A recorded run as a replay, a diff and a bisection read it.
//
// Design note:
//  - `Recording::Open` reads a run directory's log and artifacts. It refuses a run that is
//    still being driven (its lock is held), a damaged log and a log from a newer kforge,
//    each with a sentence saying what to do; it holds a shared lock while it lives.
//  - `RunInputs` are the values the run took from the world (engine/pinned_values.h), by
//    position: each validation's verdict, each non-deterministic turn's answer, each
//    round's clock read, each decision a user made. A replay serves them; a bisection mixes
//    two runs' inputs slot by slot.
//  - Counterfactuals (`Set`) edit an input event's payload in memory before the inputs are
//    read; the run directory is never written.
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/fs.h"
#include "engine/events.h"
#include "engine/pinned_values.h"
#include "record/artifact_store.h"
#include "record/event_log.h"
#include "record/run_files.h"

namespace kforge {

class Clock;

class Recording {
 public:
  static Recording Open(const std::string& run_dir, Clock& clock);

  const std::string& dir() const { return dir_; }
  const ArtifactStore& artifacts() const { return artifacts_; }
  /// The events this kforge knows, in order (cancelled/resumed included).
  const std::vector<Event>& events() const { return events_; }
  /// The events as recorded, before any Set.
  const std::vector<Event>& original_events() const { return original_; }
  const RunStartedEvent& started() const { return started_; }
  bool finished() const;

  /// Replaces FIELD (a dotted path, array positions as numbers) of the input event `seq`
  /// with `value`. A validated event's new verdict is diagnosed afresh by the replay. Only values the run took from the
  /// world can be set (validated: its `verdict`; repair_proposed; clock_read; user_decided); throws UsageError naming
  /// the event and what can be set otherwise.
  void Set(int64_t seq, const std::string& field, const nlohmann::json& value);

 private:
  explicit Recording(const std::string& dir) : dir_(dir), artifacts_(RunFiles(dir).artifacts()) {}

  std::string dir_;
  ArtifactStore artifacts_;
  std::vector<Event> events_, original_;
  RunStartedEvent started_;
  ScopedFd lock_;
};

/// Reads an artifact from the first store that has it.
class ArtifactReader {
 public:
  explicit ArtifactReader(std::vector<const ArtifactStore*> stores) : stores_(std::move(stores)) {}
  std::string Get(const std::string& hash) const;
  /// The file of the first store that holds `hash` (not read, not verified).
  std::string PathOf(const std::string& hash) const;

 private:
  std::vector<const ArtifactStore*> stores_;
};

/// The values a run took from the world, by position.
struct RunInputs {
  struct Validation {
    int64_t seq = 0;
    std::string candidate, verdict, forensics;  ///< artifacts (forensics "" : none recorded)
    uint64_t seed = 0;
    std::string tensors;  ///< the kept output tensors' artifact ("" : none)
  };
  struct Turn {
    int64_t seq = 0;
    int round = 0;
    std::string current;  ///< the candidate the turn was asked to repair
    RepairProposedEvent proposed;
  };
  struct ClockRead {
    int64_t seq = 0;
    int round = 0;
    int64_t elapsed_s = 0;
  };
  struct UserDecision {
    int64_t seq = 0;
    UserDecidedEvent decided;
  };
  std::vector<Validation> validations;
  std::vector<Turn> turns;  ///< every turn, deterministic ones included (they hold their place)
  std::vector<ClockRead> clocks;
  std::vector<UserDecision> users;
  /// The run ended because the environment stopped it: its message (a replay that reaches
  /// the end of the record there stops the same way).
  std::optional<std::string> environment_error;
};

RunInputs InputsOf(const std::vector<Event>& events);

/// The inputs of a recording served to a replay, for every layer not in `live`.
class PinnedInputs : public PinnedValues {
 public:
  PinnedInputs(RunInputs inputs, std::set<Layer> live, ArtifactReader artifacts)
      : inputs_(std::move(inputs)), live_(std::move(live)), artifacts_(std::move(artifacts)) {}
  std::optional<PinnedValidation> Validation(const ValidationQuestion& q) override;
  std::optional<PinnedTurn> Turn(const TurnQuestion& q) override;
  std::optional<int64_t> ElapsedSeconds(int round) override;
  /// The user's recorded decision after `round` (interactive runs).
  UserDecidedEvent UserDecision(int round);

 private:
  [[noreturn]] void EndOfRecording(const std::string& what) const;

  RunInputs inputs_;
  std::set<Layer> live_;
  ArtifactReader artifacts_;
};

}  // namespace kforge
