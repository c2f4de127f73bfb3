#pragma once
// kforge as a library: every command the CLI offers, as a call that returns a typed result.
//
// Design note:
//  - The CLI (app/) parses flags, calls one of these, and formats the result; an MCP server
//    or a report generator is another front end over the same calls. No result is printed
//    here, and nothing here exits the process.
//  - A Service holds no run state of its own: each call opens what it needs (a run
//    directory, a task) and closes it, so one process can serve several runs, one after
//    another, on one Machine. (The Machine's probes are cached per Machine and are not
//    guarded for concurrent callers; run concurrent requests on separate Machines.)
//  - Long calls (verify, repair, resume, bench) take a cancellation token: when it fires
//    they stop at the next safe point and return what they have (a repair records a
//    `cancelled` event; Outcome::kInterrupted).
//  - Errors a user can act on are thrown as UsageError / EnvironmentError with the sentence
//    to show; outcomes (a failed verdict, a run that did not repair) are values.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/task.h"
#include "engine/decision_replay.h"
#include "engine/run_config.h"
#include "engine/run_state.h"
#include "exec/device.h"
#include "verify/bench.h"
#include "verify/forensics.h"
#include "verify/verdict.h"
#include "verify/verifier.h"

namespace kforge {

class CancellationToken;
class Machine;

/// How a call ended, for any front end (the CLI maps it to its exit status).
enum class Outcome {
  kPassed,       ///< verified / repaired and certified / clean / timed and plausible
  kFailed,       ///< the candidate failed, the run did not repair it, findings were reported
  kInterrupted,  ///< cancelled; a repair can be resumed
  kError,        ///< the environment stopped it (no compiler, no GPU, ...)
};
std::string_view OutcomeName(Outcome o);

struct VerifyRequest {
  std::string task;            ///< bundled name or path of a task file
  std::string candidate_path;  ///< source file exporting kforge_run
  VerifyOptions options;       ///< its `cancel` is set from the call's token
  bool forensics = false;      ///< diagnose a failing verdict
};

struct VerifyResult {
  Task task;
  Verdict verdict;
  std::optional<Forensics> forensics;  ///< when asked for and the verdict failed
  Outcome outcome() const { return verdict.passed ? Outcome::kPassed : Outcome::kFailed; }
  /// The verdict JSON, with "forensics" added when present.
  nlohmann::json ToJson() const;
};

struct CheckRequest {
  std::string source;
  BackendKind backend = BackendKind::kCpu;
  std::string task;  ///< optional: whose allowed_libraries apply
};

struct CheckResult {
  std::vector<IntegrityFinding> findings;
  double milliseconds = 0;
  Outcome outcome() const { return findings.empty() ? Outcome::kPassed : Outcome::kFailed; }
  nlohmann::json ToJson() const;
};

struct RepairRequest {
  std::string task;
  std::string candidate_path;  ///< "" : the repairer writes the first candidate
  std::string out;             ///< run directory; "" : kforge-runs/TASK-<time>
  RunConfig config;            ///< its seed is drawn from the environment when `seed` is unset
  std::optional<uint64_t> seed;
};

/// One line per step of a run, as it happens.
using ProgressFn = std::function<void(const std::string&)>;

struct RunResult {
  std::string dir;
  RunState state;
  nlohmann::json summary;  ///< summary.json, with "run_dir"
  Outcome outcome() const;
};

/// What `kforge status` shows: the folded state of a run, finished or not.
struct RunStatus {
  std::string dir;
  RunState state;
  nlohmann::json ToJson() const;
};

struct BenchRequest {
  std::string task;
  std::string candidate_path;
  BenchOptions options;  ///< baselines_dir defaults to the bundled baselines; cancel is set
};

struct DeviceReport {
  CudaDevice device;
  DeviceCeilings ceilings;
  nlohmann::json ToJson() const;
};

class Service {
 public:
  explicit Service(Machine& machine) : machine_(machine) {}

  /// A task by its bundled name ("softmax") or by a path to a task file.
  Task ResolveTask(const std::string& name_or_path) const;

  VerifyResult Verify(const VerifyRequest& request, const CancellationToken& cancel);
  CheckResult Check(const CheckRequest& request);

  /// Starts a run and drives it until it finishes, a guard stops it, or `cancel` fires.
  RunResult Repair(const RepairRequest& request, const CancellationToken& cancel, const ProgressFn& progress);
  /// Continues a run that was interrupted (a finished run only rewrites its summary).
  RunResult Resume(const std::string& run_dir, const CancellationToken& cancel, const ProgressFn& progress);
  RunStatus Status(const std::string& run_dir) const;
  std::vector<Event> Log(const std::string& run_dir) const;
  /// Re-derives every score and round decision of a run from its record alone.
  DecisionReplay CheckDecisions(const std::string& run_dir) const;

  BenchReport Bench(const BenchRequest& request, const CancellationToken& cancel);
  /// The GPU the cuda backend would use (throws EnvironmentError without one), with its
  /// stored ceilings, or freshly measured ones when `calibrate`.
  DeviceReport Device(bool calibrate);

  Machine& machine() { return machine_; }

 private:
  Machine& machine_;
};

}  // namespace kforge
