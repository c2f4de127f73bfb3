#include "service/service.h"

#include <fmt/format.h>

#include "agent/knowledge_base.h"
#include "agent/llm_config.h"
#include "agent/registry.h"
#include "core/cancel.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/names.h"
#include "engine/repair_loop.h"
#include "exec/machine.h"
#include "record/artifact_store.h"
#include "record/event_log.h"
#include "service/bundled.h"
#include "verify/static_checks.h"

namespace kforge {
namespace {

constexpr NameEntry<Outcome> kOutcomeNames[] = {
    {Outcome::kPassed, "passed"},
    {Outcome::kFailed, "failed"},
    {Outcome::kInterrupted, "interrupted"},
    {Outcome::kError, "error"},
};

RepairEnv MakeRepairEnv(Machine& machine, const CancellationToken& cancel, const ProgressFn& progress) {
  RepairEnv env;
  env.machine = &machine;
  env.cancel = &cancel;
  env.kb_dir = BundledKbDir(machine.config());
  env.progress = progress;
  return env;
}

RunResult ResultOf(const RepairRun& run) {
  RunResult r;
  r.dir = run.dir();
  r.state = run.state();
  std::string text, error;
  TryReadFile(run.dir() + "/summary.json", &text, &error);
  r.summary = nlohmann::json::parse(text, nullptr, false);
  if (r.summary.is_discarded()) r.summary = nlohmann::json::object();
  r.summary["run_dir"] = run.dir();
  return r;
}

std::string ReadCandidate(const std::string& path) {
  std::string source, error;
  if (!TryReadFile(path, &source, &error)) throw UsageError("cannot read candidate " + path + ": " + error);
  return source;
}

}  // namespace

std::string_view OutcomeName(Outcome o) { return NameIn(kOutcomeNames, o); }

nlohmann::json VerifyResult::ToJson() const {
  nlohmann::json j = verdict.ToJson();
  if (forensics) j["forensics"] = forensics->ToJson();
  return j;
}

nlohmann::json CheckResult::ToJson() const {
  nlohmann::json j = {
      {"clean", findings.empty()}, {"milliseconds", milliseconds}, {"findings", nlohmann::json::array()}};
  for (const auto& f : findings) j["findings"].push_back({{"check", f.check}, {"detail", f.detail}, {"line", f.line}});
  return j;
}

Outcome RunResult::outcome() const {
  if (state.cancelled) return Outcome::kInterrupted;
  if (!state.finished || state.finish_reason == "environment") return Outcome::kError;
  return state.success ? Outcome::kPassed : Outcome::kFailed;
}

nlohmann::json RunStatus::ToJson() const {
  const RunState& s = state;
  nlohmann::json j = {
      {"task", s.task_name},         {"finished", s.finished}, {"success", s.success},
      {"reason", s.finish_reason},   {"round", s.round},       {"attempt", s.attempt},
      {"validations", s.iterations}, {"turns", s.turns},       {"error_history", nlohmann::json::array()}};
  for (FailureClass f : s.error_history) j["error_history"].push_back(FailureClassName(f));
  if (s.current)
    j["current"] = {{"candidate", s.current->candidate},
                    {"level", LevelName(s.current->level)},
                    {"failure_class", FailureClassName(s.current->failure)},
                    {"score", s.current->score}};
  if (s.best) j["best"] = {{"candidate", s.best->candidate}, {"score", s.best->score}};
  j["usage"] = s.usage.ToJson();
  j["cost_usd"] = CostOf(s.usage, s.config.repairer);
  return j;
}

nlohmann::json DeviceReport::ToJson() const {
  nlohmann::json j = device.info;
  j["ceilings"] = ceilings.present ? ceilings.raw : nlohmann::json(nullptr);
  return j;
}

Task Service::ResolveTask(const std::string& name_or_path) const {
  return kforge::ResolveTask(name_or_path, machine_.config());
}

VerifyResult Service::Verify(const VerifyRequest& request, const CancellationToken& cancel) {
  VerifyResult r;
  r.task = ResolveTask(request.task);
  if (request.options.sanitize && request.options.backend != BackendKind::kCuda)
    throw UsageError("--sanitize needs --backend cuda (compute-sanitizer checks GPU kernels)");
  VerifyOptions opts = request.options;
  opts.cancel = &cancel;
  opts.diagnose = opts.diagnose || request.forensics;
  Verifier verifier(r.task, machine_);
  r.verdict = verifier.Verify(request.candidate_path, opts);
  if (request.forensics && !r.verdict.passed) r.forensics = Diagnose(r.task, r.verdict);
  return r;
}

CheckResult Service::Check(const CheckRequest& request) {
  StaticCheckOptions opts;
  opts.backend = request.backend;
  if (!request.task.empty()) opts.allowed_libraries = ResolveTask(request.task).allowed_libraries;
  CheckResult r;
  const int64_t start = machine_.env().clock().MonotonicNanos();
  r.findings = RunStaticChecks(request.source, opts);
  r.milliseconds = (machine_.env().clock().MonotonicNanos() - start) / 1e6;
  return r;
}

RunResult Service::Repair(const RepairRequest& request, const CancellationToken& cancel, const ProgressFn& progress) {
  Task task = ResolveTask(request.task);
  std::string task_text, candidate, error;
  if (!TryReadFile(task.origin, &task_text, &error)) throw UsageError("cannot read task " + task.origin + ": " + error);
  if (!request.candidate_path.empty()) {
    candidate = ReadCandidate(request.candidate_path);
    if (candidate.empty())
      throw UsageError("the candidate " + request.candidate_path +
                       " is empty; leave it out to have the repairer write one");
  }
  RunConfig config = request.config;
  if (config.backend == BackendKind::kCuda) machine_.Device();  // no GPU: refuse before a run directory exists
  if (config.repairer.kind == RepairerKind::kLlm || config.repairer.kind == RepairerKind::kAuto)
    ResolveModelEndpoint(&config.repairer, machine_.config());  // recorded resolved (never the key)
  BuiltinRepairers().Make(config.repairer, machine_.env());     // a missing command or script: refuse now
  config.seed = request.seed ? *request.seed : machine_.env().entropy().FreshSeed();
  std::string out = request.out;
  if (out.empty()) out = fmt::format("kforge-runs/{}-{}", task.name, machine_.env().clock().WallMicros() / 1000000);
  auto run =
      RepairRun::Create(out, task_text, task.origin, candidate, config, MakeRepairEnv(machine_, cancel, progress));
  run->Run();
  return ResultOf(*run);
}

RunResult Service::Resume(const std::string& run_dir, const CancellationToken& cancel, const ProgressFn& progress) {
  auto run = RepairRun::Open(run_dir, MakeRepairEnv(machine_, cancel, progress));
  run->Run();
  return ResultOf(*run);
}

RunStatus Service::Status(const std::string& run_dir) const {
  auto log = EventLog::Open(run_dir + "/events.db", machine_.env().clock());
  return RunStatus{run_dir, FoldEvents(log->ReadAll())};
}

std::vector<Event> Service::Log(const std::string& run_dir) const {
  return EventLog::Open(run_dir + "/events.db", machine_.env().clock())->ReadAll();
}

DecisionReplay Service::CheckDecisions(const std::string& run_dir) const {
  return ReplayDecisions(Log(run_dir), ArtifactStore(run_dir + "/artifacts"));
}

BenchReport Service::Bench(const BenchRequest& request, const CancellationToken& cancel) {
  Task task = ResolveTask(request.task);
  BenchOptions opts = request.options;
  opts.cancel = &cancel;
  if (opts.baseline_path.empty() && opts.baselines_dir.empty())
    opts.baselines_dir = BundledBaselinesDir(machine_.config());
  return RunBench(machine_, task, request.candidate_path, opts);
}

DeviceReport Service::Device(bool calibrate) {
  DeviceReport r;
  r.device = machine_.Device();  // throws EnvironmentError without a GPU
  const std::string& cache = machine_.config().cache_dir;
  r.ceilings = calibrate ? CalibrateCeilings(machine_, r.device, cache) : LoadCeilings(r.device, cache);
  return r;
}

}  // namespace kforge
