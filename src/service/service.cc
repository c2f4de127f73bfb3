#include "service/service.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "agent/knowledge_base.h"
#include "agent/llm_config.h"
#include "agent/registry.h"
#include "agent/task_writer.h"
#include "core/cancel.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/names.h"
#include "engine/repair_loop.h"
#include "engine/turn_context.h"
#include "exec/machine.h"
#include "record/artifact_store.h"
#include "record/event_log.h"
#include "record/run_files.h"
#include "service/bundled.h"
#include "service/fault_injection.h"
#include "service/repair_env.h"
#include "verify/kernelbench/task.h"
#include "verify/kernelbench/verifier.h"
#include "verify/kernelbench/warm_workers.h"
#include "verify/reference.h"
#include "verify/static_checks.h"
#include "verify/task_verifier.h"

namespace kforge {
namespace {

constexpr NameEntry<Outcome> kOutcomeNames[] = {
    {Outcome::kPassed, "passed"},
    {Outcome::kFailed, "failed"},
    {Outcome::kInterrupted, "interrupted"},
    {Outcome::kError, "error"},
};

RunResult ResultOf(const RepairRun& run) {
  RunResult r;
  r.dir = run.dir();
  r.state = run.state();
  r.summary = run.summary().is_object() ? run.summary() : nlohmann::json::object();
  r.summary["run_dir"] = run.dir();
  return r;
}

std::string TaskText(const Task& task) {
  std::string text, error;
  if (!TryReadFile(task.origin, &text, &error)) throw UsageError("cannot read task " + task.origin + ": " + error);
  return text;
}

}  // namespace

Service::Service(Machine& machine) : machine_(machine) {}
Service::Service(Env& env) : owned_(std::make_unique<Machine>(env)), machine_(*owned_) {}
Service::~Service() = default;

void Service::KeepWarmWorkers(int per_spec) { warm_workers_ = std::make_unique<WarmWorkers>(machine_, per_spec); }

void Service::RefillWarmWorkers() {
  if (warm_workers_) warm_workers_->Refill();
}
Env& Service::env() const { return machine_.env(); }
const Config& Service::config() const { return machine_.config(); }

std::string ReadCandidate(const std::string& path, const char* what) {
  std::string source, error;
  if (!TryReadFile(path, &source, &error))
    throw UsageError(std::string("cannot read ") + what + " " + path + ": " + error);
  return source;
}

RepairEnv MakeRepairEnv(Machine& machine, const CancellationToken& cancel, const ProgressFn& progress,
                        const BetweenRoundsFn& between_rounds) {
  RepairEnv env;
  env.between_rounds = between_rounds;
  env.machine = &machine;
  env.cancel = &cancel;
  env.kb_dir = BundledKbDir(machine.config());
  env.progress = progress;
  env.after_append = FaultInjectorFor(machine.config());
  return env;
}

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
  if (!state.finished || state.environment_error) return Outcome::kError;
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
  if (IsKernelBenchFile(request.task)) {
    if (request.options.sanitize || request.options.probes || request.options.force_distribution)
      throw UsageError("--sanitize, --probes and --dist apply to native tasks, not to KernelBench files");
    VerifyOptions opts = request.options;
    if (!opts.seed) opts.seed = machine_.env().entropy().FreshSeed();
    opts.cancel = &cancel;
    KernelBenchOptions kb = KernelBenchOptionsFrom(opts);
    kb.warm = warm_workers_.get();
    r.verdict = VerifyKernelBench(machine_, request.task, request.candidate_path, kb);
    return r;
  }
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

StartedRun::StartedRun(std::unique_ptr<RepairRun> run) : run_(std::move(run)) {}
StartedRun::StartedRun(StartedRun&&) noexcept = default;
StartedRun::~StartedRun() = default;
const std::string& StartedRun::dir() const { return run_->dir(); }
RunResult StartedRun::Drive() {
  run_->Run();
  return ResultOf(*run_);
}

bool Service::HasModelEndpoint(RepairerSpec spec) const {
  ResolveModelEndpoint(&spec, machine_.config());
  return spec.has_model();
}

RunResult Service::Repair(const RepairRequest& request, const CancellationToken& cancel, const ProgressFn& progress,
                          const BetweenRoundsFn& between_rounds) {
  return StartRepair(request, cancel, progress, between_rounds).Drive();
}

StartedRun Service::StartRepair(const RepairRequest& request, const CancellationToken& cancel,
                                const ProgressFn& progress, const BetweenRoundsFn& between_rounds) {
  RunConfig config = request.config;
  Task task;
  std::string task_text;
  if (IsKernelBenchFile(request.task)) {  // a KernelBench reference: candidates are ModelNew files
    task_text = ReadCandidate(request.task, "KernelBench reference");
    task = KernelBenchTask(task_text, request.task);
    config.task_format = TaskFormat::kKernelBench;
    if (!request.candidate_path.empty() && !IsKernelBenchFile(request.candidate_path))
      throw UsageError("the candidate for the KernelBench reference " + request.task +
                       " must be a ModelNew .py file, not " + request.candidate_path);
  } else {
    task = ResolveTask(request.task);
    task_text = TaskText(task);
  }
  std::string candidate;
  if (!request.candidate_path.empty()) {
    candidate = ReadCandidate(request.candidate_path);
    if (candidate.empty())
      throw UsageError("the candidate " + request.candidate_path +
                       " is empty; leave it out to have the repairer write one");
  }
  return CreateRun(task_text, task.origin, candidate, config, request.seed, OutDir(request.out, task.name), cancel,
                   progress, between_rounds);
}

std::string Service::OutDir(const std::string& requested, const std::string& task_name) const {
  if (!requested.empty()) return requested;
  // TASK-<seconds>, then -2, -3, ...: the folder is made here (mkdir fails on one that
  // exists), so two runs started in the same second, in one process or two, never share it.
  MakeDirs("kforge-runs");
  const std::string base = fmt::format("kforge-runs/{}-{}", task_name, machine_.env().clock().WallMicros() / 1000000);
  for (int n = 1;; ++n) {
    std::string dir = n == 1 ? base : fmt::format("{}-{}", base, n);
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST) throw EnvironmentError("cannot create the run directory " + dir + ": " + std::strerror(errno));
  }
}

StartedRun Service::CreateRun(const std::string& task_text, const std::string& task_origin,
                              const std::string& candidate, RunConfig config, std::optional<uint64_t> seed,
                              const std::string& out, const CancellationToken& cancel, const ProgressFn& progress,
                              const BetweenRoundsFn& between_rounds) {
  if (config.backend == BackendKind::kCuda) machine_.Device();  // no GPU: refuse before a run directory exists
  if (config.repairer.kind == RepairerKind::kLlm || config.repairer.kind == RepairerKind::kAuto)
    ResolveModelEndpoint(&config.repairer, machine_.config());  // recorded resolved (never the key)
  config.seed = seed ? *seed : machine_.env().entropy().FreshSeed();
  // Create validates the task, the reference and the repairer before it creates anything.
  return StartedRun(RepairRun::Create(out, task_text, task_origin, candidate, config,
                                      MakeRepairEnv(machine_, cancel, progress, between_rounds)));
}

std::string_view GenerateKindName(GenerateKind k) {
  constexpr NameEntry<GenerateKind> kNames[] = {{GenerateKind::kDescription, "description"},
                                                {GenerateKind::kTask, "task"},
                                                {GenerateKind::kExistingKernel, "existing_kernel"},
                                                {GenerateKind::kChangeOfRun, "change_of_run"}};
  return NameIn(kNames, k);
}

GenerateResult Service::Generate(const GenerateRequest& request, const CancellationToken& cancel,
                                 const ProgressFn& progress, const ConfirmFn& confirm,
                                 const BetweenRoundsFn& between_rounds) {
  GenerateResult result;
  RunConfig config = request.config;
  std::string task_text, task_origin, candidate, error;
  const bool is_task = FileExists(request.request) ||
                       FileExists(BundledTasksDir(machine_.config()) + "/" + request.request + ".json") ||
                       request.request.find_first_of(" \t\n") == std::string::npos;
  if (!request.from_run.empty()) {
    // D: a change to an earlier run's result.
    result.kind = GenerateKind::kChangeOfRun;
    if (request.request.empty())
      throw UsageError("say what to change in the run's result (e.g. \"use shared memory\")");
    auto log = EventLog::Open(RunFiles(request.from_run).events(), machine_.env().clock());
    std::vector<Event> events = log->ReadAll();
    RunState earlier = FoldEvents(events);
    ArtifactStore artifacts(RunFiles(request.from_run).artifacts());
    const std::optional<Scored>& from = earlier.success ? earlier.current : earlier.best;
    if (!earlier.started || !from)
      throw UsageError("the run in " + request.from_run + " has no candidate to change; start from its task instead");
    task_text = artifacts.Get(earlier.task_artifact);
    config.task_format = earlier.config.task_format;
    task_origin = config.task_format == TaskFormat::kKernelBench
                      ? earlier.task_name + ".py"
                      : earlier.task_name + " (from the run in " + request.from_run + ")";
    candidate = artifacts.Get(from->candidate);
    if (!request.backend_set) config.backend = earlier.config.backend;
    config.requirement = request.request;
    std::vector<RunEvent> typed;
    for (const Event& e : events)
      if (std::optional<RunEvent> t = Decode(e)) typed.push_back(std::move(*t));
    config.carried_notes = {"earlier run " + request.from_run + ": " +
                            (earlier.success ? "certified" : "not certified (" + earlier.finish_reason + ")")};
    for (auto& n : RoundNotes(typed)) config.carried_notes.push_back(std::move(n));
  } else if (is_task && IsKernelBenchFile(request.request)) {
    // B and C for a KernelBench reference: ModelNew written, or an existing one repaired.
    result.kind = request.candidate_path.empty() ? GenerateKind::kTask : GenerateKind::kExistingKernel;
    task_text = ReadCandidate(request.request, "KernelBench reference");
    task_origin = request.request;
    config.task_format = TaskFormat::kKernelBench;
    if (!request.candidate_path.empty()) candidate = ReadCandidate(request.candidate_path);
  } else if (is_task) {
    // B and C: a task, and perhaps an existing kernel.
    Task task = ResolveTask(request.request);
    result.kind = request.candidate_path.empty() ? GenerateKind::kTask : GenerateKind::kExistingKernel;
    task_text = TaskText(task);
    task_origin = task.origin;
    if (!request.candidate_path.empty()) candidate = ReadCandidate(request.candidate_path);
  } else {
    // A: a description; the model writes the task, which the user sees first.
    result.kind = GenerateKind::kDescription;
    RepairerSpec spec = config.repairer;
    ResolveModelEndpoint(&spec, machine_.config());
    if (!spec.has_model())
      throw UsageError(
          "writing a task from a description needs a model: --base-url and --model (or OPENAI_BASE_URL "
          "and KFORGE_MODEL); or pass a task file");
    ChatClient client(machine_.env().http(), machine_.env().clock(), LoadEndpointSettings(spec, machine_.config()));
    std::string example;
    TryReadFile(BundledTasksDir(machine_.config()) + "/softmax.json", &example, &error);
    if (progress) progress("asking the model for a task file: " + request.request);
    TaskDraft draft = WriteTask(client, request.request, example, ReferenceNames(), &cancel);
    result.task_usage = draft.usage;
    if (!draft.ok) {
      result.error = draft.error;
      return result;
    }
    task_text = draft.text;
  }
  Task task = ReadTaskOf(config.task_format, task_text, task_origin.empty() ? "generated task" : task_origin);
  const std::string out = OutDir(request.out, task.name);
  result.task_text = task_text;
  if (result.kind == GenerateKind::kDescription) {
    MakeDirs(out);
    result.draft_path = out + "/task.json";
    WriteFileAtomic(result.draft_path, task_text);
    task_origin = result.draft_path;
    if (!confirm || !confirm("task", task_text)) {
      result.declined = true;
      return result;
    }
  }
  result.run =
      CreateRun(task_text, task_origin, candidate, config, request.seed, out, cancel, progress, between_rounds).Drive();
  return result;
}

RunResult Service::Resume(const std::string& run_dir, const CancellationToken& cancel, const ProgressFn& progress,
                          const BetweenRoundsFn& between_rounds) {
  return StartResume(run_dir, cancel, progress, between_rounds).Drive();
}

StartedRun Service::StartResume(const std::string& run_dir, const CancellationToken& cancel, const ProgressFn& progress,
                                const BetweenRoundsFn& between_rounds) {
  return StartedRun(RepairRun::Open(run_dir, MakeRepairEnv(machine_, cancel, progress, between_rounds)));
}

RunStatus Service::Status(const std::string& run_dir) const {
  auto log = EventLog::Open(RunFiles(run_dir).events(), machine_.env().clock());
  return RunStatus{run_dir, FoldEvents(log->ReadAll())};
}

std::vector<Event> Service::Log(const std::string& run_dir) const {
  return EventLog::Open(RunFiles(run_dir).events(), machine_.env().clock())->ReadAll();
}

std::optional<std::string> Service::Artifact(const std::string& run_dir, const std::string& hash) const {
  ArtifactStore store(RunFiles(run_dir).artifacts());
  if (!IsArtifactHash(hash) || !store.Has(hash)) return std::nullopt;
  return store.Get(hash);
}

std::vector<RunValidation> Service::Validations(const std::string& run_dir) const {
  std::vector<RunValidation> out;
  for (const Event& e : Log(run_dir)) {
    std::optional<RunEvent> typed = Decode(e);
    if (const auto* v = typed ? std::get_if<ValidatedEvent>(&*typed) : nullptr) out.push_back({e.seq, v->scored});
  }
  return out;
}

DecisionReplay Service::CheckDecisions(const std::string& run_dir) const {
  return ReplayDecisions(Log(run_dir), ArtifactStore(RunFiles(run_dir).artifacts()));
}

BenchReport Service::Bench(const BenchRequest& request, const CancellationToken& cancel) {
  Task task = ResolveTask(request.task);
  BenchOptions opts = request.options;
  opts.cancel = &cancel;
  if (opts.baseline_path.empty() && opts.baselines_dir.empty())
    opts.baselines_dir = BundledBaselinesDir(machine_.config());
  return RunBench(machine_, task, request.candidate_path, opts);
}

VerifyResult Service::BenchKernelBench(const BenchRequest& request, BackendKind backend,
                                       const CancellationToken& cancel) {
  if (!request.options.case_name.empty() || !request.options.baseline_path.empty() || !request.options.ncu_csv.empty())
    throw UsageError(
        "--case, --baseline and --ncu-csv apply to native tasks; a KernelBench file is timed on get_inputs() "
        "against its own Model");
  KernelBenchOptions kb;
  kb.backend = backend;
  kb.full = request.options.full;
  kb.seed = request.options.seed ? *request.options.seed : machine_.env().entropy().FreshSeed();
  kb.cache_dir = machine_.config().cache_dir;
  kb.cancel = &cancel;
  kb.timing_trials = request.options.reps;
  kb.timing_warmup = request.options.warmup;
  kb.timing_compiled = request.options.compiled_baseline;
  VerifyResult r;
  r.verdict = VerifyKernelBench(machine_, request.task, request.candidate_path, kb);
  return r;
}

DeviceReport Service::Device(bool calibrate) {
  DeviceReport r;
  r.device = machine_.Device();  // throws EnvironmentError without a GPU
  const std::string& cache = machine_.config().cache_dir;
  r.ceilings = calibrate ? CalibrateCeilings(machine_, r.device, cache) : LoadCeilings(r.device, cache);
  return r;
}

}  // namespace kforge
