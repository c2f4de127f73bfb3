#pragma once
// A KernelBench worker's progress as the engine believes it. The worker (in the candidate's
// process, for the candidate) rewrites out/result.json as it goes; each report it writes is
// a claim. This reads them as such:
//  - stages only go forward, in the worker's order (python/kforge_torch_worker.py), and the
//    trials begun only grow: a report that goes back, or names a stage kforge's worker does
//    not have, is a violation that ends the worker (cycling between stages restarted the
//    stage's clock and held the engine for the whole run's deadline);
//  - each state (stage, trials begun) has an allowance, charged by the engine's clock from
//    when the state was first reached; a claim to wait for the judge stops the charge only
//    while the engine itself says an earlier trial is unjudged, and nothing restarts it;
//  - the first report that says "done" is sealed: the engine ends the worker then (the
//    worker waits for that), so nothing the candidate's code does at exit — a finalizer, an
//    atexit hook editing the file — reaches the verdict.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace kforge {

/// The worker's stages in the order it passes them.
enum class WorkerStage {
  kStart,
  kImportTorch,
  kWaitJob,  ///< a warm worker's wait for its job (kforge serve starts it before the job is known)
  kLoadReference,
  kWarmUp,
  kWaitBuild,
  kNotBuilt,
  kLoadCandidate,
  kInit,
  kTrials,
  kHandedOver,
  kNeutralise,  ///< the candidate's kernels made to return NaN, one forward (KernelCalls)
  kTiming,
  kTimingCompiled,  ///< the reference under torch.compile (after its eager timing)
  kDone,
};
/// The stage a report names; false for a name kforge's worker does not use.
bool TryParseWorkerStage(const std::string& name, WorkerStage* out);

/// How long the engine lets each state of a worker last.
struct WorkerAllowances {
  bool candidate = false;       ///< the worker runs the candidate's code
  int64_t call_ms = 0;          ///< the per-call limit
  int64_t setup_ms = 180000;    ///< importing torch, loading the reference (kforge's code)
  int64_t build_ms = 0;         ///< the wait for the engine's extension build
  int64_t timing_calls = 0;     ///< calls the timing stage makes
  int64_t compile_ms = 300000;  ///< the reference's torch.compile and its timed calls
};

class WorkerProgress {
 public:
  enum class Step {
    kGoOn,      ///< within its allowance
    kOverTime,  ///< the current state has run past its allowance
    kWentBack,  ///< a report broke the protocol (violation() says how)
    kDone,      ///< the worker said it is done; sealed() is that report
  };
  explicit WorkerProgress(WorkerAllowances allowances) : allowances_(allowances) {}

  /// Takes the report read at `now_ns` (null or not an object: none yet, or one being
  /// replaced). `judge_behind`: the engine has an earlier trial unjudged, so a claim to wait
  /// is believed. `reference_trial_ms`: the reference's time on the current trial (the
  /// candidate may take twice that on top of its allowance).
  Step Observe(const nlohmann::json& report, int64_t now_ns, bool judge_behind, int64_t reference_trial_ms);

  /// The engine has told the worker what it built: a wait for the build has the candidate's
  /// allowance from `now_ns` (a report that only repeats "wait_build" cannot hold it longer).
  void BuildDelivered(int64_t now_ns);

  WorkerStage stage() const { return stage_; }
  size_t trials_begun() const { return trials_; }
  const std::string& violation() const { return violation_; }
  const nlohmann::json& sealed() const { return sealed_; }
  /// The current state's allowance and the time charged to it so far.
  int64_t AllowanceMs(int64_t reference_trial_ms) const;
  int64_t ChargedMs() const { return charged_ns_ / 1000000; }

 private:
  WorkerAllowances allowances_;
  WorkerStage stage_ = WorkerStage::kStart;
  size_t trials_ = 0;
  size_t history_ = 0;      ///< entries in the last report's stage history
  int64_t last_ns_ = -1;    ///< when the last report was observed
  int64_t charged_ns_ = 0;  ///< time charged to the current state
  bool waiting_ = false;    ///< the last report's believed claim to wait for the judge
  bool delivered_ = false;  ///< the build's word is out (BuildDelivered)
  std::string violation_;
  nlohmann::json sealed_;
};

}  // namespace kforge
