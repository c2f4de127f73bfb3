#pragma once
// KernelBench's part of a verdict (verify/kernelbench/verifier.h), typed: what the benchmark's
// own procedure says beside kforge's certified verdict, the policy that verdict used, and the
// measurements behind both. Its JSON is the verdict's "kernelbench" object (docs/kernelbench.md, "KernelBench
// tasks"); FromJson reads a recorded one back and takes only fields of the right type.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

/// One of KernelBench's own trials, judged as the benchmark judges it (torch.allclose at the
/// procedure's tolerance, against the float32 reference).
struct KernelBenchTrialResult {
  std::string trial;
  uint64_t seed = 0;
  bool passed = false;
  std::string issue;  ///< why it failed before its outputs were compared ("" when they were)
  double max_difference = 0, avg_difference = 0;
};

struct KernelBenchVerdict {
  std::string procedure;  ///< the procedure followed, in words
  std::string version;    ///< its version: "main", "v0"
  std::string policy;     ///< the certified verdict's policy: "benchmark", "strict"
  std::string python, torch;
  /// The KernelBench-compatible verdict; none when it could not be given (not_given says why).
  std::optional<bool> correct;
  std::string not_given;
  bool compiled = false;
  std::vector<KernelBenchTrialResult> trials;
  std::string weights;  ///< "same", or how ModelNew's weights differ; "" when not compared
  double judge_seconds = 0;
  /// The measurements, each the document its unit writes: "attribution" (attribution.h),
  /// "launches", "extensions", "extensions_resolved_by_running", "worker_stages",
  /// "worker_steps", "timing", "reference_reuse" (per set of trials: "reused", "ran", or why
  /// the reference's outputs are not kept: verify/kernelbench/reference_store.h).
  nlohmann::json measurements = nlohmann::json::object();

  nlohmann::json ToJson() const;
  static KernelBenchVerdict FromJson(const nlohmann::json& j);
  /// The summary's lines: the compatible verdict (or why not given), and the policy with the
  /// framework compute it reported rather than failed.
  std::string SummaryLines() const;
};

}  // namespace kforge
