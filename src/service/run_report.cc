#include "service/run_report.h"

#include <map>

#include "agent/registry.h"
#include "core/backend_kind.h"
#include "core/env.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "engine/events.h"
#include "engine/run_state.h"
#include "record/artifact_store.h"
#include "record/run_files.h"
#include "service/service.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

constexpr size_t kMaxDiffBytes = 200 << 10;  // per proposal, in the page

/// `diff -u` of two texts (diffutils is part of every Debian system), "" when identical.
std::string UnifiedDiff(Env& env, const std::string& before, const std::string& after) {
  if (before == after) return "";
  TempDir tmp("kforge-report", env.config().temp_dir);
  WriteFileAtomic(tmp.path() + "/a", before, Sync::kNo);
  WriteFileAtomic(tmp.path() + "/b", after, Sync::kNo);
  SpawnOptions opts;
  opts.argv = {"diff", "-u", "--label", "previous", "--label", "proposed", tmp.path() + "/a", tmp.path() + "/b"};
  opts.output_path = tmp.path() + "/diff";
  ProcessRunner::Result r = env.processes().Run(opts, 10000);
  std::string diff, error;
  if (r.status.kind != ExitStatus::Kind::kExited || r.status.code > 1 || !TryReadFile(opts.output_path, &diff, &error))
    return "(no diff: " + r.status.Describe() + ")";
  if (diff.size() > kMaxDiffBytes) diff = diff.substr(0, kMaxDiffBytes) + "\n... (diff cut at 200 KiB)\n";
  return diff;
}

}  // namespace

nlohmann::json RunReportData(Service& service, const std::string& run_dir) {
  const std::vector<Event> events = service.Log(run_dir);
  const RunState state = FoldEvents(events);  // the events just read: no second pass over the log
  ArtifactStore store(RunFiles(run_dir).artifacts());
  auto text_of = [&](const std::string& hash) { return store.Has(hash) ? store.Get(hash) : std::string(); };
  auto json_of = [&](const std::string& hash) {
    nlohmann::json j = nlohmann::json::parse(text_of(hash), nullptr, false);
    return j.is_discarded() ? nlohmann::json() : j;
  };
  std::map<int, nlohmann::json> rounds;
  auto round = [&](int r) -> nlohmann::json& {
    nlohmann::json& j = rounds[r];
    if (j.is_null())
      j = {{"round", r}, {"proposals", nlohmann::json::array()}, {"validations", nlohmann::json::array()}};
    return j;
  };
  std::string current;  // the candidate the next proposals derive from
  Env& env = service.env();
  for (const Event& e : events) {
    std::optional<RunEvent> typed = Decode(e);
    if (!typed) continue;
    if (const auto* s = std::get_if<RunStartedEvent>(&*typed)) {
      current = s->candidate;
    } else if (const auto* r = std::get_if<RepairRequestedEvent>(&*typed)) {
      current = r->current;
      round(r->round)["attempt"] = r->attempt;
      round(r->round)["requested"] = {
          {"repairer", r->repairer}, {"current", r->current}, {"suggestion", r->suggestion}};
    } else if (const auto* p = std::get_if<RepairProposedEvent>(&*typed)) {
      nlohmann::json& j = round(p->round);
      const std::string before = text_of(current);
      for (const auto& prop : p->proposals)
        j["proposals"].push_back({{"candidate", prop.candidate},
                                  {"origin", prop.origin},
                                  {"description", prop.description},
                                  {"diff", UnifiedDiff(env, before, text_of(prop.candidate))}});
      if (!p->turn_error.empty()) j["turn_error"] = p->turn_error;
      j["kb_hits"] = p->kb_hits;
      j["skipped_seen"] = p->skipped_seen;
    } else if (const auto* v = std::get_if<ValidatedEvent>(&*typed)) {
      const Scored& s = v->scored;
      round(s.round)["validations"].push_back({{"candidate", s.candidate},
                                               {"iteration", s.iteration},
                                               {"passed", s.passed},
                                               {"level", LevelName(s.level)},
                                               {"failure", FailureClassName(s.failure)},
                                               {"score", s.score},
                                               {"message", s.message},
                                               {"origin", s.origin}});
    } else if (const auto* c = std::get_if<RoundClosedEvent>(&*typed)) {
      round(c->round)["decision"] = DecisionJson(c->round, c->decision);
      if (!c->decision.adopted.empty()) current = c->decision.adopted;
    }
  }
  nlohmann::json timeline = nlohmann::json::array();
  for (auto& [r, j] : rounds) timeline.push_back(std::move(j));

  nlohmann::json data = {{"kind", "run"},
                         {"title", "kforge run: " + state.task_name},
                         {"generator", "kforge " + std::string(KforgeVersion())},
                         {"timeline", timeline},
                         {"bench", nullptr},
                         {"forensics", nullptr},
                         {"verdict", nullptr}};
  data["summary"] = {{"task", state.task_name},
                     {"run_dir", run_dir},
                     {"success", state.success},
                     {"finished", state.finished},
                     {"cancelled", state.cancelled},
                     {"finish_reason", state.finish_reason},
                     {"rounds", state.round},
                     {"attempts", state.attempt},
                     {"validations", state.iterations},
                     {"backend", BackendName(state.config.backend)},
                     {"repairer", RepairerKindName(state.config.repairer.kind)}};
  if (state.best) {
    data["verdict"] = json_of(state.best->verdict);
    data["verdict_label"] = state.success ? "final candidate (certified)" : "best candidate (not certified)";
    if (!state.best->forensics.empty()) data["forensics"] = json_of(state.best->forensics);
    // The best candidate passed nothing yet: the forensics of the latest failing one say more.
    if (data["forensics"].is_null() && state.current && !state.current->forensics.empty())
      data["forensics"] = json_of(state.current->forensics);
  }
  return data;
}

nlohmann::json VerdictReportData(const nlohmann::json& verdict) {
  const nlohmann::json task = verdict.value("task", nlohmann::json::object());
  const std::string name = task.is_object() ? task.value("name", "") : "";
  return {{"kind", "verdict"},
          {"title", "kforge verdict: " + name},
          {"generator", "kforge " + std::string(KforgeVersion())},
          {"summary", {{"task", name}, {"passed", verdict.value("passed", false)}}},
          {"verdict", verdict},
          {"verdict_label", "verification"},
          {"forensics", verdict.contains("forensics") ? verdict["forensics"] : nlohmann::json()},
          {"timeline", nlohmann::json::array()},
          {"bench", nullptr}};
}

}  // namespace kforge
