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

struct ArmReport {
  std::string name, strategy, repairer, model, base_url;
  std::vector<std::string> ablations;
  std::string base;
  int planned = 0, done = 0, successes = 0, errors = 0;
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
