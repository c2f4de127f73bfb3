#pragma once
// The per-trial runtime integrity checks the verifier applies after each call, each a
// small unit with its own test: GPU launch accounting, stale (cached) outputs, and the
// reading of a compute-sanitizer report.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exec/candidate_process.h"
#include "verify/verdict.h"

namespace kforge {

/// GPU launch accounting from the runner's CUPTI counts: a call that returned success must
/// have run a kernel, and only on the stream it was given.
struct LaunchJudgement {
  std::string accounting;  ///< "cupti", "not counted: <why>", or "" (nothing to say)
  std::vector<IntegrityFinding> findings;
  bool violation() const { return !findings.empty(); }
};
LaunchJudgement JudgeLaunches(const CaseRun& run);

/// Caching across calls: identical output bytes for the same shapes but different inputs
/// mean the candidate returned an earlier call's result. Only an earlier *correct* result
/// counts (a constant wrong output is a numeric failure), and tiny outputs, which can
/// coincide honestly, are exempt.
class StaleOutputs {
 public:
  static constexpr size_t kMinElements = 16;
  /// Records this trial and says whether its outputs repeat an earlier correct trial's with
  /// the same shapes (`shape_key`) but other inputs (`input_digest`).
  bool Observe(const std::string& shape_key, const std::string& input_digest, const std::string& output_digest,
               size_t output_elements, bool passed);

 private:
  struct Previous {
    std::string inputs, outputs;
    bool passed = false;
  };
  std::map<std::string, Previous> last_by_shape_;
};

/// What compute-sanitizer's report says: the error count from its summary line (-1 when
/// there is none) and its first findings without the banner lines (at most ~3000 bytes).
struct SanitizerReport {
  int errors = -1;
  std::string findings;
};
SanitizerReport ParseSanitizerReport(const std::string& report);

/// Which compute-sanitizer tool a failing case calls for: racecheck when identical inputs
/// gave different results, memcheck for out-of-bounds writes and runtime errors, else none.
std::optional<std::string> SanitizerToolFor(bool nondeterministic, FailureClass failure);

}  // namespace kforge
