#pragma once
// Judging a KernelBench candidate's trials against the reference's, from the outputs their
// workers wrote: KernelBench's own verdict (torch.allclose at its tolerance, against the
// float32 reference) and kforge's certified one (against the float64 reference, scale-aware),
// side by side in each case's evidence.
#include <nlohmann/json.hpp>
#include <vector>

#include "verify/torch_worker.h"
#include "verify/verdict.h"

namespace kforge {

/// Appends a case for each trial to `v`, and for KernelBench's own trials their
/// KernelBench-compatible results to `kernelbench_trials`.
void JudgeKernelBenchTrials(const std::vector<KernelBenchTrial>& trials, const WorkerRun& ref, const WorkerRun& cand,
                            nlohmann::json* kernelbench_trials, Verdict* v);

}  // namespace kforge
