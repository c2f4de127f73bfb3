#pragma once
// Replaying a recorded run: its control logic again, its values from the record.
//
// Design note:
//  - A replay is a new run (its own directory and log) created from the recording's
//    run_started, driven by the same engine (RepairRun) with `RepairEnv::pinned` serving
//    the recorded values of every layer not re-executed (engine/recording.h). Strict replay
//    pins every layer: no model call, no compilation, no kernel runs; a value the recording
//    lacks stops the replay (ReplayGap) rather than being fetched live.
//  - `live` layers are re-executed for real: tensor (compile and run the candidates on this
//    machine), token (ask the repairer again), trace (read the clock).
//  - The outcome compares the recording with the replay (engine/run_compare.h): the first
//    divergence, in which layer, and what followed. A replay of an unfinished recording
//    matches when it agrees up to the recording's end.
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/recording.h"
#include "engine/repair_loop.h"
#include "engine/run_compare.h"

namespace kforge {

struct ReplayOptions {
  std::set<Layer> live;  ///< re-executed for real; the rest are pinned to the recording
  std::string out_dir;   ///< the replay's run directory (must not hold a run)
  /// Stores the recorded values' artifacts may also be in (a counterfactual's files).
  std::vector<const ArtifactStore*> extra_artifacts;
};

struct ReplayResult {
  std::string dir;
  RunState state;
  RunComparison comparison;
  std::string gap;  ///< why the replay stopped before its end ("" : it ran to its end)
  bool recording_finished = true;
  int validations_pinned = 0, turns_pinned = 0, clock_reads_pinned = 0;
  /// Matched: no divergence outside the trace layer, and it ran to its end (or to the end
  /// of an unfinished recording).
  bool matched() const;
  nlohmann::json ToJson() const;
};

/// `env.machine` is the replay's machine: its processes and HTTP should refuse for pinned
/// layers (record/replay_env.h), so that a live call cannot happen unnoticed.
ReplayResult Replay(const Recording& recording, RunInputs inputs, const ReplayOptions& options, RepairEnv env);

}  // namespace kforge
