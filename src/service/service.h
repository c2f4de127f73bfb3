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
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/task.h"
#include "engine/agreement.h"
#include "engine/bisect.h"
#include "engine/decision_replay.h"
#include "engine/replay.h"
#include "engine/run_config.h"
#include "engine/run_state.h"
#include "exec/device.h"
#include "record/kernel_db.h"
#include "record/pack.h"
#include "record/run_files.h"
#include "service/regress.h"
#include "verify/bench.h"
#include "verify/forensics.h"
#include "verify/kernelbench/verifier.h"
#include "verify/mutate.h"
#include "verify/static_checks.h"
#include "verify/verdict.h"
#include "verify/verifier.h"

namespace kforge {

class CancellationToken;
class Env;
class Machine;
class WarmWorkers;
struct Config;

/// One `validated` event of a run.
struct RunValidation {
  int64_t seq = 0;
  Scored scored;
};

struct ReferenceInfo {
  std::string name;
  std::vector<std::string> intermediates;  ///< what KFORGE_PROBE may name
};

/// What `kforge verify --full` adds to a task's published cases.
struct TaskCoverage {
  std::vector<std::string> fixed_inputs;  ///< the adversarial distributions, by name
  size_t fixed_input_trials = 0;
  size_t random_shape_trials = 0;  ///< on two random-shape cases
};

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
/// Interactive runs: asked between rounds what to do next (engine/repair_loop.h).
using BetweenRoundsFn = std::function<UserDecidedEvent(const RunState&)>;

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

/// `kforge generate`: a kernel written by the repairer (a model) and driven through the same
/// loop. What `request` is decides the kind:
///  A  a plain description: the model writes a task file, shown through `confirm` before any
///     kernel is written;
///  B  a task (bundled name or file): a candidate from scratch;
///  C  a task and `candidate_path`: that kernel, verified and repaired;
///  D  `from_run` set: `request` is a change to that run's result ("use shared memory"); its
///     task, final (or best) code and rounds carry forward.
enum class GenerateKind { kDescription, kTask, kExistingKernel, kChangeOfRun };
std::string_view GenerateKindName(GenerateKind k);

struct GenerateRequest {
  std::string request;
  std::string candidate_path;
  std::string from_run;
  std::string out;   ///< run directory; "" : kforge-runs/<task>-<time>
  RunConfig config;  ///< the repairer must be able to write (llm by default in the CLI)
  std::optional<uint64_t> seed;
  bool backend_set = false;  ///< config.backend was chosen (else D keeps the earlier run's)
};

/// Asked before acting on something the engine derived (`what`: "task"), with its text;
/// false stops the call. Non-interactive front ends answer from --yes.
using ConfirmFn = std::function<bool(const std::string& what, const std::string& text)>;

struct GenerateResult {
  GenerateKind kind = GenerateKind::kTask;
  std::string task_text;   ///< the task the run uses (A: as the model wrote it)
  std::string draft_path;  ///< A: where the written task was saved
  bool declined = false;   ///< `confirm` said no: no run was started
  Usage task_usage;        ///< A: the model call that wrote the task
  std::string error;       ///< A: why the model wrote no usable task (no run was started)
  std::optional<RunResult> run;
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

/// `kforge replay`: a recorded run (a run directory or a pack) replayed with some layers
/// live and some values changed (engine/replay.h).
struct ReplayRequest {
  std::string run;                ///< a run directory, or a pack file (kforge pack)
  std::set<Layer> live;           ///< layers re-executed for real; the rest are pinned
  std::vector<std::string> sets;  ///< counterfactuals "SEQ.FIELD=VALUE" (VALUE: JSON, text, or @FILE)
  std::string out;                ///< the replay's run directory; "" : kforge-runs/<task>-replay-<time>
};

struct ReplayReport {
  ReplayResult result;
  int refused_processes = 0, refused_http = 0;  ///< live calls a pinned layer refused
  /// kPassed: the replay matched the recording; kFailed: it diverged or left the record.
  Outcome outcome() const { return result.matched() ? Outcome::kPassed : Outcome::kFailed; }
  nlohmann::json ToJson() const;
};

/// `kforge agree`: agreement and outcome variance per task over several runs, and with
/// `vs`, how much of the pass-rate difference between two sets of runs is noise.
struct AgreementReport {
  std::vector<TaskAgreement> tasks, tasks_vs;
  std::optional<PassRateComparison> comparison;
  nlohmann::json ToJson() const;
};

class RepairRun;

/// A source file a command was given, or UsageError "cannot read candidate PATH: why" (the
/// sentence every front end shows). `what` names it: "candidate", "KernelBench reference".
std::string ReadCandidate(const std::string& path, const char* what = "candidate");

/// A run that exists on disk (its directory, log and run_started event) but has not been
/// driven yet. Front ends that answer at once (the MCP server) create it while the request
/// waits, so a bad task or candidate is refused there, and drive it on another thread.
/// The cancellation token and progress function it was created with must outlive Drive().
class StartedRun {
 public:
  explicit StartedRun(std::unique_ptr<RepairRun> run);
  StartedRun(StartedRun&&) noexcept;
  ~StartedRun();
  const std::string& dir() const;
  /// Drives the run until it finishes, a guard stops it, or its token is cancelled.
  RunResult Drive();

 private:
  std::unique_ptr<RepairRun> run_;
};

class Service {
 public:
  /// A service on `machine`, which the caller keeps alive.
  explicit Service(Machine& machine);
  /// A service with a Machine of its own on `env` (what a front end builds once).
  explicit Service(Env& env);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  /// A task by its bundled name ("softmax") or by a path to a task file.
  Task ResolveTask(const std::string& name_or_path) const;

  VerifyResult Verify(const VerifyRequest& request, const CancellationToken& cancel);
  CheckResult Check(const CheckRequest& request);
  /// Whether `spec`, with the configured endpoint filled in (flags, then OPENAI_BASE_URL,
  /// KFORGE_MODEL and the LLM config), names a model to ask.
  bool HasModelEndpoint(RepairerSpec spec) const;

  /// Starts a run and drives it until it finishes, a guard stops it, or `cancel` fires.
  RunResult Repair(const RepairRequest& request, const CancellationToken& cancel, const ProgressFn& progress,
                   const BetweenRoundsFn& between_rounds = nullptr);
  /// Repair() in two steps: the run is created now (or the request refused) and driven later.
  StartedRun StartRepair(const RepairRequest& request, const CancellationToken& cancel, const ProgressFn& progress,
                         const BetweenRoundsFn& between_rounds = nullptr);
  /// Continues a run that was interrupted (a finished run only rewrites its summary).
  RunResult Resume(const std::string& run_dir, const CancellationToken& cancel, const ProgressFn& progress,
                   const BetweenRoundsFn& between_rounds = nullptr);
  /// Resume() in two steps: the run is opened now (or refused) and driven later.
  StartedRun StartResume(const std::string& run_dir, const CancellationToken& cancel, const ProgressFn& progress,
                         const BetweenRoundsFn& between_rounds = nullptr);
  /// Generates a kernel (see GenerateRequest) and runs it through the repair loop.
  GenerateResult Generate(const GenerateRequest& request, const CancellationToken& cancel, const ProgressFn& progress,
                          const ConfirmFn& confirm, const BetweenRoundsFn& between_rounds = nullptr);
  RunStatus Status(const std::string& run_dir) const;
  std::vector<Event> Log(const std::string& run_dir) const;
  /// One stored artifact of the run in `run_dir` (a candidate's source, a verdict), or
  /// nullopt when the run holds none by that hash.
  std::optional<std::string> Artifact(const std::string& run_dir, const std::string& hash) const;
  /// The run's validations in the order they were recorded.
  std::vector<RunValidation> Validations(const std::string& run_dir) const;

  /// The static checks every candidate meets, with what each catches (service_catalog.cc).
  const std::vector<StaticCheckInfo>& StaticChecks() const;
  /// The built-in references by name, with the intermediates each exposes to KFORGE_PROBE.
  std::vector<ReferenceInfo> References() const;
  /// What a --full run adds to `task`'s published cases.
  TaskCoverage Coverage(const Task& task) const;
  /// Mutates a correct candidate and judges every mutant (verify/mutate.h).
  MutationReport Mutate(const Task& task, const std::string& candidate_path, const MutationOptions& options);
  /// Knowledge-base entries, not rejected, matching a failure class, a category and a text
  /// (each empty: any), as the JSON `kforge kb` prints.
  nlohmann::json KnowledgeEntries(const std::string& failure_class, const std::string& category,
                                  const std::string& text) const;
  /// Re-derives every score and round decision of a run from its record alone.
  DecisionReplay CheckDecisions(const std::string& run_dir) const;

  /// Replays a recorded run (service/replay.cc).
  ReplayReport Replay(const ReplayRequest& request, const CancellationToken& cancel, const ProgressFn& progress);
  /// Aligns two runs of one task and lists their differing recorded values by layer.
  RunComparison Diff(const std::string& run_a, const std::string& run_b) const;
  /// Delta debugging over the values two runs took from the world; each mix is replayed
  /// strictly in a directory under `out`.
  BisectResult Bisect(const std::string& good, const std::string& bad, const std::string& out,
                      const CancellationToken& cancel, const ProgressFn& progress);
  AgreementReport Agree(const std::vector<std::string>& runs, const std::vector<std::string>& vs) const;
  /// `kforge pack`: the run in one file; `kforge unpack`: its files back, checked.
  PackSummary Pack(const std::string& run_dir, const std::string& pack_path) const;
  PackSummary Unpack(const std::string& pack_path, const std::string& out_dir) const;

  BenchReport Bench(const BenchRequest& request, const CancellationToken& cancel);
  /// kforge bench REF.py MODELNEW.py: the KernelBench verifier, then KernelBench's timing of
  /// a certified candidate and its reference (verdict.kernelbench.timing).
  VerifyResult BenchKernelBench(const BenchRequest& request, BackendKind backend, const CancellationToken& cancel);
  /// The GPU the cuda backend would use (throws EnvironmentError without one), with its
  /// stored ceilings, or freshly measured ones when `calibrate`.
  DeviceReport Device(bool calibrate);

  /// kforge regress (service/regress.h): each kernel of the golden file verified again, and
  /// on cuda benched; recorded in the kernel database at `db_path` when one is given.
  RegressReport Regress(const std::string& golden_path, bool accept, const CancellationToken& cancel,
                        const std::string& db_path = "");
  /// Appends a record to the kernel database at `db_path`, stamped with the clock.
  void RecordKernel(const std::string& db_path, KernelRecord record) const;

  /// From now on, KernelBench verdicts take workers started before their jobs, up to
  /// `per_spec` of them kept waiting (verify/kernelbench/warm_workers.h): kforge serve's
  /// verifiers, which run one verdict after another.
  void KeepWarmWorkers(int per_spec);
  /// Starts the warm workers the verdicts so far took (call between verdicts: their imports
  /// then do not share the machine with one being judged).
  void RefillWarmWorkers();

  Machine& machine() { return machine_; }
  Env& env() const;
  const Config& config() const;

 private:
  /// The run directory asked for, or kforge-runs/<task>-<time>.
  std::string OutDir(const std::string& requested, const std::string& task_name) const;
  /// Resolves the model endpoint (recorded without the key), draws the seed when none is
  /// given, then creates the run.
  StartedRun CreateRun(const std::string& task_text, const std::string& task_origin, const std::string& candidate,
                       RunConfig config, std::optional<uint64_t> seed, const std::string& out,
                       const CancellationToken& cancel, const ProgressFn& progress,
                       const BetweenRoundsFn& between_rounds);
  std::unique_ptr<Machine> owned_;  ///< set by Service(Env&); declared before machine_
  Machine& machine_;
  std::unique_ptr<WarmWorkers> warm_workers_;  ///< KeepWarmWorkers
};

}  // namespace kforge
