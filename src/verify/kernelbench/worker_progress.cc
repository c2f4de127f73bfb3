#include "verify/kernelbench/worker_progress.h"

#include <algorithm>
#include <utility>

#include "core/text.h"

namespace kforge {

namespace {

using nlohmann::json;

constexpr std::pair<const char*, WorkerStage> kStages[] = {
    {"start", WorkerStage::kStart},
    {"import_torch", WorkerStage::kImportTorch},
    {"wait_job", WorkerStage::kWaitJob},
    {"load_reference", WorkerStage::kLoadReference},
    {"warm_up", WorkerStage::kWarmUp},
    {"wait_build", WorkerStage::kWaitBuild},
    {"not_built", WorkerStage::kNotBuilt},
    {"load_candidate", WorkerStage::kLoadCandidate},
    {"init", WorkerStage::kInit},
    {"trials", WorkerStage::kTrials},
    {"handed_over", WorkerStage::kHandedOver},
    {"neutralise", WorkerStage::kNeutralise},
    {"timing", WorkerStage::kTiming},
    {"timing_compiled", WorkerStage::kTimingCompiled},
    {"done", WorkerStage::kDone},
};

/// Whether the report's "stages" is the history kforge's worker keeps: [name, seconds]
/// entries whose last names `stage` (empty only at the start).
bool StageHistoryFits(const json& report, WorkerStage stage, std::string* problem) {
  auto it = report.find("stages");
  if (it == report.end() || !it->is_array()) {
    *problem = "has no stage history";
    return false;
  }
  if (it->empty()) {
    if (stage == WorkerStage::kStart) return true;
    *problem = "names a stage its empty stage history never entered";
    return false;
  }
  const json& last = it->back();
  WorkerStage named;
  if (!last.is_array() || last.empty() || !last[0].is_string() ||
      !TryParseWorkerStage(last[0].get<std::string>(), &named) || named != stage) {
    *problem = "names a stage its stage history does not end with";
    return false;
  }
  return true;
}

}  // namespace

bool TryParseWorkerStage(const std::string& name, WorkerStage* out) {
  for (const auto& [n, s] : kStages)
    if (name == n) {
      *out = s;
      return true;
    }
  return false;
}

int64_t WorkerProgress::AllowanceMs(int64_t reference_trial_ms) const {
  const WorkerAllowances& a = allowances_;
  const int64_t candidate_code = 10000 + 2 * a.call_ms;
  switch (stage_) {
    case WorkerStage::kWaitBuild:
      return delivered_ ? candidate_code : a.build_ms;  // the engine ends the wait when its build ends
    case WorkerStage::kLoadCandidate:
    case WorkerStage::kInit:
    case WorkerStage::kHandedOver:
      return a.candidate ? candidate_code : a.setup_ms;
    case WorkerStage::kTrials:
    case WorkerStage::kNeutralise:
      return a.candidate ? candidate_code + 2 * reference_trial_ms : a.setup_ms;
    case WorkerStage::kTiming:
      return a.candidate ? 10000 + (a.timing_calls + 1) * a.call_ms : a.setup_ms;
    case WorkerStage::kTimingCompiled:  // the reference's alone: torch.compile, then its timing
      return a.candidate ? 0 : a.compile_ms;
    default:
      return a.setup_ms;
  }
}

void WorkerProgress::BuildDelivered(int64_t now_ns) {
  if (delivered_) return;
  delivered_ = true;
  if (stage_ != WorkerStage::kWaitBuild) return;
  // The charge so far was the build's; the worker's own time starts now.
  charged_ns_ = 0;
  if (last_ns_ >= 0) last_ns_ = std::max(last_ns_, now_ns);
}

WorkerProgress::Step WorkerProgress::Observe(const json& report, int64_t now_ns, bool judge_behind,
                                             int64_t reference_trial_ms) {
  if (!sealed_.is_null()) return Step::kDone;
  // Time since the last observation is charged to the state the worker was in, unless it
  // waited, believably, for the engine.
  if (last_ns_ >= 0 && !waiting_) charged_ns_ += now_ns - last_ns_;
  last_ns_ = now_ns;
  if (report.is_object()) {
    auto stage_it = report.find("stage");
    WorkerStage stage = stage_;
    if (stage_it == report.end() || !stage_it->is_string() ||
        !TryParseWorkerStage(stage_it->get<std::string>(), &stage)) {
      violation_ =
          "its progress report names a stage kforge's worker does not have (" +
          (stage_it != report.end() && stage_it->is_string() ? CutText(UntrustedText(stage_it->get<std::string>()), 40)
                                                             : std::string("none")) +
          ")";
      return Step::kWentBack;
    }
    // kforge's worker appends each stage it enters to "stages": the history only grows, and
    // its last entry is the stage reported. A report without it, or with a shorter one, was
    // not written by the worker's own progress (a forward forging an earlier state).
    std::string history_problem;
    if (!StageHistoryFits(report, stage, &history_problem)) {
      violation_ = "its progress report " + history_problem;
      return Step::kWentBack;
    }
    const size_t history = report.find("stages")->size();
    if (history < history_) {
      violation_ = "its progress reports went backwards (a stage history of " + std::to_string(history) +
                   " entries after one of " + std::to_string(history_) + ")";
      return Step::kWentBack;
    }
    history_ = history;
    auto trials_it = report.find("trials");
    const size_t trials = trials_it != report.end() && trials_it->is_array() ? trials_it->size() : 0;
    if (stage < stage_ || (stage == stage_ && trials < trials_)) {
      violation_ = "its progress reports went backwards (stage " + stage_it->get<std::string>() + " with " +
                   std::to_string(trials) + " trials after " + std::to_string(trials_) + " trials and a later stage)";
      return Step::kWentBack;
    }
    if (stage != stage_ || trials != trials_) charged_ns_ = 0;  // a new state: its own allowance
    stage_ = stage;
    trials_ = trials;
    auto waiting = report.find("waiting");
    waiting_ = judge_behind && waiting != report.end() && waiting->is_boolean() && waiting->get<bool>();
    if (stage_ == WorkerStage::kDone) {
      sealed_ = report;
      return Step::kDone;
    }
  }
  return ChargedMs() <= AllowanceMs(reference_trial_ms) ? Step::kGoOn : Step::kOverTime;
}

}  // namespace kforge
