#pragma once
// Judging a KernelBench candidate's trials against the reference's, from the outputs their
// workers wrote: KernelBench's own verdict (torch.allclose at its tolerance, against the
// float32 reference) and kforge's certified one (against the float64 reference, scale-aware),
// side by side in each case's evidence. One trial at a time, while the workers go on.
#include <nlohmann/json.hpp>
#include <string>

#include "verify/torch_worker.h"
#include "verify/verdict.h"

namespace kforge {

/// What the two workers reported for one trial.
struct TrialReports {
  nlohmann::json reference;                  ///< the reference worker's entry for the trial
  nlohmann::json candidate;                  ///< the candidate worker's; null when it stopped before the trial
  std::string reference_dir, candidate_dir;  ///< host paths of their output files
  unsigned threads = 1;                      ///< how many threads may judge the trial's outputs
};

/// Appends the trial's case to `v`, and for one of KernelBench's own trials its
/// KernelBench-compatible result to `kernelbench_trials`. Throws UsageError when the reference
/// failed on a trial it must run, EnvironmentError when its outputs cannot be read.
void JudgeKernelBenchTrial(const KernelBenchTrial& t, const TrialReports& reports, nlohmann::json* kernelbench_trials,
                           Verdict* v);

}  // namespace kforge
