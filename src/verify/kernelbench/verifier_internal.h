#pragma once
// The KernelBench verifier's parts, shared by its two files: verifier.cc (the verdict's
// steps: the checks, the extensions, the trials, both verdicts) and verifier_workers.cc (the
// reference's and the candidate's worker processes: their jobs, deadlines and deliveries).
// Not for use outside verify/kernelbench/: verifier.h is the interface.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/cancel.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/frames.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/text.h"
#include "core/untrusted_json.h"
#include "exec/confined_program.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "verify/kernelbench/attribution.h"
#include "verify/kernelbench/extensions.h"
#include "verify/kernelbench/judge.h"
#include "verify/kernelbench/load_inline_build.h"
#include "verify/kernelbench/reference_store.h"
#include "verify/kernelbench/torch_worker.h"
#include "verify/kernelbench/verifier.h"
#include "verify/kernelbench/warm_workers.h"
#include "verify/kernelbench/worker_progress.h"
#include "verify/verifier.h"

namespace kforge {
class GpuJudge;
}  // namespace kforge

namespace kforge::kernelbench_internal {

using nlohmann::json;

constexpr int kKernelBenchTrials = 5;
/// The worker's end of its export socket (python/kforge_torch_worker.py, "output_socket").
constexpr int kExportsFd = 5;
/// How long a candidate's worker may wait for its extensions to build (the engine's builds
/// have their own limits; it always says when they are done).
constexpr int64_t kBuildAllowanceMs = 30 * 60 * 1000;
/// The reference's torch.compile and its timed calls (inductor's first compile of a model).
constexpr int64_t kCompiledTimingAllowanceMs = 5 * 60 * 1000;
/// How long the candidate's module may take to load when its load_inline arguments are read
/// by running it (ResolveByRunning): torch's import and the module's top level.
constexpr int64_t kResolveTimeoutMs = 120000;
/// How long one extension's build may take (kforge's own, or torch's load_inline).
constexpr int64_t kExtensionBuildTimeoutMs = 300000;
// Distributions of the certified trials beyond KernelBench's own (python/kforge_torch_worker.py).
const char* const kLightDistributions[] = {"normal", "all_negative", "negative_offset"};
const char* const kFullDistributions[] = {"uniform", "large_magnitude", "large_offset", "small_magnitude",
                                          "signed_rows"};

class KernelBenchVerifier {
 public:
  KernelBenchVerifier(Machine& machine, const KernelBenchOptions& options) : machine_(machine), options_(options) {
    options_.limits.address_space_bytes = 0;  // Python with torch maps far more than it uses
    // Outputs go back to the engine as files (a KernelBench level-1 tensor is 1 GiB or more).
    options_.limits.file_size_bytes = std::max<int64_t>(options_.limits.file_size_bytes, int64_t{16} << 30);
  }

  Verdict Run(const std::string& reference_path, const std::string& candidate_path);

 private:
  /// What one Run() has found so far.
  struct RunState {
    Verdict v;
    KernelBenchVerdict kb;
    /// Static integrity findings fail the certified verdict, but the candidate still builds
    /// and runs for the KernelBench-compatible one: KernelBench would run it.
    std::vector<IntegrityFinding> static_findings;
    json placement = json::array();  ///< compute in the framework or a library, found in the source
    double judge_seconds = 0;        ///< reading and comparing outputs, beside the workers
    int64_t start_ns = 0;
    GpuJudge* gpu_judge = nullptr;             ///< judges outputs handed over in GPU memory; null: files only
    std::optional<ReferenceStore> references;  ///< kept reference outputs; none: the reference always runs
  };
  /// A worker running on a thread of its own, its trials fed to the judge as it reports them.
  struct LiveWorker {
    std::shared_ptr<WorkerFeed> feed;
    std::shared_ptr<ExportInbox> exports;  ///< null: it writes files only
    std::string out_dir;
    std::future<WorkerRun> run;
    /// A reference's: its trials being kept as they are judged (null: not kept).
    std::shared_ptr<ReferenceStore::Recording> recording;
    /// A reference's that ran before: its kept outputs, in place of a worker.
    std::shared_ptr<StoredReference> stored;
  };
  /// The workers of one set of trials once they have ended.
  struct EndedWorkers {
    WorkerRun reference, candidate;
  };
  enum class SetKind {
    kTrials,  ///< KernelBench's trials and the certified distributions, at the reference's sizes
    kSizes,   ///< --full's odd sizes: a reference that does not take them is not the candidate's failure
  };

  /// The trials of a run: `trials` at the reference's sizes, `sized` at --full's odd sizes.
  struct TrialPlan {
    std::vector<KernelBenchTrial> trials, sized;
  };
  TrialPlan PlanTrials() const;
  /// The verdict's record of what is judged and by what (files, hashes, torch, procedure).
  void Begin(const std::string& reference_path, const std::string& candidate_path, RunState& r);
  /// The verdict as it stands, with the KernelBench-compatible one and the static findings.
  Verdict Finish(RunState& r);
  /// L0: the candidate's extensions and what its source shows (from the checker's report
  /// `cc`; `rc` the reference's), load_inline calls resolved by running the module.
  CandidateExtensions ReadCandidate(const json& rc, const json& cc, RunState& r);
  /// L1: every extension built before any candidate code runs; false (the verdict says why)
  /// when one does not build.
  bool BuildExtensions(CandidateExtensions& extensions, RunState& r);
  /// L2: one reference and one candidate worker for `set`, its trials judged in order; false
  /// when the verdict is decided (a failure).
  bool RunSet(const std::vector<KernelBenchTrial>& set, SetKind kind, LiveWorker reference, LiveWorker candidate,
              RunState& r);
  /// Judges each trial once both workers report it, and deletes its files; a worker waits
  /// while its outputs not yet judged exceed its budget (the job's "pace_bytes").
  EndedWorkers JudgeTrials(const std::vector<KernelBenchTrial>& set, LiveWorker reference, LiveWorker candidate,
                           RunState& r);
  /// What the ended workers of a set say beside the judged trials from `before` on: the
  /// worker's own failure, sandbox escapes, attribution, launches; then SetPassed.
  bool ConcludeSet(SetKind kind, size_t before, EndedWorkers ended, RunState& r);
  /// Whether the set's trials (from `before` on) all passed; the level is what passed before
  /// the first failure, and the verdict takes that failure's class and message.
  bool SetPassed(size_t before, RunState& r);
  json Check(const std::string& reference, const std::string& candidate);
  /// Runs the candidate's module with a load_inline that records its arguments
  /// (python/kforge_load_inline.py, "resolve"), confined as its worker is: the extensions
  /// the checker could not read from the source. Untrusted, and only ever build input.
  json ResolveByRunning();
  WorkerRun Worker(WorkerRole role, const std::vector<KernelBenchTrial>& trials, const json& constants,
                   const json& timing = json());
  /// A worker's process with its job written, not yet run. With `extensions_later`, the
  /// candidate's worker starts (imports torch, starts CUDA) while its extensions build, and
  /// waits before importing the candidate until DeliverExtensions says what was built.
  WorkerRun NewWorker(WorkerRole role, const std::vector<KernelBenchTrial>& trials, const json& constants,
                      const json& timing, bool extensions_later);
  /// Runs it to the end; `on_progress` (when given) sees each progress report it writes.
  /// With a `feed`, the reports go there too, and the worker ends once the feed is abandoned.
  /// With `reference`, the reference's worker on the same trials: a candidate's trial may
  /// take twice what the reference's took on top of its allowance (outputs of gigabytes
  /// take seconds to draw, hash and write, whatever the kernel does).
  void RunWorker(WorkerRun* run, const std::function<void(const json&)>& on_progress = nullptr,
                 WorkerFeed* feed = nullptr, const WorkerFeed* reference = nullptr);
  /// Starts `run` (from NewWorker) on its own thread; `on_progress` as RunWorker's, and
  /// `on_end` (when given) once it has ended, however it ended.
  LiveWorker Start(WorkerRun run, std::function<void(const json&)> on_progress = nullptr,
                   std::function<void()> on_end = nullptr, std::shared_ptr<const WorkerFeed> reference = nullptr);
  /// The reference's worker for `trials` at `constants` — or, when the store keeps its
  /// outputs for them, those in its place (`on_progress` sees its sealed report and `on_end`
  /// runs at once); a reference that runs is recorded for the store. Says which in
  /// kernelbench.measurements.reference_reuse under `set_name`.
  LiveWorker StartReference(const std::vector<KernelBenchTrial>& trials, const json& constants, const char* set_name,
                            RunState& r, std::function<void(const json&)> on_progress = nullptr,
                            std::function<void()> on_end = nullptr);
  /// Everything the reference's outputs on `trials` at `constants` depend on: the store's key.
  json ReferenceKeyParts(const std::vector<KernelBenchTrial>& trials, const json& constants, const RunState& r) const;
  /// Copies the built extensions into the worker's scratch; their entries as the worker sees them.
  json ProvideExtensions(ConfinedProgram* p);
  /// The built extensions (or, when `built` is false, word that there are none to run); the
  /// sizes of the reference's outputs, for the blocks it poisons, follow in DeliverPoisonSizes.
  void DeliverExtensions(ConfinedProgram* p, bool built);
  /// The sizes of the reference's first outputs, once its first forward has given them: the
  /// candidate's worker imports its code and draws its first inputs meanwhile (at KernelBench's
  /// sizes the reference's first trial draws 6.4 GB on the host first).
  void DeliverPoisonSizes(ConfinedProgram* p, const std::vector<int64_t>& poison_nbytes);
  /// KernelBench's timing of the reference and the candidate, each in its own process.
  json Timing();
  /// Copies kforge's Python, the reference and (unless `with_candidate` is false: the
  /// reference's process never sees it) the candidate into the program's scratch.
  ConfinedProgram* Prepare(ConfinedProgram* p, bool with_candidate);

  Machine& machine_;
  KernelBenchOptions options_;
  std::string python_dir_, reference_, candidate_;
  /// The reference's and the candidate's text, read once (Begin): every process gets these
  /// bytes, so a file changed during the verdict changes nothing in it.
  std::string reference_text_, candidate_text_;
  std::string reference_inputs_;  ///< the reference without Model, for the candidate's process
  TorchToolchain torch_;
  json extensions_ = json::object();  ///< key -> {path: the built module's host path, binding, functions}
  json kernelbench_trials_ = json::array();
};

// What a worker's surroundings are called. A candidate that could tell it is being judged
// could behave then and only then, so nothing a worker can see by name — its files, modules,
// argv, working directory, environment — says kforge: they are named as a plain KernelBench
// evaluation's would be (docs/kernelbench.md, "What a judged candidate can see").
constexpr const char* kWorkerScript = "eval/run_and_check.py";
constexpr const char* kReferenceFile = "eval/ref_arch.py";
constexpr const char* kCandidateFile = "eval/custom_model.py";
constexpr const char* kBuildWordFile = "eval/build.json";
constexpr const char* kSizesFile = "eval/sizes.json";
constexpr const char* kJobFile = "config.json";

/// The environment of every worker and of the checks' confined programs.
std::vector<std::string> WorkerEnv(bool gpu);
/// Every worker's command line, warm or not: the isolated interpreter, the script, the job.
std::vector<std::string> WorkerArgv(const std::string& python);
/// Copies the worker's scripts into its scratch.
void ProvideWorkerScripts(ConfinedProgram* p, const std::string& python_dir);
/// How a worker came to run a verdict's job: "warm" (started before it, WarmWorkers),
/// "started" (for it), "none" (no process: the reference's kept outputs).
const char* WorkerStart(const WorkerRun& run);
/// How many bytes of not-yet-judged outputs a worker may leave on disk before it waits for
/// the judge: an eighth of the free space where they go (two workers share it), from 256 MiB
/// to 16 GiB. Trials of small outputs never wait; a worker always has one trial's outputs on
/// disk if it needs to, so at KernelBench's 6.4 GB it writes one trial ahead of the judge.
int64_t PaceBytes(const std::string& dir);

}  // namespace kforge::kernelbench_internal
