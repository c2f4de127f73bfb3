#pragma once
// An experiment's report: from its cells' results alone (never a number for a run that did
// not happen), the study's statistics per arm and between arms.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/study_stats.h"
#include "service/experiment/experiment_dir.h"
#include "service/experiment/replays.h"

namespace kforge {

/// An arm's fast_p over its KernelBench cells (the plan's "timing"): finished cells that did
/// not end by the environment are the samples (KernelBench counts every sample: cells that
/// ended by the environment are left out here, as everywhere in the report); a repaired and
/// timed cell is its speedup, a weakened arm's success only when the full verdict agreed.
struct FastPReport {
  int cells = 0;          ///< the samples (fast_p's denominator)
  int timing_errors = 0;  ///< successes that could not be timed (counted as not fast)
  /// KernelBench's thresholds p and each one's share against eager Model; against
  /// torch.compile(Model) when every timed success has that speedup (else none, and
  /// compiled_missing says how many lack it).
  std::vector<double> p = {0, 1, 1.5, 2};
  std::vector<double> eager;
  std::optional<std::vector<double>> compiled;
  int compiled_missing = 0;
  std::string compiled_error;  ///< one reason a success has no compiled speedup
};

struct ArmReport {
  std::string name, strategy, repairer, model, base_url;
  std::vector<std::string> ablations;
  std::string base;
  int planned = 0, done = 0, successes = 0, errors = 0;
  int already_correct = 0;          ///< successes whose starting candidate was certified before any repair round
  std::vector<double> pass_at_k;    ///< [k-1], k up to the fewest runs any task of the arm has
  int tasks = 0, tasks_solved = 0;  ///< tasks with a finished run; with at least one success
  std::vector<std::string> solved;  ///< names of the tasks solved
  int64_t uncached_tokens = 0, cached_tokens = 0;
  double wall_hours = 0, device_hours = 0;
  double outcome_variance = 0;  ///< mean over tasks of p(1-p), p its success share across seeds
  /// Weakened arms: successes the full certified verdict was asked about, and rejected.
  int checked_successes = 0, rejected_successes = 0;
  std::optional<double> false_success_rate;
  /// Run-to-run variance from replay (replays.h); none until `kforge experiment replay` ran.
  std::optional<ReplaySummary> replays;
  std::optional<FastPReport> fast_p;  ///< none when the plan times nothing or has no KernelBench task
  double tokens_per_task() const { return tasks ? double(uncached_tokens + cached_tokens) / tasks : 0; }
  std::optional<double> tokens_per_success() const {
    if (successes == 0) return std::nullopt;
    return double(uncached_tokens + cached_tokens) / successes;
  }
};

struct PairReport {
  std::string a, b;
  int pairs = 0, only_a = 0, only_b = 0, both = 0, neither = 0;
  double p = 1, p_bonferroni = 1;
  int tasks_both = 0, tasks_only_a = 0, tasks_only_b = 0;  ///< overlap of solved tasks
};

struct AblationReport {
  std::string arm, base;
  Interval pass_at_1_delta;  ///< arm minus base, per task, with a 95% paired bootstrap interval
  int tasks = 0;
};

struct ExperimentReport {
  std::string name, dir, backend;
  int cells = 0, done = 0, errors = 0;
  bool complete = false;
  std::vector<ArmReport> arms;
  std::vector<PairReport> pairs;
  std::vector<AblationReport> ablations;
  /// Per task: for each arm, {successes, finished runs}.
  struct TaskRow {
    std::string task;
    std::vector<std::pair<int, int>> by_arm;
  };
  std::vector<TaskRow> tasks;
  nlohmann::json ToJson() const;
  /// A Markdown summary for papers: arms, pairs, ablations, per-task outcomes.
  std::string Markdown() const;
};

/// The report's section on run-to-run variance from replay ("" when no arm has replays).
std::string ReplayMarkdownOf(const ExperimentReport& report);

/// The report of the experiment in `dir` as its results stand now.
ExperimentReport BuildReport(const ExperimentDir& dir);

}  // namespace kforge
