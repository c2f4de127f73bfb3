#pragma once
// An experiment's plan: the study kforge runs (debug a near-miss or regenerate it, at equal
// budget, over a set of tasks), and the cells it expands to.
//
// Design note — the plan file (JSON, like every kforge input):
//   {"schema_version": 1, "name": "...", "backend": "cpu" | "cuda",
//    "tasks": [ {"nearmiss": DIR, "only": [TASK...]}      a near-miss corpus (DIR/manifest.json)
//             | {"task": NAME|FILE, "candidate": FILE}      one task, with or without a candidate
//             | {"kernelbench": DIR, "level": N, "problems": [ID...], "candidates": DIR} ],
//    "arms": [ {"name": "debug", "strategy": "debug"|"regenerate", "repairer": "recipe"|"llm"|"auto"|...,
//               "model": "...", "base_url": "...", "ablations": ["knowledge_base", ...],
//               "base": ARM, "budget": {...}} ],
//    "budget": {"rounds": 5, "attempts": 3, "wall_s": 1800, "timeout_s": 10},
//    "seeds": [1, 2, 3], "samples": 1,
//    "timing": {"trials": 100, "warmup": 3, "compiled": true},
//    "slurm": {"partition": "...", "account": "...", "time": "00:30:00", "gres": "gpu:1", "max_running": 8}}
//   Paths are relative to the plan file. One budget serves every arm unless an arm names its
//   own (the study compares at equal budget). `base` names the arm an ablated arm is
//   compared with (by default the first arm with the same strategy and no ablations).
//   Cells are tasks x arms x seeds x samples; each is one ordinary run.
//   With "timing", a KernelBench cell whose run is certified has its final ModelNew timed as
//   `kforge bench` times it (against its Model eagerly and, with "compiled", under
//   torch.compile); the report gives each arm's fast_p over its KernelBench cells.
//   Cells are ordered so that arms interleave (seed, sample, task, then arm): an experiment
//   stopped half-way has run every arm about as far.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/registry.h"
#include "core/backend_kind.h"
#include "engine/run_config.h"

namespace kforge {

struct ExperimentTask {
  std::string name;       ///< unique in the plan: the task's name, with the candidate's file when several
  std::string task;       ///< a bundled task name, a task file or a KernelBench reference (.py)
  std::string candidate;  ///< the near-miss to start from; "" : the repairer writes the first one
};

struct ExperimentBudget {
  int rounds = 5, attempts = 3;
  int64_t wall_s = 1800;
  double timeout_s = 10;
};

struct ExperimentArm {
  std::string name;
  RepairPolicy strategy = RepairPolicy::kDebug;
  RepairerKind repairer = RepairerKind::kRecipe;
  std::string model, base_url, command;  ///< the endpoint (else OPENAI_BASE_URL / KFORGE_MODEL); external command
  std::set<Ablation> ablations;
  std::string base;  ///< the arm this one is compared with in the ablation table ("" none)
  ExperimentBudget budget;
  bool weakens_verdict() const {
    return ablations.count(Ablation::kAntiCheat) || ablations.count(Ablation::kFullCoverage);
  }
};

/// KernelBench cells' timing (KernelBench's procedure); trials 0: not timed.
struct ExperimentTiming {
  int trials = 0, warmup = 3;
  bool compiled = true;  ///< the reference under torch.compile too
};

struct SlurmSettings {
  std::string partition, account, time = "01:00:00", gres;
  int max_running = 0;  ///< the array's %limit (0: Slurm's)
};

struct ExperimentPlan {
  int schema_version = 1;
  std::string name;
  BackendKind backend = BackendKind::kCpu;
  std::vector<ExperimentTask> tasks;
  std::vector<ExperimentArm> arms;
  std::vector<uint64_t> seeds;
  int samples = 1;
  SlurmSettings slurm;
  ExperimentTiming timing;
  nlohmann::json source;  ///< the plan as written, with its paths made absolute

  int runs_per_task_and_arm() const { return static_cast<int>(seeds.size()) * samples; }
};

struct ExperimentCell {
  int index = 0;  ///< position in the plan's order (a Slurm array index)
  int task = 0, arm = 0, sample = 0;
  uint64_t seed = 0;      ///< the plan's seed
  uint64_t run_seed = 0;  ///< the run's seed: the plan's seed, mixed with the sample
  std::string name;       ///< "<task>.<arm>.s<seed>.<sample>", a directory name
};

/// Reads and checks a plan file. Throws UsageError naming the file, the field and what to
/// write instead.
ExperimentPlan LoadPlan(const std::string& path);
/// The same for a plan already parsed; relative paths are taken from `base_dir`.
ExperimentPlan ParsePlan(const nlohmann::json& j, const std::string& base_dir, const std::string& origin);
/// The plan's cells, arms interleaved.
std::vector<ExperimentCell> PlanCells(const ExperimentPlan& plan);

/// What a plan will spend at most, before anything runs.
struct PlanBudget {
  int cells = 0;
  int64_t max_rounds = 0;       ///< repair rounds over all cells
  int64_t max_model_turns = 0;  ///< rounds of the arms that call a model
  double max_cell_hours = 0;    ///< wall-clock limits summed over cells
  std::vector<std::string> arms_with_model;
};
PlanBudget BudgetOf(const ExperimentPlan& plan);

}  // namespace kforge
