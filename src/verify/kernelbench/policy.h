#pragma once
// What a KernelBench verdict is judged by, kept apart from how it is measured: the policy of
// kforge's certified verdict (what forward may run outside the candidate's own kernels) and
// the version of KernelBench's procedure its compatible verdict follows. Measurement
// (judge.h, attribution.h) reports; these decide.
#include <string>
#include <string_view>

#include "core/dtype.h"

namespace kforge {

/// What a KernelBench candidate's forward may run outside its own kernels.
enum class KernelBenchPolicy {
  /// KernelBench's own rules (the default): its prompt lets a solution replace some operators
  /// and leave others to PyTorch, so framework compute in forward, ATen calls in the
  /// extension and cuBLAS/cuDNN calls are reported in the attribution, not failed. Every
  /// forward must still run the candidate's own code, and every cheat still fails.
  kBenchmark,
  /// All compute in the candidate's kernels: the framework only allocates, views, copies and
  /// converts (kforge's rule for native tasks and for repairs).
  kStrict,
};
const char* KernelBenchPolicyName(KernelBenchPolicy policy);
/// "benchmark" or "strict"; false for anything else.
bool TryParseKernelBenchPolicy(std::string_view name, KernelBenchPolicy* out);

/// Whether a static finding is about where compute runs (the framework, a library) rather
/// than a cheat: under the benchmark policy it is reported, not failed.
bool IsComputePlacementFinding(std::string_view check);

/// The version of KernelBench's correctness procedure the KernelBench-compatible verdict
/// follows: the same seeds and trials, torch.allclose at that version's tolerance against the
/// float32 reference.
enum class KernelBenchProcedure {
  kV0,    ///< v0 and v0.1: atol = rtol = 1e-2 for every dtype
  kMain,  ///< upstream main after v0.1 (the default): 1e-4 for float32, 1e-2 for float16 and bfloat16
};
const char* KernelBenchProcedureName(KernelBenchProcedure procedure);
/// "v0" (also "v0.1") or "main"; false for anything else.
bool TryParseKernelBenchProcedure(std::string_view name, KernelBenchProcedure* out);
/// A sentence for the verdict: the procedure and its tolerances.
std::string KernelBenchProcedureText(KernelBenchProcedure procedure);
/// torch.allclose's atol (= rtol) under `procedure` for an output of type `dtype`.
double KernelBenchTolerance(KernelBenchProcedure procedure, DType dtype);

}  // namespace kforge
