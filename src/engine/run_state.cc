#include "engine/run_state.h"

#include <algorithm>

namespace kforge {
namespace {

const Scored* FindResult(const std::vector<Scored>& results, const std::string& candidate) {
  for (const auto& r : results)
    if (r.candidate == candidate) return &r;
  return nullptr;
}

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

void RunState::Apply(const Event& e) {
  if (std::optional<RunEvent> typed = Decode(e)) Apply(*typed, e.wall_us);
}

void RunState::ApplyValidated(const ValidatedEvent& d) {
  const Scored& s = d.scored;
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
}

void RunState::ApplyRoundClosed(const RoundClosedEvent& e) {
  const RoundDecision& d = e.decision;
  proposed = false;
  if (const Scored* s = FindResult(round_results, d.adopted)) current = *s;
  if (const Scored* s = FindResult(round_results, d.new_best)) best = *s;
  if (d.rollback && best) current = best;
  rounds_without_best = d.counters.rounds_without_best;
  stagnant_rounds = d.counters.stagnant;
  repeated = d.counters.repeated;
  build_error_rounds = d.counters.build_error_rounds;
  precision_rounds = d.counters.precision_rounds;
  if (d.new_attempt) {
    ++attempt;
    rounds_in_attempt = 0;
    extra_rounds = 0;
    build_error_rounds = 0;
    precision_rounds = 0;
  }
  if (d.extend > 0) {
    extra_rounds += d.extend;
    extended = true;
  }
  round_results.clear();
  proposals.clear();
  proposal_origins.clear();
  stop_pending = d.stop;
  stop_success = d.success;
  stop_message = d.stop_message;
}

void RunState::Apply(const RunEvent& event, int64_t wall_us) {
  std::visit(Overloaded{
                 [&](const RunStartedEvent& d) {
                   CheckEventsVersion(d, "this log");
                   started = true;
                   config = d.config;
                   task_artifact = d.task_artifact;
                   task_name = d.task_name;
                   initial_candidate = d.candidate;
                   kb_snapshot = d.kb_snapshot;
                   started_wall_us = wall_us;
                 },
                 [&](const ValidatedEvent& d) { ApplyValidated(d); },
                 [&](const RepairRequestedEvent& d) {
                   round = d.round;
                   attempt = d.attempt;
                   if (!d.write) ++rounds_in_attempt;
                   probes_requested = false;
                   turn_failed = false;
                   suggestion = d.suggestion;
                   ++turns;
                   requested = true;
                   proposed = false;
                   proposals.clear();
                   proposal_origins.clear();
                   round_results.clear();
                 },
                 [&](const RepairProposedEvent& d) {
                   requested = false;
                   proposed = true;
                   probes_requested = d.probes_requested;
                   turn_failed = !d.turn_error.empty();
                   regenerate_next = false;
                   usage += d.usage;
                   for (const auto& p : d.proposals) {
                     proposals.push_back(p.candidate);
                     proposal_origins.push_back(p.origin);
                   }
                 },
                 [&](const RoundClosedEvent& e) { ApplyRoundClosed(e); },
                 [&](const ValidationTraceEvent&) { trace_pending = false; },
                 [&](const ClockReadEvent& d) {
                   clock_round = d.round;
                   clock_elapsed_s = d.elapsed_s;
                 },
                 [&](const CancelledEvent&) {
                   cancelled = true;
                   cancelled_wall_us = wall_us;
                 },
                 [&](const ResumedEvent&) {
                   if (cancelled) paused_us += std::max<int64_t>(0, wall_us - cancelled_wall_us);
                   cancelled = false;
                 },
                 [&](const UserDecidedEvent& d) {
                   user_round = d.round;
                   if (d.decision == UserDecision::kStop) user_stop = true;
                   if (d.decision == UserDecision::kRequirement) {
                     requirement = d.text;
                     regenerate_next = true;
                   }
                 },
                 [&](const RunFinishedEvent& d) {
                   finished = true;
                   success = d.success;
                   finish_reason = d.reason;
                   environment_error = d.environment;
                 },
             },
             event);
}

RunState FoldEvents(const std::vector<Event>& events) {
  RunState s;
  for (const auto& e : events) s.Apply(e);
  return s;
}

}  // namespace kforge
