#include "verify/kernelbench/policy.h"

namespace kforge {

const char* KernelBenchPolicyName(KernelBenchPolicy policy) {
  switch (policy) {
    case KernelBenchPolicy::kBenchmark:
      return "benchmark";
    case KernelBenchPolicy::kStrict:
      return "strict";
  }
  return "strict";
}

bool TryParseKernelBenchPolicy(std::string_view name, KernelBenchPolicy* out) {
  for (KernelBenchPolicy p : {KernelBenchPolicy::kBenchmark, KernelBenchPolicy::kStrict})
    if (name == KernelBenchPolicyName(p)) {
      *out = p;
      return true;
    }
  return false;
}

bool IsComputePlacementFinding(std::string_view check) {
  return check == "wrapper.framework_compute" || check == "static.library_compute";
}

const char* KernelBenchProcedureName(KernelBenchProcedure procedure) {
  return procedure == KernelBenchProcedure::kV0 ? "v0" : "main";
}

bool TryParseKernelBenchProcedure(std::string_view name, KernelBenchProcedure* out) {
  if (name == "v0" || name == "v0.1") {
    *out = KernelBenchProcedure::kV0;
    return true;
  }
  if (name == "main") {
    *out = KernelBenchProcedure::kMain;
    return true;
  }
  return false;
}

std::string KernelBenchProcedureText(KernelBenchProcedure procedure) {
  return procedure == KernelBenchProcedure::kV0
             ? "KernelBench v0/v0.1 (eval.py): seed 42, 5 trials, torch.allclose atol=rtol=1e-2 (every dtype)"
             : "KernelBench main (eval.py after v0.1): seed 42, 5 trials, torch.allclose atol=rtol=1e-4 (float32), "
               "1e-2 (float16, bfloat16)";
}

double KernelBenchTolerance(KernelBenchProcedure procedure, DType dtype) {
  if (procedure == KernelBenchProcedure::kV0) return 1e-2;
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? 1e-2 : 1e-4;
}

}  // namespace kforge
