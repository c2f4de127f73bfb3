// Service calls over recorded runs: replay, diff, bisect, pack and unpack.
#include <fmt/format.h>

#include <map>

#include "core/cancel.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/text.h"
#include "engine/recording.h"
#include "exec/machine.h"
#include "record/replay_env.h"
#include "record/run_files.h"
#include "service/repair_env.h"
#include "service/service.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

/// "SEQ.FIELD=VALUE" applied to `rec`; a VALUE of @FILE is stored in `overlay` and named by
/// its hash, other values are JSON when they parse as JSON, else text.
void ApplySet(Recording& rec, const std::string& assignment, ArtifactStore& overlay) {
  const size_t eq = assignment.find('=');
  const size_t dot = assignment.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 ||
      assignment.find_first_not_of("0123456789") != dot)
    throw UsageError(
        "--set wants EVENT.FIELD=VALUE with EVENT an event number from 'kforge log' (e.g. "
        "--set 9.elapsed_s=7200 or --set 5.verdict=@verdict.json), not '" +
        UntrustedText(CutText(assignment, 120)) + "'");
  if (dot > 12) throw UsageError("--set: no event has the number " + assignment.substr(0, dot));
  const int64_t seq = std::stoll(assignment.substr(0, dot));
  const std::string field = assignment.substr(dot + 1, eq - dot - 1);
  const std::string text = assignment.substr(eq + 1);
  nlohmann::json value;
  if (!text.empty() && text[0] == '@') {
    std::string bytes, error;
    if (!TryReadFile(text.substr(1), &bytes, &error))
      throw UsageError("--set " + std::to_string(seq) + "." + field + ": cannot read " + text.substr(1) + ": " + error);
    value = overlay.Put(bytes);
  } else {
    value = nlohmann::json::parse(text, nullptr, false);
    if (value.is_discarded()) value = text;
  }
  rec.Set(seq, field, value);
}

void RefuseExistingRun(const std::string& dir) {
  if (FileExists(RunFiles(dir).events()))
    throw UsageError(dir + " already holds a run; choose another --out for the replay");
}

void RequireSameTask(const Recording& a, const Recording& b) {
  if (a.started().task_artifact != b.started().task_artifact)
    throw UsageError("the runs are of different tasks (" + a.dir() + ": " + a.started().task_name + ", " + b.dir() +
                     ": " + b.started().task_name + "); compare runs of one task");
}

}  // namespace

nlohmann::json ReplayReport::ToJson() const {
  nlohmann::json j = result.ToJson();
  j["refused_live_calls"] = {{"processes", refused_processes}, {"http", refused_http}};
  return j;
}

ReplayReport Service::Replay(const ReplayRequest& request, const CancellationToken& cancel,
                             const ProgressFn& progress) {
  std::optional<TempDir> unpacked;
  std::string run_dir = request.run;
  if (IsPack(request.run)) {  // checked in full before anything is replayed
    unpacked.emplace("kforge-pack-", machine_.config().temp_dir);
    run_dir = unpacked->path() + "/run";
    Unpack(request.run, run_dir);
  }
  Recording rec = Recording::Open(run_dir, machine_.env().clock());
  const std::string out = OutDir(request.out, rec.started().task_name + "-replay");
  RefuseExistingRun(out);
  ArtifactStore overlay(RunFiles(out).artifacts());
  for (const std::string& s : request.sets) ApplySet(rec, s, overlay);
  ReplayEnvironment renv(machine_.env(), request.live, out + "/kb-state");
  Machine machine(renv.env());
  ReplayOptions options{request.live, out, {&overlay}};
  ReplayReport report;
  report.result = kforge::Replay(rec, InputsOf(rec.events()), options, MakeRepairEnv(machine, cancel, progress));
  report.refused_processes = renv.refused_processes();
  report.refused_http = renv.refused_http();
  return report;
}

RunComparison Service::Diff(const std::string& run_a, const std::string& run_b) const {
  const Recording a = Recording::Open(run_a, machine_.env().clock());
  const Recording b = Recording::Open(run_b, machine_.env().clock());
  RequireSameTask(a, b);
  return CompareRuns(a.events(), ArtifactReader({&a.artifacts()}), b.events(), ArtifactReader({&b.artifacts()}));
}

BisectResult Service::Bisect(const std::string& good, const std::string& bad, const std::string& out,
                             const CancellationToken& cancel, const ProgressFn& progress) {
  const Recording g = Recording::Open(good, machine_.env().clock());
  const Recording b = Recording::Open(bad, machine_.env().clock());
  RequireSameTask(g, b);
  const std::string base = OutDir(out, g.started().task_name + "-bisect");
  MakeDirs(base);
  int n = 0;
  auto outcome_of = [&](const RunInputs& mix) -> std::string {
    cancel.ThrowIfCancelled();
    const std::string dir = fmt::format("{}/replay-{}", base, n++);
    RefuseExistingRun(dir);
    ReplayEnvironment renv(machine_.env(), {}, dir + "/kb-state");
    Machine machine(renv.env());
    ReplayOptions options{{}, dir, {&b.artifacts()}};
    std::string outcome;
    try {
      ReplayResult r = kforge::Replay(g, mix, options, MakeRepairEnv(machine, cancel, nullptr));
      if (!r.gap.empty())
        outcome = "unresolved: " + r.gap;
      else if (!r.state.finished)
        outcome = "unresolved: the replay did not finish";
      else
        outcome = r.state.success ? "certified" : "not certified (" + r.state.finish_reason + ")";
    } catch (const CancelledError&) {
      throw;
    } catch (const Error& e) {
      outcome = std::string("unresolved: ") + e.what();
    }
    if (progress) progress(fmt::format("  replay {}: {}", n - 1, outcome));
    return outcome;
  };
  return kforge::Bisect(InputsOf(g.events()), InputsOf(b.events()), outcome_of);
}

nlohmann::json AgreementReport::ToJson() const {
  nlohmann::json j = {{"tasks", nlohmann::json::array()}};
  for (const auto& t : tasks) j["tasks"].push_back(t.ToJson());
  if (comparison) {
    j["tasks_vs"] = nlohmann::json::array();
    for (const auto& t : tasks_vs) j["tasks_vs"].push_back(t.ToJson());
    j["pass_rate_comparison"] = comparison->ToJson();
  }
  return j;
}

AgreementReport Service::Agree(const std::vector<std::string>& runs, const std::vector<std::string>& vs) const {
  auto read = [&](const std::vector<std::string>& dirs) {
    std::vector<RunActions> out;
    for (const std::string& d : dirs) {
      const Recording rec = Recording::Open(d, machine_.env().clock());
      out.push_back(ActionsOf(d, rec.events()));
    }
    return out;
  };
  auto per_task = [](const std::vector<RunActions>& all) {
    std::map<std::string, std::vector<RunActions>> by_task;
    for (const auto& r : all) by_task[r.task].push_back(r);
    std::vector<TaskAgreement> out;
    for (const auto& [task, rs] : by_task) out.push_back(AgreementOf(rs));
    return out;
  };
  AgreementReport report;
  const std::vector<RunActions> a = read(runs);
  report.tasks = per_task(a);
  if (!vs.empty()) {
    const std::vector<RunActions> b = read(vs);
    report.tasks_vs = per_task(b);
    report.comparison = ComparePassRates(a, b);
    if (report.comparison->tasks == 0)
      throw UsageError("the runs given with --vs share no task with the others; compare runs of the same tasks");
  }
  return report;
}

PackSummary Service::Pack(const std::string& run_dir, const std::string& pack_path) const {
  const Recording rec = Recording::Open(run_dir, machine_.env().clock());  // refuses a run being written
  nlohmann::json tools = nlohmann::json::array();
  for (const Event& e : rec.events())
    if (ParseEventType(e.type) == EventType::kValidationTrace) {
      nlohmann::json t = e.data.value("trace", nlohmann::json::object()).value("tools", nlohmann::json());
      if (!t.is_null() && std::find(tools.begin(), tools.end(), t) == tools.end()) tools.push_back(t);
    }
  nlohmann::json about = {{"packed_by", KforgeVersion()},    {"recorded_by", rec.started().kforge_version},
                          {"task", rec.started().task_name}, {"events", rec.events().size()},
                          {"finished", rec.finished()},      {"tools", tools}};
  return WritePack(run_dir, pack_path, machine_.env().clock(), about);
}

PackSummary Service::Unpack(const std::string& pack_path, const std::string& out_dir) const {
  PackSummary s = kforge::Unpack(pack_path, out_dir);
  Recording::Open(out_dir, machine_.env().clock());  // the log inside reads back (not damaged, not newer)
  return s;
}

}  // namespace kforge
