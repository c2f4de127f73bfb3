#pragma once
// kforge regress: a golden set of kernels, re-verified and re-timed, against what a person
// accepted.
//
// Design note — the golden file (JSON, paths relative to the file's directory):
//   {"kforge_golden": 1, "noise_band": 0.25,
//    "kernels": [{"task": "relu", "candidate": "kernels/relu.cc", "backend": "cpu",
//                 "expect": {"verdict": "pass", "level": "L2_full", "candidate_sha256": "...",
//                            "median_ms": 0.041, "timing": "cases"}}]}
//  - A regression (exit 1): a kernel that passed no longer does, or is slower than
//    median_ms × (1 + noise_band).
//  - Stale expectations (exit 2): a kernel without "expect", a candidate whose bytes changed,
//    a verdict or level that moved without regressing (a fix), a kernel faster than
//    median_ms / (1 + noise_band). Only a person makes them current: `--accept` writes what
//    was measured as the new expectations.
//  - Level: each kernel is verified on the full set, the certified level, unless the file
//    says "full": false: a near-miss that only the full set catches (a softmax whose running
//    max starts at 0) is a lost verdict, not a changed file that passes.
//  - Timing: "bench" (the CUDA bench median, kforge bench) on cuda; on the CPU "cases", the
//    median run time of the verification's passing cases — coarse. A time outside the band
//    is measured again (up to 5 runs) and judged on the runs' median: slower or faster only
//    when every run is outside the band; runs on both sides are "timing too noisy to judge"
//    and do not change the exit code. `--accept` keeps the median of 3 runs.
//  - Measuring is a function the caller passes, so the rules are tested with a fake timer.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

struct Measurement {
  std::string verdict;  ///< "pass" or the failure class
  std::string level, candidate_sha256;
  double median_ms = 0;  ///< 0: not timed (the verdict failed)
  std::string timing;    ///< "bench" or "cases"
  std::string message;   ///< the verdict's sentence
  nlohmann::json ToJson() const;
  static Measurement FromJson(const nlohmann::json& j);
};

struct GoldenKernel {
  std::string task, candidate, backend = "cpu";  ///< as written in the file
  std::string task_path, candidate_path;         ///< resolved against the file's directory
  bool full = true;  ///< checked on the full set (the certified level) unless the file says "full": false
  std::optional<Measurement> expect;
};

struct Golden {
  double noise_band = 0.25;
  std::vector<GoldenKernel> kernels;
  nlohmann::json ToJson() const;
};

/// Reads a golden file; throws UsageError naming the field that is wrong. Candidate and
/// task paths come back resolved against the file's directory.
Golden LoadGolden(const std::string& path);

enum class RegressStatus { kSame, kStale, kRegressed };
std::string_view RegressStatusName(RegressStatus s);

struct KernelRegress {
  GoldenKernel kernel;
  Measurement now;
  RegressStatus status = RegressStatus::kSame;
  std::vector<std::string> reasons;
};

/// One kernel's measurement against its expectations.
KernelRegress Judge(const GoldenKernel& kernel, const Measurement& now, double noise_band);

struct RegressReport {
  std::string golden_path;
  double noise_band = 0;
  std::vector<KernelRegress> kernels;
  bool accepted = false;  ///< --accept wrote the measurements as the new expectations
  /// The worst status over the kernels (kSame once accepted).
  RegressStatus status() const;
  nlohmann::json ToJson() const;
  std::string Text() const;
};

using MeasureFn = std::function<Measurement(const GoldenKernel&)>;

/// Measures every kernel of the golden file and judges it; with `accept`, writes the
/// measurements back into the file (atomically) as its new expectations.
RegressReport Regress(const std::string& golden_path, const MeasureFn& measure, bool accept);

}  // namespace kforge
