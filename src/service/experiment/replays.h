#pragma once
// Run-to-run variance from replay: finished cells replayed with some layers live — by
// default the tensor layer, so the candidates are compiled and run again while the
// repairer's words and the clock stay pinned to the recording. What then differs comes from
// the engine's own measurement, not from the model's sampling (which the seeds measure).
//
// Design note:
//  - The sample: finished cells that did not end in an error, taken round-robin over the
//    arms in the plan's cell order, at most `cells` of them (0: all), each replayed until it
//    has `times` replays. Replays already recorded count, so running the command again
//    resumes it; a replay killed midway left a folder without its record, which is removed
//    and replayed again.
//  - Each replay is an ordinary `kforge replay` of the cell's run into
//    cells/NAME/replays/K/, its record cells/NAME/replays/K.json written after it ends
//    (experiment_dir.h).
//  - The measure, per arm: over the replayed cells, the mean of p(1-p) with p the success
//    share among the recording and its replays that reached their end (0 when all agree);
//    how many replays kept the recording's path, changed its outcome, or stopped early (a
//    live value led where the recording holds no value to pin); divergences by layer.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "service/experiment/experiment_dir.h"
#include "service/service.h"

namespace kforge {

class CancellationToken;

struct CellReplayOptions {
  int cells = 0;  ///< how many finished cells to replay; 0 every one
  int times = 1;  ///< replays per cell
  std::set<Layer> live = {Layer::kTensor};
};

/// The finished, error-free cells to replay: round-robin over arms, at most `cells` (0 all).
std::vector<const ExperimentCell*> ReplaySample(const ExperimentDir& dir, int cells);

/// Replays the cell's run once as replay number `k` and records the result. A replay that
/// cannot run (its run directory damaged) gets `error`; a cancelled one gets no record.
CellReplay ReplayCell(Service& service, const ExperimentDir& dir, const ExperimentCell& cell, int k,
                      const std::set<Layer>& live, const CancellationToken& cancel, const ProgressFn& progress);

struct ReplayRunSummary {
  int replayed = 0, already = 0, errors = 0;
  bool cancelled = false;
};

/// Replays the sample until each cell has `times` replays with `live` layers.
ReplayRunSummary ReplayCells(Service& service, const ExperimentDir& dir, const CellReplayOptions& options,
                             const CancellationToken& cancel, const ProgressFn& progress);

/// One arm's run-to-run variance: `by_cell` holds each replayed cell's replays (all of one
/// arm; a cell with none is not counted).
struct ReplaySummary {
  int cells = 0, replays = 0, matched = 0, outcome_changed = 0, stopped = 0, errors = 0;
  double outcome_variance = 0;  ///< mean over cells with a finished replay of p(1-p)
  /// The same over every cell with a replay that ran, a stopped replay counted as the
  /// recorded outcome (low) and as the other one (high). A replay whose live values move the
  /// run off its record usually stops at the first value it lacks, so the replays that varied
  /// are the stopped ones: the finished-only figure alone would leave them out.
  double outcome_variance_low = 0, outcome_variance_high = 0;
  std::map<std::string, int> divergence_layers;
  std::set<std::string> live;
};
ReplaySummary SummariseReplays(const std::vector<std::vector<CellReplay>>& by_cell);

}  // namespace kforge
