#pragma once
// Judging a KernelBench candidate's trials against the reference's, from the outputs their
// workers wrote: KernelBench's own verdict (torch.allclose at its tolerance, against the
// float32 reference) and kforge's certified one (against the float64 reference, scale-aware),
// side by side in each case's evidence. One trial at a time, while the workers go on.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "verify/gpu_judge.h"
#include "verify/kernelbench/policy.h"
#include "verify/kernelbench/torch_worker.h"
#include "verify/verdict.h"

namespace kforge {

/// Memory the judge reads a trial's outputs into, kept from one trial to the next: a fresh
/// allocation for a 6.4 GB output has every page zeroed by the kernel as it is first touched
/// (a quarter of judging a 1 GiB trial on a 2-core CPU). Holds the largest trial's outputs
/// until it is destroyed.
class JudgeBuffers {
 public:
  /// Slot `slot`'s memory, at least `size` bytes; its contents are whatever was left there.
  char* Get(size_t slot, size_t size);

 private:
  struct Slot {
    std::unique_ptr<char[]> data;
    size_t size = 0;
  };
  std::vector<Slot> slots_;
};

/// What the two workers reported for one trial.
struct TrialReports {
  nlohmann::json reference;                  ///< the reference worker's entry for the trial
  nlohmann::json candidate;                  ///< the candidate worker's; null when it stopped before the trial
  std::string candidate_ended;               ///< then how its process ended ("": not known)
  std::string reference_dir, candidate_dir;  ///< host paths of their output files
  unsigned threads = 1;                      ///< how many threads may judge the trial's outputs
  JudgeBuffers* buffers = nullptr;           ///< to read into (null: memory of its own, freed after)
  /// Outputs the workers handed over in GPU memory (described {"device": true}) are judged
  /// by `gpu` from the descriptors in the inboxes; null where the workers write files only.
  GpuJudge* gpu = nullptr;
  ExportInbox *reference_exports = nullptr, *candidate_exports = nullptr;
  int64_t index = 0;  ///< the trial's place in its set, as the exports name it
  KernelBenchProcedure procedure = KernelBenchProcedure::kMain;  ///< for KernelBench's own trials
};

/// Appends the trial's case to `v`, and for one of KernelBench's own trials its
/// KernelBench-compatible result to `kernelbench_trials`. Throws UsageError when the reference
/// failed on a trial it must run, EnvironmentError when its outputs cannot be read.
void JudgeKernelBenchTrial(const KernelBenchTrial& t, const TrialReports& reports, nlohmann::json* kernelbench_trials,
                           Verdict* v);

}  // namespace kforge
