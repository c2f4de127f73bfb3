#pragma once
// The repair engine: forensics -> repair -> validate, until the candidate is certified on
// the full set, a guard stops the run, or the budget ends. Every step is an event persisted
// before it takes effect, so a run killed at any point resumes from its log with no step
// lost or repeated (see run_state.h for the events).
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/fs.h"
#include "core/task.h"
#include "engine/run_state.h"

namespace kforge {

class ArtifactStore;
class KnowledgeBase;
class Repairer;
class RepairerRegistry;
class RepairSession;
class Clock;
class RunToolHost;
struct RepairContext;
struct TurnResult;
class Machine;
class CancellationToken;
class PinnedValues;
class TaskVerifier;
struct Verdict;
struct VerifyOptions;

/// The lock file a run holds while it is driven (RepairRun::Run); readers that need the whole
/// run (replay, pack) refuse a run whose lock is held.
inline constexpr const char kRunLockFile[] = "run.lock";

struct RepairEnv {
  /// The toolchain and, through it, the environment (clock, entropy, processes, the
  /// configuration: compile cache, knowledge-base state). Required.
  Machine* machine = nullptr;
  std::string kb_dir;                                ///< curated knowledge base (kb/ in the source tree)
  std::function<void(const std::string&)> progress;  ///< one line per step (stderr in the CLI)
  /// Checked between steps and between trials: when cancelled, the run records a
  /// `cancelled` event and Run() returns with the run unfinished. Not owned; may be null.
  const CancellationToken* cancel = nullptr;
  /// Where repairers come from; null: BuiltinRepairers(). Not owned.
  const RepairerRegistry* repairers = nullptr;
  /// Interactive runs: asked once after each round (and after the first validation) what
  /// to do next — go on, stop, or add a requirement. Its answer is recorded before it takes
  /// effect. Null: the run never waits for anyone.
  std::function<UserDecidedEvent(const RunState&)> between_rounds;
  /// A replay's recorded values (engine/pinned_values.h); null: every value is taken live.
  /// Not owned.
  PinnedValues* pinned = nullptr;
  /// Where the run's verifier comes from; null: MakeTaskVerifier (verify/task_verifier.h).
  /// Tests give one that answers from a table, so the loop's decisions are tested without
  /// compiling or running anything.
  std::function<std::unique_ptr<TaskVerifier>(TaskFormat, const std::string& text, const std::string& origin, Machine&,
                                              const std::string& work_dir)>
      verifiers;
  /// Called after each event is persisted and applied, with how many this process has
  /// appended: the seam where tests of resume inject a fault (service/fault_injection.h
  /// raises a signal; a unit test throws). Null: nothing.
  std::function<void(int appended)> after_append;
};

class RepairRun {
 public:
  /// Starts a new run in `run_dir` (created; must not hold a run already). An empty
  /// `candidate_source` starts from the task alone: the repairer's first turn writes it.
  static std::unique_ptr<RepairRun> Create(const std::string& run_dir, const std::string& task_text,
                                           const std::string& task_origin, const std::string& candidate_source,
                                           const RunConfig& config, const RepairEnv& env);
  /// Starts a replay of a recorded run in `run_dir`: the same task, initial candidate,
  /// configuration and knowledge-base snapshot (artifacts copied from `recorded`), with the
  /// run's values coming from `env.pinned`.
  static std::unique_ptr<RepairRun> CreateReplay(const std::string& run_dir, const RunStartedEvent& started,
                                                 const ArtifactStore& recorded, const RepairEnv& env);
  /// Opens an existing run to resume it or inspect it.
  static std::unique_ptr<RepairRun> Open(const std::string& run_dir, const RepairEnv& env);
  ~RepairRun();

  /// Drives the run until it finishes; returns the final state. Safe to call on a finished
  /// run (it only rewrites the summary).
  const RunState& Run();
  const RunState& state() const { return state_; }
  EventLog& log() { return *log_; }
  const std::string& dir() const { return dir_; }
  /// summary.json as Run() last wrote it (null before).
  const nlohmann::json& summary() const { return summary_; }

 private:
  RepairRun(std::string dir, const RepairEnv& env);
  void Load();
  Event Append(const RunEvent& event);
  Scored Validate(const std::string& source, int round, int index, const std::string& origin,
                  const std::string& previous);
  /// KernelBench: a passing proposal that moved work from the near-miss's kernels to the
  /// framework or a library (WorkMovedToFramework) fails, `repair.moved_to_framework`.
  void RefuseFallback(Verdict* v) const;
  /// Times the near-miss (index < 0) and each certified proposal (verify/speed.h) into the
  /// verdict; a proposal slower than RunConfig::degenerate_below of the near-miss's speed
  /// fails, FailureClass::kDegenerate ("repaired by degeneration"), and the run goes on.
  void JudgeSpeed(const std::string& source, int index, Verdict* v);
  /// The run's first validation (the near-miss), as recorded; null before it.
  const Scored* NearMiss() const;
  nlohmann::json NearMissVerdict() const;
  /// A ModelNew candidate of a KernelBench run, by the KernelBench verifier (both verdicts).
  void RequestRepair();
  void CallRepairer();
  void CloseRound();
  void Finish(bool success, const std::string& reason, const std::string& message);
  /// One step of the run, chosen from the folded state alone, so a resumed run takes the same
  /// step an uninterrupted one would have.
  void Step();
  /// The run's final candidate: the current one, unless the best one is better (certified
  /// where it is not, or scored higher): after an interactive "go on" or a rollback-free
  /// round, the current candidate can be a worse one than the run found.
  const Scored* FinalCandidate() const;
  void WriteOutputs();
  void Progress(const std::string& line);
  /// The repairer's turn: pinned by a replay, or asked live.
  TurnResult Turn(const RepairContext& ctx, RunToolHost& tools, bool* deterministic);

  std::string dir_;
  RepairEnv env_;
  Machine& machine_;
  std::unique_ptr<EventLog> log_;
  std::unique_ptr<ArtifactStore> artifacts_;
  std::unique_ptr<KnowledgeBase> kb_;
  std::unique_ptr<Repairer> repairer_;
  std::unique_ptr<RepairSession> session_;  ///< the current attempt's conversation
  int session_attempt_ = 0;
  std::unique_ptr<TaskVerifier> verifier_;  ///< the task's format: its reference and how candidates run
  const Task& task() const;
  RunState state_;
  std::vector<RunEvent> events_;  ///< the log, decoded: read once on open, appended as it grows
  nlohmann::json summary_;
  int appended_ = 0;
  /// The cases a speed is measured on (the near-miss passed all their trials), read once from
  /// the near-miss's verdict.
  std::optional<std::set<std::string>> timed_cases_;
  bool replay_ = false;     ///< its knowledge base is the recording's snapshot alone
  Sync sync_ = Sync::kYes;  ///< a replay's files are not synced one by one (it can be made again)
};

}  // namespace kforge
