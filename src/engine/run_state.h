#pragma once
// A repair run's control state: a pure fold over its events. Nothing about a run lives
// only in memory; resuming means replaying the log through Apply and continuing.
//
// Event types (typed in events.h, which owns their payloads):
//   run_started     control  task and candidate artifacts, config, seed
//   validated       tensor   one candidate's verdict: round, index, scores, artifacts
//   repair_requested control round and attempt; persisted before the repairer is called
//   repair_proposed token    the repairer's proposals (artifact hashes), in order
//   round_closed    control  adoption, best snapshot, rollback and every guard decision
//   validation_trace trace   after each `validated`: compiler, flags and log digest, device,
//                            sandbox and its layers, timings (derived from the verdict artifact)
//   clock_read      trace    the wall-clock reading the round's budget guard uses, before the
//                            round closes; a resumed or replayed run decides from it
//   cancelled       control  the user stopped the run (reason); nothing half-done precedes it
//   resumed         control  `kforge resume` continued a cancelled run
//   run_finished    control  success and reason
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/events.h"

namespace kforge {

struct RunState {
  bool started = false;
  RunConfig config;
  std::string task_artifact, task_name, initial_candidate, kb_snapshot;
  int64_t started_wall_us = 0;

  std::optional<Scored> current, best;
  int round = 0;  ///< rounds requested so far
  int attempt = 1;
  int rounds_in_attempt = 0;
  int extra_rounds = 0;  ///< soft-budget extension granted in this attempt
  bool extended = false;
  int turns = 0;
  bool requested = false;              ///< a repair was requested for `round` and not yet proposed
  bool proposed = false;               ///< proposals for `round` are recorded
  std::vector<std::string> proposals;  ///< candidate artifacts of this round, in order
  std::vector<std::string> proposal_origins;
  std::vector<Scored> round_results;  ///< validations of this round, in order
  std::set<std::string> seen;         ///< every candidate validated or adopted so far
  int rounds_without_best = 0;
  int stagnant_rounds = 0;
  int repeated = 0;
  int build_error_rounds = 0;
  int precision_rounds = 0;
  int iterations = 0;                       ///< validations so far
  std::vector<FailureClass> error_history;  ///< the failure of every validation, in order

  bool trace_pending = false;     ///< the last `validated` has no `validation_trace` yet
  std::string last_verdict;       ///< its verdict artifact
  int clock_round = -1;           ///< the round a `clock_read` was recorded for
  int64_t clock_elapsed_s = 0;    ///< its reading
  bool probes_requested = false;  ///< the repairer asked for probes in this round
  bool turn_failed = false;       ///< this round's turn failed (its reason is in the event)
  Usage usage;                    ///< model calls and tokens over the whole run
  bool cancelled = false;         ///< the last control event was `cancelled`
  int64_t cancelled_wall_us = 0;
  int64_t paused_us = 0;  ///< time between cancelled and resumed events, not charged to the budget

  std::string stop_pending;   ///< a round_closed decided to stop; run_finished not yet written
  bool stop_success = false;  ///< ... because the run is certified
  std::string stop_message;
  bool finished = false;
  bool success = false;
  std::string finish_reason;
  std::string suggestion;          ///< the conductor's suggestion for the turn requested last
  std::string requirement;         ///< the latest requirement the user added between rounds ("" none)
  int user_round = -1;             ///< the round the user last decided after (interactive runs)
  bool regenerate_next = false;    ///< a new requirement: the next turn writes afresh from the task
  bool user_stop = false;          ///< the user chose to stop
  bool environment_error = false;  ///< the run finished because the environment stopped it

  /// Folds one event into the state. Unknown event types are ignored (forward compatible);
  /// a malformed payload or a newer log throws UsageError.
  void Apply(const Event& e);
  void Apply(const RunEvent& e, int64_t wall_us);

 private:
  void ApplyValidated(const ValidatedEvent& d);
  void ApplyRoundClosed(const RoundClosedEvent& e);
};

RunState FoldEvents(const std::vector<Event>& events);

}  // namespace kforge
