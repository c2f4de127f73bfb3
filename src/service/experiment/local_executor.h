#pragma once
// The local executor: runs an experiment's pending cells on this machine, each in a process
// of its own (`kforge experiment cell DIR NAME`) holding one device of the pool
// (CUDA_VISIBLE_DEVICES names it to the cell's processes), as many at once as there are
// devices. A cell's lease is written before its process starts and removed when it ends;
// a lease left by a killed experiment names a process that is killed before its cell is
// resumed from its event log, so no cell ever runs twice at once.
#include <functional>
#include <string>
#include <vector>

#include "service/experiment/experiment_dir.h"

namespace kforge {

class CancellationToken;
class Machine;

struct LocalRunOptions {
  std::vector<std::string> devices;                  ///< the pool; one cell per device at a time
  bool cuda = false;                                 ///< set CUDA_VISIBLE_DEVICES to the leased device
  std::string kforge;                                ///< the kforge binary the cells run
  std::function<void(const std::string&)> progress;  ///< a line now and then (stderr)
  int progress_every_ms = 2000;
};

struct LocalRunSummary {
  int started = 0, finished = 0, errors = 0;
  bool cancelled = false;
  double busy_device_s = 0, wall_s = 0;  ///< device-seconds held by cells, and the pool's wall time
};

/// Runs every cell that is not done, until all are, the token fires, or the experiment is
/// marked cancelled; a cancelled run interrupts its cells (they resume later).
LocalRunSummary RunLocal(Machine& machine, const ExperimentDir& dir, const LocalRunOptions& options,
                         const CancellationToken& cancel);

/// Kills the processes of running cells on this host (SIGINT, then SIGKILL after
/// `grace_ms`) and drops their leases. Returns how many it stopped.
int StopLocalCells(const ExperimentDir& dir, int64_t grace_ms);

/// The pool a plan runs on when --devices is not given: on cuda every visible GPU
/// (CUDA_VISIBLE_DEVICES when set, else nvidia-smi's list; EnvironmentError when none), on
/// the CPU half the cores (at least one), named cpu0, cpu1, ...
std::vector<std::string> DefaultDevices(Machine& machine, bool cuda);

/// One progress line: done, running and failed cells in all and per arm, and the time left.
std::string ProgressLine(const ExperimentDir& dir, double seconds_per_cell, int slots);

}  // namespace kforge
