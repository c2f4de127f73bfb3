#pragma once
// Attribution by what ran: which of the framework's operators a KernelBench candidate's
// judged forwards dispatched. The candidate's worker runs every judged forward under
// PyTorch's profiler and reports the ATen operators it saw (by name and count, whether
// called from Python, through any alias or operator overload, or from the candidate's own
// C++ extension: the dispatcher sees them all). Names are not trusted to mean anything the
// candidate chose: the engine classifies them here, and a policy decides which count against
// the candidate. Static checks (python/kforge_check_modelnew.py, extension_checks.h) stay a
// first filter with their own messages; this is the basis of the verdict.
//
// What the record cannot see: work done without the dispatcher (a C++ extension calling an
// ATen kernel's implementation directly), and, on torch builds without Kineto, operators on
// threads other than the forward's. The static checks flag both routes (at::native::,
// threads, the profiler's guards); on the GPU, the kernels that ran are recorded too.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "verify/kernelbench/policy.h"
#include "verify/verdict.h"

namespace kforge {

/// How an operator the profiler recorded counts.
enum class OpRole {
  kPlumbing,          ///< allocation, views, layout, copies, conversions: ATen's, allowed
  kFrameworkCompute,  ///< an ATen operator that computes
  kOther,             ///< not ATen's (the candidate's own registered operators, profiler ranges)
};
OpRole ClassifyOp(std::string_view name);

/// Where a GPU kernel came from, by the name the profiler recorded for it.
enum class KernelOrigin {
  kCandidate,  ///< none of the below: the candidate's own (its CUDA, its Triton)
  kFramework,  ///< ATen's (at::native::, at::cuda::, c10::) or torch.compile's generated Triton
  kLibrary,    ///< cuBLAS, cuBLASLt, cuDNN, CUTLASS library kernels
};
KernelOrigin ClassifyKernel(std::string_view name);
const char* KernelOriginName(KernelOrigin origin);

/// The GPU time of every judged forward by origin: the worker's {name: [count, microseconds]}
/// as {"candidate"|"framework"|"library": {"kernels", "us", "share"}} and the ten longest
/// kernels by name with their origin. Reported, not judged: the policy rests on the
/// operator record (a framework kernel runs because a framework operator was dispatched).
nlohmann::json KernelTimeByOrigin(const nlohmann::json& kernel_names);

/// The worker's operator report (its "ops": {"ok", "forwards", "ops": {name: count}}) judged
/// under `policy`, for a worker whose forward returned on `completed` trials. Returns the
/// verdict's attribution: the policy, the forwards recorded, and the operators by role. Fails
/// closed: a missing or failed report, or one that records fewer forwards than returned, is
/// `attribution.unrecorded` (with no forward returned there is nothing to attribute);
/// framework compute under the strict policy is `attribution.framework_compute`, naming the
/// operators and how often they ran.
/// Under every policy, each judged forward must have called the candidate's own kernels at
/// least once (the report's "fewest_kernel_calls"): one that called none is
/// `attribution.no_candidate_kernel` (a fallback to the framework on some inputs).
nlohmann::json KernelBenchAttribution(const nlohmann::json& report, KernelBenchPolicy policy, int64_t completed,
                                      std::vector<IntegrityFinding>* findings);

/// The neutralised forward (the worker's "neutralised": the first trial run again as it was
/// and with whatever the candidate's kernels return or write replaced by other values) judged:
/// outputs that are the same both ways were not made by the candidate's kernels,
/// `kernel.result_unused` (a kernel launched and its result discarded, or multiplied by 0). A
/// forward that raised on the replaced values is `kernel.neutralised_raised` (fails closed: a
/// raise can hide a check against the framework's result). A forward in which every call of the candidate's kernels
/// returned one of its arguments unchanged (its "kernel_calls" all "copy_calls") is `kernel.copy_only`: the kernels
/// moved data around compute the framework did. Fails closed: no report, with forwards that returned, is
/// `attribution.unrecorded`. Returns what the verdict records.
nlohmann::json KernelBenchNeutralisation(const nlohmann::json& report, int64_t completed,
                                         std::vector<IntegrityFinding>* findings);

/// What a repair moved from the candidate's kernels to the framework or a library: the
/// framework operators (by name) and the compute found in the source (by check and detail)
/// that the repaired candidate's KernelBench attribution has and the near-miss's did not. A
/// repair by fallback is not a repair, even with the right numbers.
std::vector<std::string> WorkMovedToFramework(const nlohmann::json& near_miss, const nlohmann::json& repaired);

}  // namespace kforge
