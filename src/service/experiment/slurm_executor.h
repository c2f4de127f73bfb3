#pragma once
// The Slurm executor: an experiment's pending cells as one job array (`sbatch --array`), each
// array task running `kforge experiment cell DIR INDEX` on whatever node Slurm gives it,
// reading and writing the experiment directory on the shared file system. kforge starts no
// daemon: it submits, follows the jobs with squeue and sacct, resubmits the cells of array
// tasks that ended without a result (a node that failed, a time limit), and cancels with
// scancel. Slurm 22.05 or newer.
//
// Design note — what is persisted, in executor.json, before it matters:
//   {"executor": "slurm", "job_name": "kforge-<id>", "jobs": ["123", ...],
//    "attempts": {"<cell index>": n}}
//   The job name is the experiment's own, so a driver killed between sbatch and writing the
//   job's id finds the job again (squeue --name) instead of submitting the cells twice.
#include <functional>
#include <string>
#include <vector>

#include "service/experiment/experiment_dir.h"

namespace kforge {

class CancellationToken;
class Machine;

struct SlurmRunOptions {
  std::string kforge;  ///< the kforge binary, at a path the nodes see
  std::function<void(const std::string&)> progress;
  int poll_ms = 2000;
  int max_attempts = 3;  ///< submissions of one cell before its failure is its result
};

struct SlurmRunSummary {
  int submitted = 0, resubmitted = 0, failed = 0;
  bool cancelled = false;
};

/// Submits the cells that are not done and not already in a live job of this experiment,
/// then follows them until every cell has a result, the token fires (the jobs are cancelled:
/// resume submits what is left) or the experiment is marked cancelled.
SlurmRunSummary RunSlurm(Machine& machine, const ExperimentDir& dir, const SlurmRunOptions& options,
                         const CancellationToken& cancel);

/// scancel for every job of the experiment; returns how many were live.
int CancelSlurmCells(Machine& machine, const ExperimentDir& dir);

/// The sbatch script of an array of `indices` (what RunSlurm submits), for tests and users.
std::string SlurmScript(const ExperimentDir& dir, const std::string& kforge, const std::string& job_name);

}  // namespace kforge
