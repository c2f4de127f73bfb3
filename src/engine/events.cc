#include "engine/events.h"

#include <type_traits>

#include "core/error.h"
#include "core/names.h"

namespace kforge {
namespace {

using nlohmann::json;

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
    {EventType::kUserDecided, "user_decided"},
};

constexpr NameEntry<UserDecision> kDecisionNames[] = {
    {UserDecision::kContinue, "continue"}, {UserDecision::kStop, "stop"}, {UserDecision::kRequirement, "requirement"}};

constexpr NameEntry<GuardKind> kGuardNames[] = {
    {GuardKind::kIntegrity, "integrity"},
    {GuardKind::kBestSnapshot, "best_snapshot"},
    {GuardKind::kRepeatedFailure, "repeated_failure"},
    {GuardKind::kStagnation, "stagnation"},
    {GuardKind::kNearPass, "near_pass"},
    {GuardKind::kFp16Ceiling, "fp16_ceiling"},
    {GuardKind::kTurnBudget, "turn_budget"},
    {GuardKind::kWallClock, "wall_clock"},
    {GuardKind::kSoftBudget, "soft_budget"},
    {GuardKind::kAttemptBudget, "attempt_budget"},
    {GuardKind::kRoundBudget, "round_budget"},
    {GuardKind::kOscillation, "oscillation"},
    {GuardKind::kNoProposals, "no_proposals"},
};

constexpr NameEntry<GuardAction> kActionNames[] = {
    {GuardAction::kReject, "reject"}, {GuardAction::kRollback, "rollback"},      {GuardAction::kStop, "stop"},
    {GuardAction::kExtend, "extend"}, {GuardAction::kNewAttempt, "new_attempt"},
};

constexpr std::string_view kCertified = "certified";

template <typename E, size_t N>
E Parsed(const NameEntry<E> (&table)[N], const json& j, const char* field) {
  E out{};
  const std::string name = j.at(field).get<std::string>();
  if (!ParseIn(table, name, &out)) throw std::invalid_argument("unknown " + std::string(field) + " '" + name + "'");
  return out;
}

json ScoredJson(const Scored& s) {
  return {{"candidate", s.candidate},
          {"verdict", s.verdict},
          {"forensics", s.forensics},
          {"score", s.score},
          {"passed", s.passed},
          {"integrity", s.integrity},
          {"failure_class", FailureClassName(s.failure)},
          {"level", LevelName(s.level)},
          {"signature", s.signature},
          {"message", s.message},
          {"origin", s.origin},
          {"round", s.round},
          {"index", s.index},
          {"iteration", s.iteration},
          {"previous", s.previous}};
}

Scored ScoredFrom(const json& j) {
  Scored s;
  s.candidate = j.at("candidate").get<std::string>();
  s.verdict = j.at("verdict").get<std::string>();
  s.forensics = j.at("forensics").get<std::string>();
  s.score = j.at("score").get<double>();
  s.passed = j.at("passed").get<bool>();
  s.integrity = j.at("integrity").get<bool>();
  if (!TryParseFailureClass(j.at("failure_class").get<std::string>(), &s.failure))
    throw std::invalid_argument("unknown failure_class");
  if (!TryParseLevel(j.at("level").get<std::string>(), &s.level)) throw std::invalid_argument("unknown level");
  s.signature = j.at("signature").get<std::string>();
  s.message = j.at("message").get<std::string>();
  s.origin = j.at("origin").get<std::string>();
  s.previous = j.value("previous", "");
  s.round = j.at("round").get<int>();
  s.index = j.at("index").get<int>();
  s.iteration = j.at("iteration").get<int>();
  return s;
}

json Payload(const RunStartedEvent& e) {
  return {{"task_name", e.task_name},     {"task_origin", e.task_origin},      {"task_artifact", e.task_artifact},
          {"candidate", e.candidate},     {"config", e.config.ToJson()},       {"kforge_version", e.kforge_version},
          {"kb_snapshot", e.kb_snapshot}, {"events_version", e.events_version}};
}

json Payload(const ValidatedEvent& e) {
  json d = ScoredJson(e.scored);
  d["seed"] = e.seed;
  d["probes"] = e.probes;
  d["trials"] = e.trials;
  if (!e.tensors.empty()) d["tensors"] = e.tensors;
  return d;
}

json Payload(const RepairRequestedEvent& e) {
  return {{"round", e.round},     {"attempt", e.attempt},     {"repairer", e.repairer},    {"write", e.write},
          {"current", e.current}, {"forensics", e.forensics}, {"suggestion", e.suggestion}};
}

json Payload(const RepairProposedEvent& e) {
  json proposals = json::array();
  for (const auto& p : e.proposals)
    proposals.push_back({{"candidate", p.candidate}, {"origin", p.origin}, {"description", p.description}});
  return {{"round", e.round},
          {"proposals", proposals},
          {"skipped_seen", e.skipped_seen},
          {"skipped", e.skipped},
          {"kb_hits", e.kb_hits},
          {"tool_calls", e.tool_calls},
          {"probes_requested", e.probes_requested},
          {"usage", e.usage.ToJson()},
          {"deterministic", e.deterministic},
          {"turn_error", e.turn_error},
          {"transcript", e.transcript}};
}

json Payload(const RoundClosedEvent& e) {
  json d = DecisionJson(e.round, e.decision);
  d["kb_updates"] = json::array();
  for (const auto& u : e.kb_updates) {
    d["kb_updates"].push_back({{"id", u.id}, {"succeeded", u.succeeded}, {"integrity", u.integrity}});
    if (u.degenerated) d["kb_updates"].back()["degenerated"] = true;  // absent in runs recorded before
  }
  return d;
}

json Payload(const ValidationTraceEvent& e) { return e.trace; }
json Payload(const ClockReadEvent& e) { return {{"round", e.round}, {"elapsed_s", e.elapsed_s}}; }
json Payload(const CancelledEvent& e) { return {{"reason", e.reason}, {"round", e.round}, {"attempt", e.attempt}}; }
json Payload(const ResumedEvent& e) { return {{"round", e.round}}; }
json Payload(const UserDecidedEvent& e) {
  return {{"round", e.round}, {"decision", NameIn(kDecisionNames, e.decision)}, {"text", e.text}};
}

json Payload(const RunFinishedEvent& e) {
  json d = {{"success", e.success}, {"reason", e.reason}, {"message", e.message}};
  if (!e.final_candidate.empty()) d["final_candidate"] = e.final_candidate;
  if (e.environment) d["environment_error"] = true;
  return d;
}

Layer LayerOf(const RunEvent& e) {
  if (std::holds_alternative<ValidatedEvent>(e)) return Layer::kTensor;
  if (const auto* p = std::get_if<RepairProposedEvent>(&e)) return p->deterministic ? Layer::kControl : Layer::kToken;
  if (std::holds_alternative<ValidationTraceEvent>(e) || std::holds_alternative<ClockReadEvent>(e))
    return Layer::kTrace;
  return Layer::kControl;
}

RoundDecision DecisionFrom(const json& d) {
  RoundDecision r;
  r.adopted = d.value("adopted", "");
  r.new_best = d.value("new_best", "");
  r.rollback = d.value("rollback", false);
  r.new_attempt = d.value("new_attempt", false);
  r.extend = d.value("extend", 0);
  r.counters.rounds_without_best = d.at("rounds_without_best").get<int>();
  r.counters.stagnant = d.at("stagnant_rounds").get<int>();
  r.counters.repeated = d.at("repeated").get<int>();
  r.counters.build_error_rounds = d.at("build_error_rounds").get<int>();
  r.counters.precision_rounds = d.at("precision_rounds").get<int>();
  r.improved = d.at("improved").get<bool>();
  for (const auto& g : d.at("guards"))
    r.guards.push_back(
        {Parsed(kGuardNames, g, "guard"), Parsed(kActionNames, g, "decision"), g.at("reason").get<std::string>()});
  r.stop = d.at("stop").get<std::string>();
  r.stop_message = d.at("stop_message").get<std::string>();
  r.success = r.stop == kCertified;
  return r;
}

RunEvent DecodePayload(EventType type, const json& d) {
  switch (type) {
    case EventType::kRunStarted: {
      RunStartedEvent e;
      e.task_name = d.at("task_name").get<std::string>();
      e.task_origin = d.value("task_origin", "");
      e.task_artifact = d.at("task_artifact").get<std::string>();
      e.candidate = d.at("candidate").get<std::string>();
      e.config = RunConfig::FromJson(d.at("config"));
      e.kforge_version = d.value("kforge_version", "");
      e.kb_snapshot = d.value("kb_snapshot", "");
      e.events_version = d.value("events_version", 1);
      return e;
    }
    case EventType::kValidated: {
      ValidatedEvent e;
      e.scored = ScoredFrom(d);
      e.seed = d.value("seed", uint64_t{0});
      e.probes = d.value("probes", false);
      e.trials = d.value("trials", json());
      e.tensors = d.value("tensors", "");
      return e;
    }
    case EventType::kRepairRequested: {
      RepairRequestedEvent e;
      e.round = d.at("round").get<int>();
      e.attempt = d.at("attempt").get<int>();
      e.repairer = d.value("repairer", "");
      e.write = d.value("write", false);
      e.current = d.value("current", "");
      e.forensics = d.value("forensics", "");
      e.suggestion = d.value("suggestion", "");
      return e;
    }
    case EventType::kRepairProposed: {
      RepairProposedEvent e;
      e.round = d.at("round").get<int>();
      for (const auto& p : d.at("proposals"))
        e.proposals.push_back(
            {p.at("candidate").get<std::string>(), p.value("origin", ""), p.value("description", "")});
      e.skipped_seen = d.value("skipped_seen", 0);
      e.skipped = d.value("skipped", std::vector<std::string>{});
      e.kb_hits = d.value("kb_hits", std::vector<std::string>{});
      e.tool_calls = d.value("tool_calls", json::array());
      e.probes_requested = d.value("probes_requested", false);
      e.usage = Usage::FromJson(d.value("usage", json::object()));
      e.deterministic = d.value("deterministic", true);
      e.turn_error = d.value("turn_error", "");
      e.transcript = d.value("transcript", "");
      return e;
    }
    case EventType::kRoundClosed: {
      RoundClosedEvent e;
      e.round = d.at("round").get<int>();
      e.decision = DecisionFrom(d);
      for (const auto& u : d.value("kb_updates", json::array()))
        e.kb_updates.push_back({u.at("id").get<std::string>(), u.at("succeeded").get<bool>(),
                                u.at("integrity").get<bool>(), u.value("degenerated", false)});
      return e;
    }
    case EventType::kValidationTrace:
      return ValidationTraceEvent{d};
    case EventType::kClockRead:
      return ClockReadEvent{d.at("round").get<int>(), d.at("elapsed_s").get<int64_t>()};
    case EventType::kCancelled:
      return CancelledEvent{d.value("reason", ""), d.value("round", 0), d.value("attempt", 1)};
    case EventType::kResumed:
      return ResumedEvent{d.value("round", 0)};
    case EventType::kRunFinished: {
      RunFinishedEvent e{d.at("success").get<bool>(), d.at("reason").get<std::string>(), d.value("message", ""),
                         d.value("final_candidate", "")};
      e.environment = d.value("environment_error", e.reason == "environment");  // version 1 logs: by reason
      return e;
    }
    case EventType::kUserDecided:
      return UserDecidedEvent{d.at("round").get<int>(), Parsed(kDecisionNames, d, "decision"), d.value("text", "")};
    case EventType::kUnknown:
      break;
  }
  throw std::invalid_argument("unknown event type");
}

}  // namespace

std::string_view EventTypeName(EventType t) { return NameIn(kEventNames, t); }

EventType ParseEventType(std::string_view name) {
  EventType t = EventType::kUnknown;
  ParseIn(kEventNames, name, &t);
  return t;
}

std::string_view GuardKindName(GuardKind g) { return NameIn(kGuardNames, g); }
std::string_view UserDecisionName(UserDecision d) { return NameIn(kDecisionNames, d); }
std::string_view GuardActionName(GuardAction a) { return NameIn(kActionNames, a); }

EventType TypeOf(const RunEvent& e) {
  constexpr EventType kTypes[] = {EventType::kRunStarted,     EventType::kValidated,   EventType::kRepairRequested,
                                  EventType::kRepairProposed, EventType::kRoundClosed, EventType::kValidationTrace,
                                  EventType::kClockRead,      EventType::kCancelled,   EventType::kResumed,
                                  EventType::kRunFinished,    EventType::kUserDecided};
  static_assert(std::size(kTypes) == std::variant_size_v<RunEvent>);
  return kTypes[e.index()];
}

EncodedEvent Encode(const RunEvent& e) {
  return {TypeOf(e), LayerOf(e), std::visit([](const auto& v) { return Payload(v); }, e)};
}

std::optional<RunEvent> Decode(const Event& e) {
  const EventType type = ParseEventType(e.type);
  if (type == EventType::kUnknown) return std::nullopt;
  try {
    if (!e.data.is_object()) throw std::invalid_argument("the payload is not a JSON object");
    return DecodePayload(type, e.data);
  } catch (const std::exception& ex) {
    throw UsageError("event " + std::to_string(e.seq) + " (" + e.type + ") of the run log is malformed (" + ex.what() +
                     "); the log was damaged or edited by hand — start a new run");
  }
}

void CheckEventsVersion(const RunStartedEvent& e, const std::string& where) {
  if (e.events_version > kRunEventsVersion)
    throw UsageError("the run in " + where + " was written by a newer kforge (events version " +
                     std::to_string(e.events_version) + ", this kforge reads up to " +
                     std::to_string(kRunEventsVersion) + "); use that kforge or a newer one");
}

json DecisionJson(int round, const RoundDecision& r) {
  json d = {{"round", round}};
  if (!r.adopted.empty()) d["adopted"] = r.adopted;
  if (!r.new_best.empty()) d["new_best"] = r.new_best;
  if (r.rollback) d["rollback"] = true;
  if (r.new_attempt) d["new_attempt"] = true;
  if (r.extend > 0) d["extend"] = r.extend;
  d["rounds_without_best"] = r.counters.rounds_without_best;
  d["stagnant_rounds"] = r.counters.stagnant;
  d["repeated"] = r.counters.repeated;
  d["build_error_rounds"] = r.counters.build_error_rounds;
  d["precision_rounds"] = r.counters.precision_rounds;
  d["improved"] = r.improved;
  d["guards"] = json::array();
  for (const auto& g : r.guards)
    d["guards"].push_back(
        {{"guard", GuardKindName(g.guard)}, {"decision", GuardActionName(g.action)}, {"reason", g.reason}});
  d["stop"] = r.stop;
  d["stop_message"] = r.stop_message;
  return d;
}

}  // namespace kforge
