#pragma once
// An experiment's directory: its plan, the index of its cells, and one folder per cell.
//
// Design note — the layout (every file written whole, by rename):
//   plan.json           the plan with absolute paths (written first, never changed)
//   index.json          {"cells": [{"index", "name", "task", "arm", "seed", "sample", "run_seed"}]}
//   executor.json       how it runs: {"executor": "local"|"slurm", "devices": [...], "jobs": N,
//                       "slurm_jobs": [id...]}; written before any cell starts
//   cancelled           present once `kforge experiment cancel` was asked
//   cells/NAME/run/     the cell's run directory (an ordinary one: resume, replay, report)
//   cells/NAME/lease.json  {"device", "pid", "pid_start", "host", "started_us"}: written
//                       before the cell's process starts, removed when it ends
//   cells/NAME/result.json what the cell came to (CellResult); its presence means done
//   cells/NAME/cell.log the cell's progress and errors
//   cells/NAME/replays/K/  the K-th replay of the cell's run (kforge experiment replay): an
//                       ordinary run directory, its recorded values pinned but the live layers
//   cells/NAME/replays/K.json what that replay came to (CellReplay); its presence means done
// A cell's state is read from these files alone, so `status` and `report` work while a run
// goes on, after a SIGKILL, and from another machine on a shared file system (Slurm).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"
#include "service/experiment/plan.h"

namespace kforge {

/// What a finished cell came to: its starting candidate certified as it was (no repair
/// round), certified after repair, not certified within its budget, or stopped by the
/// environment (a refusal, a machine that failed it).
enum class CellOutcome { kAlreadyCorrect, kRepaired, kNotRepaired, kError };
/// "already_correct", "repaired", "not_repaired", "error": the result file's words.
std::string_view CellOutcomeName(CellOutcome o);

/// What a finished cell came to.
struct CellResult {
  std::string cell, task, arm;
  uint64_t seed = 0;
  int sample = 0;
  std::optional<CellOutcome> outcome;  ///< none: the cell did not finish (it stays pending)
  bool success = false;
  std::string finish_reason, error;
  int rounds = 0, validations = 0, model_calls = 0;
  int64_t prompt_tokens = 0, cached_prompt_tokens = 0, completion_tokens = 0;
  double wall_s = 0;
  int64_t started_us = 0, ended_us = 0;  ///< wall clock, this process's part of the run
  std::string device;                    ///< the device it held ("" none)
  std::string model, base_url;           ///< the endpoint its repairer used ("" none)
  /// Arms that weaken the verdict: whether the full certified verdict passes its final
  /// candidate (null when not asked: the arm does not weaken it, or the run did not succeed).
  std::optional<bool> full_engine_passed;
  /// A timed KernelBench cell (the plan's "timing"; only a success is timed): its final
  /// ModelNew's speedup over Model, and over torch.compile(Model) where that was timed;
  /// timing_error says why a success has no speedup, compiled_error why none over compile.
  std::optional<double> speedup, speedup_over_compiled;
  std::string timing_error, compiled_error;
  nlohmann::json ToJson() const;
  static CellResult FromJson(const nlohmann::json& j);
};

/// What one replay of a finished cell came to: whether the engine, given the recorded values
/// of every layer but the live ones, took the same path to the same outcome.
struct CellReplay {
  std::string cell, task, arm, live;  ///< live: the layers re-executed, "tensor,trace"
  int replay = 0;                     ///< K, counted from 0 per cell
  bool recorded_success = false;
  /// The replay's outcome; empty when it stopped before its end (it left the record: a live
  /// value led where the recording has no value to pin) or could not run.
  std::optional<bool> replayed_success;
  bool matched = false;          ///< same path and outcome as the recording (engine/replay.h)
  std::string divergence_layer;  ///< the first divergence's layer, "" none
  std::string gap, error;        ///< why it stopped early; why it could not run
  double wall_s = 0;
  nlohmann::json ToJson() const;
  static CellReplay FromJson(const nlohmann::json& j);
};

enum class CellState { kPending, kRunning, kDone };
std::string_view CellStateName(CellState s);

struct CellLease {
  std::string device, host, job;  ///< job: the Slurm job (array task) running it, "" local
  int64_t pid = 0, pid_start = 0, started_us = 0;
  nlohmann::json ToJson() const;
  static CellLease FromJson(const nlohmann::json& j);
};

class ExperimentDir {
 public:
  /// Makes the directory with its plan and index. Throws UsageError when `dir` already holds
  /// an experiment (resume it instead).
  static ExperimentDir Create(const std::string& dir, const ExperimentPlan& plan);
  /// Opens an existing experiment. Throws UsageError when `dir` holds none.
  static ExperimentDir Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  const ExperimentPlan& plan() const { return plan_; }
  const std::vector<ExperimentCell>& cells() const { return cells_; }
  const ExperimentCell* Find(const std::string& name) const;

  std::string CellDir(const ExperimentCell& c) const { return dir_ + "/cells/" + c.name; }
  std::string RunDir(const ExperimentCell& c) const { return CellDir(c) + "/run"; }
  std::optional<CellResult> Result(const ExperimentCell& c) const;
  void WriteResult(const ExperimentCell& c, const CellResult& r) const;
  /// The result of a cell that ended without one of its own (its process crashed, Slurm gave
  /// up on it): outcome "error" with `error`, and the cell's task, arm, seed and sample.
  CellResult ErrorResult(const ExperimentCell& c, std::string error) const;
  std::string ReplayRunDir(const ExperimentCell& c, int k) const;
  /// The cell's finished replays, by K; a damaged record reads as a replay with an error.
  std::vector<CellReplay> Replays(const ExperimentCell& c) const;
  void WriteReplay(const ExperimentCell& c, const CellReplay& r) const;
  std::optional<CellLease> Lease(const ExperimentCell& c) const;
  void WriteLease(const ExperimentCell& c, const CellLease& lease) const;
  void DropLease(const ExperimentCell& c) const;
  /// Done when it has a result; running when its lease names a process that is alive on this
  /// host (or a Slurm job, which the executor asks Slurm about); pending otherwise.
  CellState State(const ExperimentCell& c) const;

  /// The cell's lock (cells/NAME/lock, flock): held by the process running the cell for as
  /// long as it runs, so no cell ever runs in two processes at once, whoever started them.
  /// Invalid when another process holds it.
  ScopedFd LockCell(const ExperimentCell& c) const;

  nlohmann::json Executor() const;
  void WriteExecutor(const nlohmann::json& e) const;
  bool cancelled() const;
  void MarkCancelled() const;

 private:
  ExperimentDir() = default;
  std::string dir_;
  ExperimentPlan plan_;
  std::vector<ExperimentCell> cells_;
};

/// What `kforge experiment cell` exits with when another process holds the cell's lock; an
/// executor tries the cell again later.
constexpr int kCellBusyExit = 75;  // EX_TEMPFAIL

/// The host name, for leases (a pid means something only on its host).
std::string HostName();
/// The start time of process `pid` (clock ticks since boot, /proc/PID/stat), 0 if none: with
/// the pid it names one process, never a later one that reused the number.
int64_t ProcessStartTime(int64_t pid);

}  // namespace kforge
