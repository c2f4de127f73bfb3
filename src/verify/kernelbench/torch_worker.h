#pragma once
// A PyTorch worker process of a KernelBench verification (python/kforge_torch_worker.py): the
// trials it is asked for, what it gave back, and reading that as untrusted JSON (the
// candidate's worker runs the candidate: every field may be missing or of the wrong type).
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "core/untrusted_json.h"
#include "exec/confined_program.h"
#include "verify/gpu_judge.h"
#include "verify/verdict.h"

namespace kforge {

struct KernelBenchTrial {
  std::string name, distribution;
  uint64_t seed = 0;
  int kernelbench_index = -1;  ///< >= 0: one of KernelBench's own trials
  TrialSet set = TrialSet::kLight;
};

/// Which model a worker runs: the reference's `Model`, or the candidate's `ModelNew`.
enum class WorkerRole { kReference, kCandidate };
/// "reference" or "candidate": the job's word for the role (python/kforge_torch_worker.py),
/// and how messages and the verdict name the worker.
const char* WorkerRoleName(WorkerRole role);

struct WorkerRun {
  WorkerRole role = WorkerRole::kReference;
  int64_t timeout_ms = 0;
  nlohmann::json result;  ///< null when the worker wrote none
  ExitStatus status;
  std::string output;
  std::vector<std::string> layers;
  std::string violation;  ///< how its progress reports broke the protocol ("" if they did not)
  EscapeScan escapes;
  std::string out_dir;                   ///< host path of its outputs
  std::unique_ptr<ExportInbox> exports;  ///< the outputs it hands over in GPU memory (null: files only)
  std::unique_ptr<ConfinedProgram> program;
  bool warm = false;  ///< the program was started before its job (WarmWorkers)
  double seconds = 0;
};

/// A JSON document a confined process wrote in its scratch (`relative` to `scratch`), or
/// null when it wrote none that parses. Read through no link, only a regular file of at most
/// 64 MiB, never waiting (a FIFO there would hold the engine): ReadFileBeneath.
nlohmann::json ReadJsonFile(const std::string& scratch, const std::string& relative);
/// The last few lines of a Python traceback: where it failed and why.
std::string TracebackTail(const std::string& text, int lines = 4);
/// When each stage of a worker began, in seconds from its start (its report, capped).
nlohmann::json StageTimes(const nlohmann::json& result);
/// Where a worker's trials spent their time: seconds per step ("inputs", "digest", "forward",
/// "write_outputs", ...) summed over its trials, and the time it waited for the judge (its
/// untrusted report: names capped, numbers finite and non-negative).
nlohmann::json StepTotals(const nlohmann::json& result);
/// Whether a worker's progress report has its first trial done; if so, with the byte sizes
/// of that trial's outputs in `nbytes` (empty when the trial failed or reported none usable).
bool FirstOutputSizes(const nlohmann::json& progress, std::vector<int64_t>* nbytes);
/// What went wrong in a worker as a whole (it wrote no usable result, or stopped early); "" if nothing.
std::string WorkerProblem(const WorkerRun& run);
/// How a worker that stopped reporting ended: its exit status (a forbidden system call named
/// as such), the trial it was in, the tail of what it printed.
std::string WorkerEnded(const WorkerRun& run);

/// One running worker's trials as it reports them, for judging each trial while the workers
/// go on (KernelBench's level-1 outputs reach 6.4 GB: holding every trial's files until both
/// workers end does not fit a disk). Its runner Offers each progress report and Finishes;
/// the judge waits for one trial at a time. Thread-safe.
class WorkerFeed {
 public:
  /// A progress report (out/result.json as last read), read at `now_ns` (the engine's
  /// monotonic clock): when each trial was first seen begun and first seen over.
  void Offer(const nlohmann::json& progress, int64_t now_ns = 0);
  /// The worker has ended; `result` is its last report.
  void Finish(const nlohmann::json& result);
  /// A worker that ran before (a kept reference, ReferenceStore): its sealed `result`, every
  /// trial in it over, trial i having taken trial_ms[i] (TrialMillis), the worker ended.
  void Replay(const nlohmann::json& result, const std::vector<int64_t>& trial_ms);
  /// Trial `i`'s entry once the worker reports it over (the entry as first seen over: later
  /// edits of a finished trial are not read) ("done", a later trial, or the worker
  /// past its trials); null when the worker ended without it. Waits in slices of `slice_ms`,
  /// calling `between` (which may throw: cancellation) after each.
  nlohmann::json Trial(size_t i, int64_t slice_ms, const std::function<void()>& between);
  /// The judge is done with trials [0, i] and has deleted their files.
  void Judged(size_t i);
  /// Whether a worker that says it waits for the judge can be: some trial before its
  /// `current` one is not judged yet. (A worker that says so otherwise is lying, or has not
  /// yet said it stopped waiting: its deadline runs.)
  bool MayWait(size_t current) const;
  /// Tells the runner to end the worker: nothing will judge its remaining trials.
  void Abandon();
  bool abandoned() const;
  /// How long trial `i` has taken by the engine's clock, as far as the reports show: from the
  /// report that first named it to the one that first said it was over, or to `now_ns` while
  /// it runs. 0 before it begins.
  int64_t TrialMillis(size_t i, int64_t now_ns) const;

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  nlohmann::json latest_;
  bool finished_ = false, abandoned_ = false;
  std::vector<int64_t> began_ns_, over_ns_;  ///< per trial; over_ns_ 0 while it runs
  std::vector<nlohmann::json> sealed_;       ///< per trial, its entry when first seen over
  size_t judged_ = 0;                        ///< trials [0, judged_) are judged
};

/// Whether a worker's progress report says it waits for the engine to judge its earlier
/// trials, and the engine believes it: `feed` (its judge's record, when there is one) has a
/// trial before the current one unjudged. The claim lifts the trial's deadline, so a
/// candidate's process that makes it falsely must not be believed.
bool WaitsForTheJudge(const nlohmann::json& progress, const WorkerFeed* feed);

/// Deletes the output files a trial's entry names in `dir` (once they are judged); names
/// that are not a worker's output file names are left alone.
void RemoveTrialFiles(const std::string& dir, const nlohmann::json& entry);
/// Whether `name` is a file name a worker may give an output (letters, digits, '_', '.').
bool IsOutputFileName(const std::string& name);

}  // namespace kforge
