#include "engine/recording.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/text.h"
#include "engine/repair_loop.h"
#include "record/run_files.h"

namespace kforge {
namespace {

/// The JSON a dotted FIELD path names inside `root`, created when the last step is new;
/// null when a step does not exist.
nlohmann::json* Locate(nlohmann::json& root, const std::string& field) {
  nlohmann::json* at = &root;
  size_t start = 0;
  while (start <= field.size()) {
    const size_t dot = field.find('.', start);
    const std::string step = field.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (step.empty()) return nullptr;
    if (at->is_array()) {
      if (step.find_first_not_of("0123456789") != std::string::npos || step.size() > 6) return nullptr;
      const size_t i = std::stoul(step);
      if (i >= at->size()) return nullptr;
      at = &(*at)[i];
    } else if (at->is_object() && at->contains(step)) {
      at = &(*at)[step];
    } else {
      return nullptr;
    }
    if (dot == std::string::npos) return at;
    start = dot + 1;
  }
  return nullptr;
}

std::string ShortHash(const std::string& h) { return h.empty() ? "(none)" : h.substr(0, 12); }

}  // namespace

Recording Recording::Open(const std::string& run_dir, Clock& clock) {
  if (!FileExists(RunFiles(run_dir).events()))
    throw UsageError(run_dir + " holds no run (no events.db); give the directory a repair or generate run wrote");
  Recording r(run_dir);
  r.lock_ = TryLockFile(run_dir + "/" + kRunLockFile, LockMode::kShared);
  if (!r.lock_.valid())
    throw UsageError("the run in " + run_dir +
                     " is still being written by a running kforge; replay it after that run finishes or is stopped");
  std::unique_ptr<EventLog> log = EventLog::Open(RunFiles(run_dir).events(), clock);  // refuses damaged and newer logs
  bool started = false;
  for (Event& e : log->ReadAll()) {
    std::optional<RunEvent> typed = Decode(e);
    if (!typed) continue;
    if (const auto* s = std::get_if<RunStartedEvent>(&*typed)) {
      CheckEventsVersion(*s, run_dir);
      r.started_ = *s;
      started = true;
    }
    r.events_.push_back(std::move(e));
  }
  if (!started)
    throw UsageError("the run in " + run_dir + " has no run_started event (it was interrupted while being created)");
  r.original_ = r.events_;
  return r;
}

bool Recording::finished() const {
  for (const Event& e : events_)
    if (e.type == EventTypeName(EventType::kRunFinished)) return true;
  return false;
}

void Recording::Set(int64_t seq, const std::string& field, const nlohmann::json& value) {
  auto it = std::find_if(events_.begin(), events_.end(), [&](const Event& e) { return e.seq == seq; });
  if (it == events_.end())
    throw UsageError(fmt::format("the run in {} has no event {}; 'kforge log {}' lists them", dir_, seq, dir_));
  const EventType type = ParseEventType(it->type);
  const bool input = type == EventType::kValidated || type == EventType::kRepairProposed ||
                     type == EventType::kClockRead || type == EventType::kUserDecided;
  if (!input)
    throw UsageError(fmt::format(
        "event {} ({}) is derived by the engine, not taken from the world; set one of the values it was derived from "
        "(a validated event's verdict, a repair_proposed event, a clock_read or a user_decided event)",
        seq, it->type));
  const std::string& path = field;
  nlohmann::json edited = it->data;
  nlohmann::json* at = Locate(edited, path);
  if (at == nullptr) {
    std::string fields;
    for (const auto& [k, v] : it->data.items()) fields += (fields.empty() ? "" : ", ") + k;
    throw UsageError(fmt::format("event {} ({}) has no field '{}'; its fields: {}", seq, it->type,
                                 UntrustedText(CutText(field, 200)), fields));
  }
  *at = value;
  if (type == EventType::kValidated && path == "verdict") edited["forensics"] = "";  // diagnosed afresh
  Event candidate = *it;
  candidate.data = std::move(edited);
  Decode(candidate);  // throws UsageError naming the event when the edit made it malformed
  *it = std::move(candidate);
}

std::string ArtifactReader::PathOf(const std::string& hash) const {
  for (const ArtifactStore* s : stores_)
    if (s->Has(hash)) return s->PathOf(hash);
  throw ReplayGap("the recording names the artifact " + ShortHash(hash) + ", which none of its stores holds");
}

std::string ArtifactReader::Get(const std::string& hash) const {
  for (const ArtifactStore* s : stores_)
    if (s->Has(hash)) return s->Get(hash);
  throw ReplayGap("the recording names the artifact " + ShortHash(hash) + ", which none of its stores holds");
}

RunInputs InputsOf(const std::vector<Event>& events) {
  RunInputs in;
  std::string current;
  int round = 0;
  for (const Event& e : events) {
    std::optional<RunEvent> typed = Decode(e);
    if (!typed) continue;
    if (const auto* v = std::get_if<ValidatedEvent>(&*typed)) {
      in.validations.push_back(
          {e.seq, v->scored.candidate, v->scored.verdict, v->scored.forensics, v->seed, v->tensors});
    } else if (const auto* r = std::get_if<RepairRequestedEvent>(&*typed)) {
      current = r->current;
      round = r->round;
    } else if (const auto* p = std::get_if<RepairProposedEvent>(&*typed)) {
      in.turns.push_back({e.seq, round, current, *p});
    } else if (const auto* c = std::get_if<ClockReadEvent>(&*typed)) {
      in.clocks.push_back({e.seq, c->round, c->elapsed_s});
    } else if (const auto* u = std::get_if<UserDecidedEvent>(&*typed)) {
      in.users.push_back({e.seq, *u});
    } else if (const auto* f = std::get_if<RunFinishedEvent>(&*typed); f && f->environment) {
      in.environment_error = f->message;
    }
  }
  return in;
}

void PinnedInputs::EndOfRecording(const std::string& what) const {
  if (inputs_.environment_error) throw EnvironmentError(*inputs_.environment_error);
  throw ReplayGap("the recording ends before " + what);
}

std::optional<PinnedValidation> PinnedInputs::Validation(const ValidationQuestion& q) {
  if (live_.count(Layer::kTensor)) return std::nullopt;
  if (q.iteration >= static_cast<int>(inputs_.validations.size()))
    EndOfRecording(fmt::format("validation {} (candidate {})", q.iteration, ShortHash(q.candidate)));
  const RunInputs::Validation& v = inputs_.validations[q.iteration];
  if (v.candidate != q.candidate || v.seed != q.seed)
    throw ReplayGap(fmt::format(
        "validation {} is of candidate {} with seed {}, but the recording validated {} with seed {} (event {}); "
        "re-execute the tensor layer (--live tensor) to validate it",
        q.iteration, ShortHash(q.candidate), q.seed, ShortHash(v.candidate), v.seed, v.seq));
  nlohmann::json j = nlohmann::json::parse(artifacts_.Get(v.verdict), nullptr, false);
  if (!j.is_object()) throw ReplayGap(fmt::format("the verdict of event {} is not a verdict document", v.seq));
  PinnedValidation out{Verdict::FromJson(j), nullptr, "", ""};
  if (!v.forensics.empty()) out.forensics = nlohmann::json::parse(artifacts_.Get(v.forensics), nullptr, false);
  if (!v.tensors.empty()) {
    out.tensors = v.tensors;
    out.tensors_path = artifacts_.PathOf(v.tensors);
  }
  return out;
}

std::optional<PinnedTurn> PinnedInputs::Turn(const TurnQuestion& q) {
  if (live_.count(Layer::kToken)) return std::nullopt;
  if (q.turn >= static_cast<int>(inputs_.turns.size()))
    EndOfRecording(fmt::format("turn {} (round {})", q.turn, q.round));
  const RunInputs::Turn& t = inputs_.turns[q.turn];
  if (t.proposed.deterministic) return std::nullopt;  // recipes are control: the engine re-runs them
  if (t.round != q.round || t.current != q.current)
    throw ReplayGap(fmt::format(
        "turn {} asks about candidate {} in round {}, but the recorded turn (event {}) answered about {} in round {}; "
        "re-execute the token layer (--live token) to ask the repairer",
        q.turn, ShortHash(q.current), q.round, t.seq, ShortHash(t.current), t.round));
  PinnedTurn out;
  for (const ProposalRecord& p : t.proposed.proposals)
    out.result.proposals.push_back({artifacts_.Get(p.candidate), p.origin, p.description});
  for (const std::string& h : t.proposed.skipped) out.result.proposals.push_back({artifacts_.Get(h), "", ""});
  out.result.usage = t.proposed.usage;
  out.result.failure = t.proposed.turn_error;
  if (!t.proposed.transcript.empty())
    out.result.transcript = nlohmann::json::parse(artifacts_.Get(t.proposed.transcript), nullptr, false);
  out.tool_calls = t.proposed.tool_calls;
  return out;
}

std::optional<int64_t> PinnedInputs::ElapsedSeconds(int round) {
  if (live_.count(Layer::kTrace)) return std::nullopt;
  for (const RunInputs::ClockRead& c : inputs_.clocks)
    if (c.round == round) return c.elapsed_s;
  EndOfRecording(fmt::format("the clock read that closes round {}", round));
}

UserDecidedEvent PinnedInputs::UserDecision(int round) {
  for (const RunInputs::UserDecision& u : inputs_.users)
    if (u.decided.round == round) return u.decided;
  EndOfRecording(fmt::format("the user's decision after round {}", round));
}

}  // namespace kforge
