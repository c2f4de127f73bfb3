#include "engine/run_state.h"

#include <algorithm>

#include "core/names.h"

namespace kforge {
namespace {

constexpr NameEntry<EventType> kEventNames[] = {
    {EventType::kRunStarted, "run_started"},
    {EventType::kValidated, "validated"},
    {EventType::kRepairRequested, "repair_requested"},
    {EventType::kRepairProposed, "repair_proposed"},
    {EventType::kRoundClosed, "round_closed"},
    {EventType::kCancelled, "cancelled"},
    {EventType::kResumed, "resumed"},
    {EventType::kValidationTrace, "validation_trace"},
    {EventType::kClockRead, "clock_read"},
    {EventType::kRunFinished, "run_finished"},
};

Scored ScoredFromJson(const nlohmann::json& j) {
  Scored s;
  s.candidate = j.value("candidate", "");
  s.verdict = j.value("verdict", "");
  s.forensics = j.value("forensics", "");
  s.score = j.value("score", 0.0);
  s.passed = j.value("passed", false);
  s.integrity = j.value("integrity", false);
  TryParseFailureClass(j.value("failure_class", "none"), &s.failure);
  TryParseLevel(j.value("level", "none"), &s.level);
  s.signature = j.value("signature", "");
  s.message = j.value("message", "");
  s.origin = j.value("origin", "");
  s.previous = j.value("previous", "");
  s.round = j.value("round", 0);
  s.index = j.value("index", -1);
  s.iteration = j.value("iteration", 0);
  return s;
}

const Scored* FindResult(const std::vector<Scored>& results, const std::string& candidate) {
  for (const auto& r : results)
    if (r.candidate == candidate) return &r;
  return nullptr;
}

}  // namespace

std::string_view EventTypeName(EventType t) { return NameIn(kEventNames, t); }

EventType ParseEventType(std::string_view name) {
  EventType t = EventType::kUnknown;
  ParseIn(kEventNames, name, &t);
  return t;
}

void RunState::Apply(const Event& e) {
  const nlohmann::json& d = e.data;
  const EventType type = ParseEventType(e.type);
  if (type == EventType::kRunStarted) {
    started = true;
    config = RunConfig::FromJson(d.value("config", nlohmann::json::object()));
    task_artifact = d.value("task_artifact", "");
    task_name = d.value("task_name", "");
    initial_candidate = d.value("candidate", "");
    kb_snapshot = d.value("kb_snapshot", "");
    started_wall_us = e.wall_us;
  } else if (type == EventType::kValidated) {
    Scored s = ScoredFromJson(d);
    trace_pending = true;
    last_verdict = s.verdict;
    ++iterations;
    error_history.push_back(s.failure);
    seen.insert(s.candidate);
    if (s.index < 0) {
      current = s;
      best = s;
      proposed = false;  // a candidate written from the task is now the initial one
      proposals.clear();
      proposal_origins.clear();
    } else {
      round_results.push_back(s);
    }
  } else if (type == EventType::kRepairRequested) {
    round = d.value("round", round + 1);
    attempt = d.value("attempt", attempt);
    if (!d.value("write", false)) ++rounds_in_attempt;
    probes_requested = false;
    ++turns;
    requested = true;
    proposed = false;
    proposals.clear();
    proposal_origins.clear();
    round_results.clear();
  } else if (type == EventType::kRepairProposed) {
    requested = false;
    proposed = true;
    probes_requested = d.value("probes_requested", false);
    usage += Usage::FromJson(d.value("usage", nlohmann::json::object()));
    for (const auto& p : d.value("proposals", nlohmann::json::array())) {
      proposals.push_back(p.value("candidate", ""));
      proposal_origins.push_back(p.value("origin", ""));
    }
  } else if (type == EventType::kRoundClosed) {
    proposed = false;
    if (d.contains("adopted") && d["adopted"].is_string()) {
      if (const Scored* s = FindResult(round_results, d["adopted"].get<std::string>())) current = *s;
    }
    if (d.contains("new_best") && d["new_best"].is_string()) {
      if (const Scored* s = FindResult(round_results, d["new_best"].get<std::string>())) best = *s;
    }
    if (d.value("rollback", false) && best) current = best;
    rounds_without_best = d.value("rounds_without_best", rounds_without_best);
    stagnant_rounds = d.value("stagnant_rounds", stagnant_rounds);
    repeated = d.value("repeated", repeated);
    build_error_rounds = d.value("build_error_rounds", build_error_rounds);
    precision_rounds = d.value("precision_rounds", precision_rounds);
    if (d.value("new_attempt", false)) {
      ++attempt;
      rounds_in_attempt = 0;
      extra_rounds = 0;
      build_error_rounds = 0;
      precision_rounds = 0;
    }
    if (d.value("extend", 0) > 0) {
      extra_rounds += d.value("extend", 0);
      extended = true;
    }
    round_results.clear();
    proposals.clear();
    proposal_origins.clear();
    stop_pending = d.value("stop", "");
    stop_message = d.value("stop_message", "");
  } else if (type == EventType::kValidationTrace) {
    trace_pending = false;
  } else if (type == EventType::kClockRead) {
    clock_round = d.value("round", -1);
    clock_elapsed_s = d.value("elapsed_s", int64_t{0});
  } else if (type == EventType::kCancelled) {
    cancelled = true;
    cancelled_wall_us = e.wall_us;
  } else if (type == EventType::kResumed) {
    if (cancelled) paused_us += std::max<int64_t>(0, e.wall_us - cancelled_wall_us);
    cancelled = false;
  } else if (type == EventType::kRunFinished) {
    finished = true;
    success = d.value("success", false);
    finish_reason = d.value("reason", "");
  }
}

RunState FoldEvents(const std::vector<Event>& events) {
  RunState s;
  for (const auto& e : events) s.Apply(e);
  return s;
}

}  // namespace kforge
