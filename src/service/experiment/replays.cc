#include "service/experiment/replays.h"

#include <fmt/format.h>

#include "core/cancel.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "exec/machine.h"

namespace kforge {
namespace {

std::string LiveNames(const std::set<Layer>& live) {
  std::string out;
  for (Layer l : live) out += (out.empty() ? "" : ",") + std::string(LayerName(l));
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<const ExperimentCell*> ReplaySample(const ExperimentDir& dir, int cells) {
  std::vector<std::vector<const ExperimentCell*>> by_arm(dir.plan().arms.size());
  for (const auto& c : dir.cells()) {
    auto r = dir.Result(c);
    if (r && r->outcome != CellOutcome::kError) by_arm[c.arm].push_back(&c);
  }
  std::vector<const ExperimentCell*> out;
  for (size_t i = 0;; ++i) {
    bool any = false;
    for (const auto& arm : by_arm) {
      if (i >= arm.size()) continue;
      any = true;
      if (cells > 0 && static_cast<int>(out.size()) == cells) return out;
      out.push_back(arm[i]);
    }
    if (!any) return out;
  }
}

CellReplay ReplayCell(Service& service, const ExperimentDir& dir, const ExperimentCell& cell, int k,
                      const std::set<Layer>& live, const CancellationToken& cancel, const ProgressFn& progress) {
  CellReplay r;
  r.cell = cell.name;
  r.task = dir.plan().tasks[cell.task].name;
  r.arm = dir.plan().arms[cell.arm].name;
  r.live = LiveNames(live);
  r.replay = k;
  auto result = dir.Result(cell);
  r.recorded_success = result && result->success;
  Clock& clock = service.machine().env().clock();
  const int64_t started = clock.MonotonicNanos();
  const std::string out = dir.ReplayRunDir(cell, k);
  try {
    if (FileExists(out)) {  // a replay killed before its record: it starts again
      std::string why = RemoveTree(out);
      if (!why.empty()) throw EnvironmentError("cannot remove the unfinished replay " + out + ": " + why);
    }
    ReplayRequest request{dir.RunDir(cell), live, {}, out};
    ReplayReport report = service.Replay(request, cancel, progress);
    if (cancel.cancelled()) return r;
    const ReplayResult& res = report.result;
    r.matched = res.matched();
    r.gap = res.gap;
    if (res.comparison.divergence) r.divergence_layer = LayerName(res.comparison.divergence->layer);
    if (res.gap.empty() && res.state.finished) r.replayed_success = res.state.success;
  } catch (const CancelledError&) {
    throw;
  } catch (const Error& e) {
    if (cancel.cancelled()) return r;
    r.error = e.what();
  }
  r.wall_s = (clock.MonotonicNanos() - started) / 1e9;
  dir.WriteReplay(cell, r);
  return r;
}

ReplayRunSummary ReplayCells(Service& service, const ExperimentDir& dir, const CellReplayOptions& options,
                             const CancellationToken& cancel, const ProgressFn& progress) {
  ReplayRunSummary s;
  const auto sample = ReplaySample(dir, options.cells);
  for (const ExperimentCell* c : sample) {
    ScopedFd lock = dir.LockCell(*c);  // one process replays a cell at a time
    if (!lock.valid()) {
      if (progress) progress("replay " + c->name + ": another process is replaying it; left to that one");
      continue;
    }
    const std::vector<CellReplay> done = dir.Replays(*c);
    const int have = static_cast<int>(done.size());
    // One condition per experiment: replays with other live layers would pool two variances.
    for (const CellReplay& earlier : done)
      if (earlier.error.empty() && earlier.live != LiveNames(options.live))
        throw UsageError(fmt::format(
            "cell {} was replayed with --live {}, not {}: replay with the same --live, or remove the cells' "
            "replays/ folders to measure another condition",
            c->name, earlier.live, LiveNames(options.live)));
    s.already += std::min(have, options.times);
    for (int k = have; k < options.times; ++k) {
      if (cancel.cancelled()) {
        s.cancelled = true;
        return s;
      }
      CellReplay r = ReplayCell(service, dir, *c, k, options.live, cancel, nullptr);
      if (cancel.cancelled()) {
        s.cancelled = true;
        return s;
      }
      ++s.replayed;
      s.errors += !r.error.empty();
      if (progress)
        progress(fmt::format("replay {} #{}: {}", c->name, k,
                             !r.error.empty()     ? "error: " + r.error
                             : r.matched          ? "same path and outcome"
                             : !r.gap.empty()     ? "stopped: " + r.gap
                             : r.replayed_success ? fmt::format("diverged in the {} layer; {}", r.divergence_layer,
                                                                *r.replayed_success ? "repaired" : "not repaired")
                                                  : "diverged"));
    }
  }
  return s;
}

ReplaySummary SummariseReplays(const std::vector<std::vector<CellReplay>>& by_cell) {
  ReplaySummary s;
  auto variance = [](int successes, int outcomes) {
    const double p = double(successes) / outcomes;
    return p * (1 - p);
  };
  double finished_sum = 0, low_sum = 0, high_sum = 0;
  int cells_finished = 0, cells_ran = 0;
  for (const auto& replays : by_cell) {
    if (replays.empty()) continue;
    ++s.cells;
    const bool recorded = replays.front().recorded_success;
    int outcomes = 1, successes = recorded, stopped = 0;
    for (const CellReplay& r : replays) {
      ++s.replays;
      s.live.insert(r.live);
      if (!r.error.empty()) {
        ++s.errors;
        continue;
      }
      s.matched += r.matched;
      if (!r.divergence_layer.empty() && !r.matched) ++s.divergence_layers[r.divergence_layer];
      if (!r.replayed_success) {
        ++stopped;
        continue;
      }
      ++outcomes;
      successes += *r.replayed_success;
      s.outcome_changed += *r.replayed_success != r.recorded_success;
    }
    s.stopped += stopped;
    if (outcomes + stopped < 2) continue;  // no replay ran: nothing to compare the recording with
    ++cells_ran;
    low_sum += variance(successes + (recorded ? stopped : 0), outcomes + stopped);
    high_sum += variance(successes + (recorded ? 0 : stopped), outcomes + stopped);
    if (outcomes < 2) continue;
    finished_sum += variance(successes, outcomes);
    ++cells_finished;
  }
  if (cells_finished > 0) s.outcome_variance = finished_sum / cells_finished;
  if (cells_ran > 0) {
    s.outcome_variance_low = low_sum / cells_ran;
    s.outcome_variance_high = high_sum / cells_ran;
  }
  return s;
}

}  // namespace kforge
