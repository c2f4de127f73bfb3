#include "engine/scoring.h"

#include <algorithm>
#include <cmath>

namespace kforge {
namespace {

constexpr double kUnboundedRatio = 1e12;

}  // namespace

double ScoreVerdict(const Verdict& v) {
  if (v.failure == FailureClass::kIntegrity) return -1;
  double score = 10.0 * static_cast<int>(v.level);
  int run = 0, passed = 0;
  double worst = 0;
  for (const auto& c : v.cases) {
    if (c.set == TrialSet::kDiagnostic) continue;
    ++run;
    if (c.passed()) ++passed;
    for (const auto& o : c.outputs) {
      double ratio = std::isfinite(o.compare.worst_ratio) ? o.compare.worst_ratio : kUnboundedRatio;
      if (o.compare.nan_inf_mismatches > 0 || o.compare.unwritten > 0) ratio = kUnboundedRatio;
      worst = std::max(worst, ratio);
    }
  }
  if (run > 0) score += 5.0 * passed / run;
  score += 1.0 / (1.0 + std::log10(1.0 + worst));
  // Correct but refused for its speed: below every certified candidate of its level (at most
  // 10 * level + 6), above everything that reached a lower level.
  if (v.failure == FailureClass::kDegenerate) score -= 6;
  return score;
}

std::string FailureSignature(const Verdict& v) {
  std::string sig(v.passed ? "none" : FailureClassName(v.failure));
  for (const auto& c : v.cases) {
    if (c.passed() || c.set == TrialSet::kDiagnostic) continue;
    sig += ":" + std::string(TrialSetName(c.set)) + "/" + c.name + "/" + c.distribution;
    for (const auto& o : c.outputs) sig += ":" + std::to_string(o.compare.mismatches);
    break;
  }
  return sig;
}

}  // namespace kforge
