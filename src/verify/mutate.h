#pragma once
// Mutation testing of a task's certification: small, plausible bugs are planted in a correct
// kernel on its tree-sitter parse — comparisons swapped (< and <=), loop bounds and indices
// off by one, reduction initial values changed (0, -inf, +inf), a term dropped from a sum
// or a difference (a max subtraction removed), `+=` turned into `=`, accumulators narrowed
// (double to float, float to _Float16), __syncthreads() removed, eps moved out of a square
// root — and each mutant is judged by the light set, then the full set, on fixed seeds.
// Survivors of the full set are judged again on many more seeds: a mutant that fails there
// is a certification miss (the full set let a wrong kernel through), one that passes
// everywhere is presumed equivalent. Score = killed by the full set / non-equivalent.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/backend_kind.h"
#include "core/task.h"

namespace kforge {

class Machine;
class CancellationToken;

struct Mutant {
  std::string op;             ///< "swap_comparison", "bound_minus_one", ...
  size_t start = 0, end = 0;  ///< the byte range of the source that was replaced
  std::string before, after;
  int line = 0;
  std::string Apply(const std::string& source) const;
};

/// Every mutant of `source` the operators above produce, in source order.
std::vector<Mutant> GenerateMutants(const std::string& source);

enum class MutantFate {
  kStillborn,          ///< does not compile (or fails its static checks): not counted
  kKilledLight,        ///< the light set fails it
  kKilledFull,         ///< only the full set fails it
  kCertificationMiss,  ///< passes the full set, fails the stronger judge
  kEquivalent,         ///< passes everything: presumed equivalent
};
std::string_view MutantFateName(MutantFate f);

struct MutationOptions {
  BackendKind backend = BackendKind::kCpu;
  const CancellationToken* cancel = nullptr;  ///< stops between mutants and between trials
  uint64_t seed = 1;                          ///< the fixed seed of the light and full judgements
  int judge_seeds = 8;                        ///< seeds of the stronger judge (seed + 1 ...)
  int max_mutants = 0;                        ///< 0: all; else a sample spread evenly over the source
  int64_t case_timeout_ms = 3000;             ///< mutants that loop forever are killed, not waited for
  std::string cache_dir;
};

struct MutationReport {
  std::string task;
  std::string candidate;
  int generated = 0;
  std::vector<std::pair<Mutant, MutantFate>> results;
  int Count(MutantFate f) const;
  /// killed by the full set (light included) / non-equivalent, non-stillborn mutants.
  double Score() const;
  nlohmann::json ToJson() const;
  std::string Text() const;
};

MutationReport RunMutation(Machine& machine, const Task& task, const std::string& candidate_path,
                           const MutationOptions& options);

}  // namespace kforge
