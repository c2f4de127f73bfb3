#pragma once
// The events of a repair run as typed values, and their one serialisation.
//
// Design note:
//  - Every event the engine appends is one of the structs below. `Encode` and `Decode`
//    (events.cc) are the only code that names a payload field; the loop, the run-state
//    fold, the decision replay and the CLI read and write the structs.
//  - Each type has a stable name (what events.db stores) and a layer: tensor (a
//    validation's inputs and outputs), token (what a model-driven repairer said), trace
//    (the machine, the compiler, the clock), control (the engine's decisions).
//  - Payloads are versioned: `run_started` carries `events_version`. Version 1 logs (no
//    field) have the same payloads and are read as they are; a log from a newer kforge is
//    refused with a message (`CheckEventsVersion`). A type this kforge does not know decodes
//    to nothing and is skipped (forward compatible within a version).
//  - Encode(Decode(e)) == e for every event this version writes (events_test.cc, and the
//    end-to-end test over a whole run's log).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "agent/repairer.h"
#include "engine/run_config.h"
#include "record/event_log.h"
#include "verify/verdict.h"

namespace kforge {

inline constexpr int kRunEventsVersion = 2;

enum class EventType {
  kRunStarted,
  kValidated,
  kRepairRequested,
  kRepairProposed,
  kRoundClosed,
  kValidationTrace,
  kClockRead,
  kCancelled,
  kResumed,
  kRunFinished,
  kUserDecided,
  kUnknown,  ///< a name this kforge does not know (a log from a newer version)
};
std::string_view EventTypeName(EventType t);
EventType ParseEventType(std::string_view name);

/// What the engine knows about one validated candidate.
struct Scored {
  std::string candidate;  ///< artifact hash of the source
  std::string verdict;    ///< artifact hash of the verdict JSON
  std::string forensics;  ///< artifact hash of the forensics JSON ("" when it passed)
  double score = 0;
  bool passed = false;
  bool integrity = false;  ///< an integrity failure
  FailureClass failure = FailureClass::kNone;
  Level level = Level::kNone;
  std::string signature;  ///< identifies "the same error" across rounds
  std::string message;
  std::string origin;    ///< which repairer or KB entry proposed it
  std::string previous;  ///< the candidate it was derived from ("" for the initial one)
  int round = 0;
  int index = -1;     ///< -1 for the initial candidate
  int iteration = 0;  ///< order of validation in the run (0 = initial)
  bool operator==(const Scored&) const = default;
};

/// The guards that close a round (engine/guards.h), by name.
enum class GuardKind {
  kIntegrity,
  kBestSnapshot,
  kRepeatedFailure,
  kStagnation,
  kNearPass,
  kFp16Ceiling,
  kTurnBudget,
  kWallClock,
  kSoftBudget,
  kAttemptBudget,
  kRoundBudget,
  kOscillation,
  kNoProposals,
};
std::string_view GuardKindName(GuardKind g);

/// What a guard does to the run.
enum class GuardAction { kReject, kRollback, kStop, kExtend, kNewAttempt };
std::string_view GuardActionName(GuardAction a);

struct GuardDecision {
  GuardKind guard = GuardKind::kIntegrity;
  GuardAction action = GuardAction::kStop;
  std::string reason;
  bool operator==(const GuardDecision&) const = default;
};

/// Counters carried from round to round.
struct RoundCounters {
  int rounds_without_best = 0;
  int stagnant = 0;
  int repeated = 0;
  int build_error_rounds = 0;
  int precision_rounds = 0;
  bool operator==(const RoundCounters&) const = default;
};

/// How a round closed.
struct RoundDecision {
  std::string adopted;   ///< candidate made current ("" : none)
  std::string new_best;  ///< candidate made best ("" : none)
  bool rollback = false;
  bool new_attempt = false;
  int extend = 0;
  bool improved = false;
  bool success = false;  ///< certified: `stop` is "certified"
  RoundCounters counters;
  std::vector<GuardDecision> guards;
  std::string stop;  ///< the run's finish reason ("certified" or the stopping guard's name), "" to go on
  std::string stop_message;
  bool operator==(const RoundDecision&) const = default;
};

// ---- the events --------------------------------------------------------------------------

struct RunStartedEvent {
  std::string task_name, task_origin, task_artifact;
  std::string candidate;  ///< the initial candidate's artifact ("" : the repairer writes one)
  RunConfig config;
  std::string kforge_version;
  std::string kb_snapshot;  ///< artifact of the knowledge base as the run found it
  int events_version = kRunEventsVersion;
};

struct ValidatedEvent {
  Scored scored;
  uint64_t seed = 0;
  bool probes = false;
  /// The tensor layer per trial (input seed, outcome, output statistics): an artifact of
  /// that JSON array (a string), kept out of the log so the log folds fast; older logs
  /// hold the array inline.
  nlohmann::json trials;
  /// The small output tensors' bytes (engine/kept_outputs.h): an artifact, "" when none kept.
  std::string tensors;
};

struct RepairRequestedEvent {
  int round = 0;
  int attempt = 1;
  std::string repairer;
  bool write = false;  ///< no candidate yet: the repairer writes one from the task
  std::string current, forensics;
  /// The conductor's reading of the current failure, sent with the turn (turn_context.h).
  std::string suggestion;
};

struct ProposalRecord {
  std::string candidate, origin, description;
};

struct RepairProposedEvent {
  int round = 0;
  std::vector<ProposalRecord> proposals;
  int skipped_seen = 0;
  std::vector<std::string> skipped;  ///< their artifacts (a replay proposes them again; empty in older logs)
  std::vector<std::string> kb_hits;
  nlohmann::json tool_calls = nlohmann::json::array();  ///< engine/tool_host.h's record of each call
  bool probes_requested = false;
  Usage usage;
  bool deterministic = true;  ///< a recipe's answer (control layer) rather than a model's (token layer)
  std::string turn_error;     ///< why the turn failed (a malformed answer, no endpoint), "" when it did not
  std::string transcript;     ///< artifact of the turn's conversation ("" for repairers without one)
};

struct KbUpdate {
  std::string id;
  bool succeeded = false, integrity = false;
  bool degenerated = false;  ///< led to a repair by degeneration (FailureClass::kDegenerate)
};

struct RoundClosedEvent {
  int round = 0;
  RoundDecision decision;
  std::vector<KbUpdate> kb_updates;
};

struct ValidationTraceEvent {
  nlohmann::json trace;  ///< compiler, flags and log digest, device, sandbox layers, timings
};

struct ClockReadEvent {
  int round = 0;
  int64_t elapsed_s = 0;
};

struct CancelledEvent {
  std::string reason;
  int round = 0, attempt = 1;
};

struct ResumedEvent {
  int round = 0;
};

/// What the user decided between rounds of an interactive run (--interactive).
enum class UserDecision { kContinue, kStop, kRequirement };
std::string_view UserDecisionName(UserDecision d);

struct UserDecidedEvent {
  int round = 0;
  UserDecision decision = UserDecision::kContinue;
  std::string text;  ///< kRequirement: the new requirement, sent with every later turn
};

struct RunFinishedEvent {
  bool success = false;
  std::string reason, message;
  std::string final_candidate;
  bool environment = false;  ///< the environment stopped it (no compiler, no GPU), not a guard
};

using RunEvent = std::variant<RunStartedEvent, ValidatedEvent, RepairRequestedEvent, RepairProposedEvent,
                              RoundClosedEvent, ValidationTraceEvent, ClockReadEvent, CancelledEvent, ResumedEvent,
                              RunFinishedEvent, UserDecidedEvent>;

struct EncodedEvent {
  EventType type;
  Layer layer;
  nlohmann::json data;
};

EventType TypeOf(const RunEvent& e);
EncodedEvent Encode(const RunEvent& e);
/// The typed event, or nothing for a type this kforge does not know. Throws UsageError
/// naming the event when a known type's payload is malformed.
std::optional<RunEvent> Decode(const Event& e);
/// Throws UsageError when a run was written by a newer kforge's events.
void CheckEventsVersion(const RunStartedEvent& e, const std::string& where);

/// The round_closed payload of `d` without its knowledge-base updates (decision replay
/// compares these).
nlohmann::json DecisionJson(int round, const RoundDecision& d);

}  // namespace kforge
