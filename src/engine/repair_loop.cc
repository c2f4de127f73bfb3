#include "engine/repair_loop.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "agent/knowledge_base.h"
#include "agent/llm_config.h"
#include "agent/registry.h"
#include "core/cancel.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/error.h"
#include "core/expr.h"
#include "core/fs.h"
#include "core/hash.h"
#include "engine/guards.h"
#include "engine/kept_outputs.h"
#include "engine/pinned_values.h"
#include "engine/scoring.h"
#include "engine/tool_host.h"
#include "engine/turn_context.h"
#include "exec/machine.h"
#include "record/artifact_store.h"
#include "record/run_files.h"
#include "verify/forensics.h"
#include "verify/inputs.h"
#include "verify/kernelbench/attribution.h"
#include "verify/perf_diagnosis.h"
#include "verify/speed.h"
#include "verify/task_verifier.h"

namespace kforge {
namespace {

/// The tensor layer of a validation: per trial, its seed, outcome and output statistics.
nlohmann::json TrialsTensor(const Verdict& v) {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& c : v.cases) {
    nlohmann::json outputs = nlohmann::json::array();
    for (const auto& o : c.outputs)
      outputs.push_back({{"name", o.name},
                         {"mismatches", o.compare.mismatches},
                         {"max_abs_error", std::isfinite(o.compare.max_abs_error) ? o.compare.max_abs_error : -1.0},
                         {"worst_ratio", std::isfinite(o.compare.worst_ratio) ? o.compare.worst_ratio : -1.0},
                         {"sha256", o.sha256}});
    trials.push_back({{"set", TrialSetName(c.set)},
                      {"case", c.name},
                      {"distribution", c.distribution},
                      {"seed", c.seed},
                      {"failure_class", FailureClassName(c.failure)},
                      {"outputs", outputs}});
  }
  return trials;
}

/// The cases whose trials with the distribution a speed is measured with (the case's first,
/// else normal) the near-miss's verdict `v` passed, every one of them.
std::set<std::string> TimedCases(const Task& task, const Verdict& v) {
  std::map<std::string, std::string> timed_distribution;
  for (const auto* set : {&task.light, &task.full})
    for (const auto& c : *set)
      timed_distribution[c.name] =
          DistributionName(c.distributions.empty() ? Distribution::kNormal : c.distributions.front());
  std::set<std::string> passed, failed;
  for (const auto& c : v.cases) {
    if (c.set != TrialSet::kLight && c.set != TrialSet::kFull) continue;
    const std::string name = c.name.substr(0, c.name.find('#'));  // "#repeat": the light set's second run
    auto it = timed_distribution.find(name);
    if (it == timed_distribution.end() || it->second != c.distribution) continue;
    (c.passed() ? passed : failed).insert(name);
  }
  for (const auto& name : failed) passed.erase(name);
  return passed;
}

/// The task's byte and FLOP counts at `kase` (0 where it gives none) and, on a GPU whose
/// ceilings were calibrated (kforge device calibrate), those ceilings: what a timing at
/// `kase` is diagnosed against (verify/perf_diagnosis.h).
PerfInputs PerfInputsAt(Machine& machine, const Task& task, const Case& kase, BackendKind backend) {
  PerfInputs in;
  int64_t count = 0;
  std::string error;
  if (!task.bytes.empty() && TryEvalExpr(task.bytes, kase.params, &count, &error) && count > 0)
    in.bytes = static_cast<double>(count);
  if (!task.flops.empty() && TryEvalExpr(task.flops, kase.params, &count, &error) && count > 0)
    in.flops = static_cast<double>(count);
  if (backend == BackendKind::kCuda) {
    try {
      in.ceilings = LoadCeilings(machine.Device(), machine.config().cache_dir);
    } catch (const EnvironmentError&) {  // no device to name: the rates alone
    }
  }
  return in;
}

/// What the case's byte and FLOP counts say the two timings achieved ("" when the task gives
/// no counts): the rates a repairer reads in the verdict.
std::string AchievedRates(const PerfInputs& counts, const Speed& before, const Speed& after) {
  std::string out;
  if (counts.bytes > 0)
    out += fmt::format("; memory {:.2f} GB/s against the near-miss's {:.2f} GB/s", counts.bytes / after.median_ns,
                       counts.bytes / before.median_ns);
  if (counts.flops > 0)
    out += fmt::format("; {:.2f} GFLOP/s against {:.2f} GFLOP/s", counts.flops / after.median_ns,
                       counts.flops / before.median_ns);
  return out;
}

/// The trace layer of a validation, from its verdict: what it ran with, how long it took, and
/// the processes it ran in (the engine's, the compiler's, each candidate process's).
nlohmann::json ValidationTrace(const nlohmann::json& verdict, pid_t engine_pid) {
  const nlohmann::json& compile = verdict.value("compile", nlohmann::json::object());
  const std::string log = compile.value("log", "");
  nlohmann::json run_ms = nlohmann::json::array(), candidate_pids = nlohmann::json::array();
  for (const auto& c : verdict.value("cases", nlohmann::json::array())) {
    run_ms.push_back(c.value("run_ms", 0.0));
    const int64_t pid = c.value("pid", int64_t{-1});
    if (pid >= 0 && (candidate_pids.empty() || candidate_pids.back() != pid)) candidate_pids.push_back(pid);
  }
  return {{"tools", verdict.value("tools", nlohmann::json::object())},
          {"compile",
           {{"cached", compile.value("cached", false)},
            {"seconds", compile.value("seconds", 0.0)},
            {"log_bytes", log.size()},
            {"log_sha256", Sha256Hex(log)}}},
          {"device", verdict.value("device", nlohmann::json())},
          {"sandbox", verdict.value("sandbox", "")},
          {"sandbox_layers", verdict.value("sandbox_layers", nlohmann::json::array())},
          {"timing", verdict.value("timing", nlohmann::json::object())},
          {"run_ms", run_ms},
          {"processes",
           {{"engine", engine_pid},
            {"compiler", compile.value("pid", int64_t{-1})},
            {"candidate", std::move(candidate_pids)}}}};
}

/// The registry a run's repairers come from: the environment's, or the built-in one.
RepairerRegistry BuiltinRepairersFor(const RepairEnv& env) {
  return env.repairers != nullptr ? *env.repairers : BuiltinRepairers();
}

std::unique_ptr<TaskVerifier> VerifierFor(const RepairEnv& env, TaskFormat format, const std::string& text,
                                          const std::string& origin, const std::string& work_dir) {
  return env.verifiers ? env.verifiers(format, text, origin, *env.machine, work_dir)
                       : MakeTaskVerifier(format, text, origin, *env.machine, work_dir);
}

}  // namespace

RepairRun::RepairRun(std::string dir, const RepairEnv& env) : dir_(std::move(dir)), env_(env), machine_(*env.machine) {}

RepairRun::~RepairRun() = default;

const Task& RepairRun::task() const { return verifier_->task(); }

std::unique_ptr<RepairRun> RepairRun::Create(const std::string& run_dir, const std::string& task_text,
                                             const std::string& task_origin, const std::string& candidate_source,
                                             const RunConfig& config, const RepairEnv& env) {
  if (FileExists(RunFiles(run_dir).events()))
    throw UsageError("run directory " + run_dir + " already holds a run; resume it with 'kforge resume " + run_dir +
                     "' or choose another --out");
  // Validate before creating anything: the task, its reference, and the repairer (a missing
  // command, script or endpoint is refused here, not after the run exists).
  const Task task = VerifierFor(env, config.task_format, task_text, task_origin, run_dir)->task();
  const std::unique_ptr<Repairer> repairer = BuiltinRepairersFor(env).Make(config.repairer, env.machine->env());
  // No initial candidate: the repairer writes one, if it can.
  if (candidate_source.empty() && !repairer->writes_from_task())
    throw UsageError("the " + std::string(RepairerKindName(config.repairer.kind)) +
                     " repairer cannot write a candidate from the task alone; give an initial candidate, or use "
                     "--repairer llm, external or script");
  MakeDirs(run_dir);
  std::unique_ptr<RepairRun> run(new RepairRun(run_dir, env));
  run->log_ = EventLog::Create(RunFiles(run_dir).events(), run->machine_.env().clock());
  run->artifacts_ = std::make_unique<ArtifactStore>(RunFiles(run_dir).artifacts());
  std::string task_hash = run->artifacts_->Put(task_text);
  std::string cand_hash = candidate_source.empty() ? "" : run->artifacts_->Put(candidate_source);
  // The knowledge base as it stands now is an input of the run: record it.
  // Without the knowledge base (an ablation) the run records an empty one, so a resume or a
  // replay retrieves nothing either.
  KnowledgeBase kb = config.Without(Ablation::kKnowledgeBase)
                         ? KnowledgeBase::FromSnapshot(nlohmann::json::array(), "")
                         : KnowledgeBase(env.kb_dir, env.machine->config().kb_state_dir);
  std::string kb_hash = run->artifacts_->Put(kb.Snapshot().dump());
  RunStartedEvent started;
  started.task_name = task.name;
  started.task_origin = task_origin;
  started.task_artifact = task_hash;
  started.candidate = cand_hash;
  started.config = config;
  started.kforge_version = KforgeVersion();
  started.kb_snapshot = kb_hash;
  run->Append(started);
  run->log_->Checkpoint();
  run->Load();
  return run;
}

std::unique_ptr<RepairRun> RepairRun::CreateReplay(const std::string& run_dir, const RunStartedEvent& started,
                                                   const ArtifactStore& recorded, const RepairEnv& env) {
  if (FileExists(RunFiles(run_dir).events()))
    throw UsageError("run directory " + run_dir + " already holds a run; choose another --out for the replay");
  MakeDirs(run_dir);
  std::unique_ptr<RepairRun> run(new RepairRun(run_dir, env));
  // A replay can be made again from its recording: its log need not be synced per event.
  run->sync_ = Sync::kNo;
  run->replay_ = true;
  run->log_ = EventLog::Create(RunFiles(run_dir).events(), run->machine_.env().clock(), EventLog::Durability::kRelaxed);
  run->artifacts_ = std::make_unique<ArtifactStore>(RunFiles(run_dir).artifacts(), Sync::kNo);
  for (const std::string& hash : {started.task_artifact, started.candidate, started.kb_snapshot})
    if (!hash.empty()) run->artifacts_->Put(recorded.Get(hash));
  RunStartedEvent again = started;
  again.kforge_version = KforgeVersion();
  run->Append(again);
  run->log_->Checkpoint();
  run->Load();
  return run;
}

std::unique_ptr<RepairRun> RepairRun::Open(const std::string& run_dir, const RepairEnv& env) {
  std::unique_ptr<RepairRun> run(new RepairRun(run_dir, env));
  run->log_ = EventLog::Open(RunFiles(run_dir).events(), run->machine_.env().clock());
  run->artifacts_ = std::make_unique<ArtifactStore>(RunFiles(run_dir).artifacts());
  run->Load();
  return run;
}

void RepairRun::Load() {
  state_ = RunState{};
  events_.clear();
  for (const Event& e : log_->ReadAll()) {
    std::optional<RunEvent> typed = Decode(e);
    if (!typed) continue;  // a type this kforge does not know
    state_.Apply(*typed, e.wall_us);
    events_.push_back(std::move(*typed));
  }
  if (!state_.started)
    throw UsageError("the run in " + dir_ +
                     " has no run_started event (it was interrupted while being "
                     "created); start a new run");
  const std::string task_text = artifacts_->Get(state_.task_artifact);
  const bool kernelbench = state_.config.task_format == TaskFormat::kKernelBench;
  verifier_ = VerifierFor(env_, state_.config.task_format, task_text,
                          state_.task_name + (kernelbench ? ".py" : " (recorded)"), dir_);
  if (replay_ && !state_.kb_snapshot.empty()) {
    kb_ = std::make_unique<KnowledgeBase>(KnowledgeBase::FromSnapshot(
        nlohmann::json::parse(artifacts_->Get(state_.kb_snapshot)), machine_.config().kb_state_dir));
  } else {
    // A resume reads the curated files too, so a broken one is noticed; it still retrieves
    // from the run's snapshot.
    kb_ = std::make_unique<KnowledgeBase>(env_.kb_dir, machine_.config().kb_state_dir);
    if (!state_.kb_snapshot.empty()) kb_->Restore(nlohmann::json::parse(artifacts_->Get(state_.kb_snapshot)));
  }
  repairer_ = BuiltinRepairersFor(env_).Make(state_.config.repairer, machine_.env());
}

Event RepairRun::Append(const RunEvent& event) {
  EncodedEvent encoded = Encode(event);
  Event e = log_->Append(EventTypeName(encoded.type), encoded.layer, std::move(encoded.data));  // persist first ...
  state_.Apply(event, e.wall_us);                                                               // ... then apply
  events_.push_back(event);
  ++appended_;
  if (env_.after_append) env_.after_append(appended_);
  return e;
}

void RepairRun::Progress(const std::string& line) {
  if (env_.progress) env_.progress(line);
}

Scored RepairRun::Validate(const std::string& source, int round, int index, const std::string& origin,
                           const std::string& previous) {
  VerifyOptions opts;
  opts.full = !state_.config.Without(Ablation::kFullCoverage);
  opts.trusted = state_.config.Without(Ablation::kAntiCheat);
  opts.backend = state_.config.backend;
  opts.seed = MixSeed(state_.config.seed, static_cast<uint64_t>(round) * 1000 + static_cast<uint64_t>(index + 1));
  opts.case_timeout_ms = state_.config.case_timeout_ms;
  opts.limits.address_space_bytes = static_cast<int64_t>(state_.config.memory_gib * (1 << 30));
  opts.cache_dir = machine_.config().cache_dir;
  // Probes cost a round, so they are enabled only after unassisted repair has failed, or
  // when the repairer asked for them this round.
  opts.probes = !state_.config.Without(Ablation::kProbes) &&
                (round > state_.config.probes_after_round || (index >= 0 && state_.probes_requested));
  opts.diagnose = true;
  opts.cancel = env_.cancel;
  std::string cand_hash = artifacts_->Put(source);
  const std::string file_name = "candidate-" + cand_hash.substr(0, 12) + state_.config.SourceExtension();
  std::optional<PinnedValidation> pinned =
      env_.pinned ? env_.pinned->Validation({state_.iterations, cand_hash, *opts.seed}) : std::nullopt;
  Verdict v = pinned ? std::move(pinned->verdict) : verifier_->VerifySource(source, file_name, opts);
  if (!pinned && index >= 0 && state_.config.task_format == TaskFormat::kKernelBench) RefuseFallback(&v);
  if (!pinned) JudgeSpeed(source, index, &v);
  nlohmann::json vj = v.ToJson();
  Forensics f = pinned && pinned->forensics.is_object() ? ForensicsFromJson(pinned->forensics) : Diagnose(task(), v);
  Scored s;
  s.candidate = cand_hash;
  s.verdict = artifacts_->Put(vj.dump(2));
  s.forensics = v.passed ? "" : artifacts_->Put(f.ToJson().dump(2));
  s.score = ScoreVerdict(v);
  s.passed = v.passed;
  s.integrity = v.failure == FailureClass::kIntegrity;
  s.failure = v.failure;
  s.level = v.level;
  s.signature = FailureSignature(v);
  s.message = v.message;
  s.origin = origin;
  s.round = round;
  s.index = index;
  s.iteration = state_.iterations;
  s.previous = previous;
  std::string tensors;
  if (pinned && !pinned->tensors.empty())
    tensors = artifacts_->Adopt(pinned->tensors, pinned->tensors_path);
  else if (!pinned && !v.kept_outputs.empty())
    tensors = artifacts_->Put(EncodeKeptOutputs(v.kept_outputs));
  Append(ValidatedEvent{s, *opts.seed, opts.probes, artifacts_->Put(TrialsTensor(v).dump()), tensors});
  // A person can follow the run without kforge: one directory per validation.
  std::string it_dir = fmt::format("{}/logs/iteration_{}", dir_, s.iteration);
  MakeDirs(it_dir);
  const std::string ext = state_.config.SourceExtension();
  WriteFileAtomic(it_dir + "/candidate" + ext, source, sync_);
  if (!previous.empty()) WriteFileAtomic(it_dir + "/previous" + ext, artifacts_->Get(previous), sync_);
  WriteFileAtomic(it_dir + "/verdict.json", vj.dump(2) + "\n", sync_);
  if (!v.passed) {
    WriteFileAtomic(it_dir + "/forensics.json", f.ToJson().dump(2) + "\n", sync_);
    WriteFileAtomic(it_dir + "/forensics.txt", f.Text(), sync_);
  }
  WriteFileAtomic(it_dir + "/error.log", v.Summary() + (origin.empty() ? "" : "proposed by: " + origin + "\n"), sync_);
  Progress(fmt::format("  validated {} {}: {} (level {}, score {:.2f}){}",
                       index < 0 ? "initial candidate" : fmt::format("proposal {}.{}", round, index + 1),
                       cand_hash.substr(0, 8), v.passed ? "PASS" : FailureClassName(s.failure), LevelName(s.level),
                       s.score, origin.empty() ? "" : " from " + origin));
  return s;
}

const Scored* RepairRun::NearMiss() const {
  for (const RunEvent& e : events_) {
    const auto* first = std::get_if<ValidatedEvent>(&e);
    if (first != nullptr && first->scored.index < 0) return &first->scored;
  }
  return nullptr;
}

nlohmann::json RepairRun::NearMissVerdict() const {
  const Scored* near_miss = NearMiss();
  return near_miss ? nlohmann::json::parse(artifacts_->Get(near_miss->verdict), nullptr, false) : nlohmann::json();
}

void RepairRun::RefuseFallback(Verdict* v) const {
  if (!v->passed) return;
  const nlohmann::json near_miss = NearMissVerdict();
  if (!near_miss.is_object()) return;
  std::vector<std::string> moved =
      WorkMovedToFramework(near_miss.value("kernelbench", nlohmann::json()),
                           v->kernelbench ? v->kernelbench->measurements : nlohmann::json());
  if (moved.empty()) return;
  std::string list;
  for (size_t i = 0; i < moved.size() && i < 4; ++i) list += (i ? "; " : "") + moved[i];
  AddFinding(&v->integrity, "repair.moved_to_framework",
             "the repair computes with the framework or a library what the near-miss's kernels computed (" + list +
                 "): a fallback is not a repair");
  v->passed = false;
  v->failure = FailureClass::kIntegrity;
  v->message = "integrity: repair.moved_to_framework: " + v->integrity.back().detail;
}

void RepairRun::JudgeSpeed(const std::string& source, int index, Verdict* v) {
  const double threshold = state_.config.degenerate_below;
  // KernelBench candidates are timed by their own workers (kforge bench --kernelbench), not here.
  if (threshold <= 0 || state_.config.Without(Ablation::kSpeed) || state_.config.task_format != TaskFormat::kTaskFile)
    return;
  if (index >= 0 && !v->passed) return;  // the near-miss, and proposals that are certified
  SpeedOptions options;
  options.seed = MixSeed(state_.config.seed, 0x5eed);
  options.cache_dir = machine_.config().cache_dir;
  options.limits.address_space_bytes = static_cast<int64_t>(state_.config.memory_gib * (1 << 30));
  options.call_timeout_ms = state_.config.case_timeout_ms;
  options.cancel = env_.cancel;
  // The judgement asks whether a repair is slower by a tenth or more beyond the noise: figures
  // known to 1% serve, and each validation pays the timing.
  options.target_rse = 0.01;
  options.time_cap_ms = 500;
  const Scored* near_miss = NearMiss();
  // Timed only on a case whose trials the near-miss passed: where it does the whole work.
  if (index < 0 || near_miss == nullptr) {
    options.cases = TimedCases(task(), *v);
  } else {
    if (!timed_cases_) timed_cases_ = TimedCases(task(), Verdict::FromJson(NearMissVerdict()));
    options.cases = *timed_cases_;
  }
  if (options.cases.empty()) options.cases.insert("");  // none: nothing is timed
  // A call the cancellation ended is not a timing: the step records nothing and is taken again.
  auto measure = [&](const std::vector<std::string>& sources) {
    std::vector<Speed> speeds = MeasureSpeeds(machine_, task(), state_.config.backend, sources, options);
    if (env_.cancel != nullptr) env_.cancel->ThrowIfCancelled();
    return speeds;
  };
  if (index < 0 || near_miss == nullptr) {
    v->speed = measure({source})[0].ToJson();
    return;
  }
  // The proposal is timed alongside the near-miss, not against its figure from the start.
  options.written_only = {0};  // the near-miss's outputs are not judged right, only written
  const std::vector<Speed> pair = measure({artifacts_->Get(near_miss->candidate), source});
  const Speed &before = pair[0], &speed = pair[1];
  v->speed = speed.ToJson();
  v->speed["alongside_near_miss"] = before.ToJson();
  if (speed.fault) {  // a timing it made fail must not pass it, whatever the near-miss did
    v->passed = false;
    v->failure = FailureClass::kDegenerate;
    v->message = "repaired by degeneration: certified correct, but it could not be timed beside the near-miss (" +
                 speed.problem + ")";
    return;
  }
  if (!SlowerBeyondNoise(before, speed, threshold)) return;
  const double ratio = SpeedRatio(before, speed);
  v->passed = false;
  v->failure = FailureClass::kDegenerate;
  const Case& kase = *SpeedCase(task(), state_.config.backend, options.cases);
  PerfInputs at = PerfInputsAt(machine_, task(), kase, state_.config.backend);
  at.median_ns = speed.median_ns;
  const PerfDiagnosis diagnosis = DiagnosePerformance(at);
  v->speed["diagnosis"] = diagnosis.ToJson();
  v->message = fmt::format(
      "repaired by degeneration: certified correct, but {:.2f}x the near-miss's speed ({:.1f} us a call against "
      "{:.1f} us on case {}, {}{}); a repair must keep at least {:.2f}x (--degenerate-below){}",
      ratio, speed.median_ns / 1e3, before.median_ns / 1e3, speed.case_name, SpeedClockName(speed.clock),
      AchievedRates(at, before, speed), threshold,
      // The limit's sentence alone: the rates are in the message already.
      diagnosis.limit == PerfLimit::kUnknown ? "" : ". Diagnosis of the repair: " + diagnosis.findings.front());
}

void RepairRun::RequestRepair() {
  const bool write = !state_.current;  // no candidate yet: the repairer writes one from the task
  RepairRequestedEvent request{write ? 0 : state_.round + 1,
                               state_.attempt,
                               repairer_->name(),
                               write,
                               write ? "" : state_.current->candidate,
                               write ? "" : state_.current->forensics,
                               /*suggestion=*/""};
  // The conductor's reading of the failure goes with the turn, recorded with its request.
  if (!write) {
    Forensics f;
    if (!state_.current->forensics.empty())
      f = ForensicsFromJson(nlohmann::json::parse(artifacts_->Get(state_.current->forensics)));
    request.suggestion = Suggestion(*state_.current, f);
  }
  Append(request);
}

void RepairRun::CallRepairer() {
  RepairContext ctx;
  ctx.task = &task();
  ctx.format = state_.config.task_format;
  ctx.task_text = artifacts_->Get(state_.task_artifact);
  ctx.cancel = env_.cancel;
  ctx.file_name = "candidate" + state_.config.SourceExtension();
  Forensics f;
  // Debug hands over the failing candidate and its diagnosis; regenerate (and the first
  // turn of a run without a candidate) only the task and the history.
  // A requirement the user added between rounds restarts from generation with it.
  const bool handed_over = state_.current && state_.config.policy == RepairPolicy::kDebug && !state_.regenerate_next;
  if (handed_over) {
    ctx.source = artifacts_->Get(state_.current->candidate);
    ctx.verdict = nlohmann::json::parse(artifacts_->Get(state_.current->verdict));
    if (!state_.current->forensics.empty()) {
      ctx.forensics = nlohmann::json::parse(artifacts_->Get(state_.current->forensics));
      f = ForensicsFromJson(ctx.forensics);
    }
  }
  // What the progress line and the prompt say of the current candidate: its diagnosis when it
  // is handed over, else how it failed (never "failure: none" for a candidate that fails).
  std::string diagnosis;
  if (handed_over) {
    ctx.forensics_text = f.Text();
    diagnosis = ctx.forensics_text.substr(0, ctx.forensics_text.find('\n'));
  } else if (state_.current && !state_.current->passed) {
    diagnosis = fmt::format("the current candidate fails ({} at {}) and is not shown: {}",
                            FailureClassName(state_.current->failure), LevelName(state_.current->level),
                            state_.regenerate_next ? "a new requirement restarts from the task"
                                                   : "the regenerate strategy writes afresh from the task");
    ctx.forensics_text = diagnosis + "\n";
  } else {
    diagnosis = state_.current ? "the current candidate passes" : "no candidate yet";
  }
  ctx.kb_hits = kb_->Retrieve(task(), f);
  ctx.round = state_.round;
  ctx.attempt = state_.attempt;
  ctx.probes_enabled = !state_.config.Without(Ablation::kProbes) && state_.round > state_.config.probes_after_round;
  for (FailureClass e : state_.error_history) ctx.history.emplace_back(FailureClassName(e));
  ctx.round_notes = state_.config.carried_notes;
  for (auto& n : RoundNotes(events_)) ctx.round_notes.push_back(std::move(n));
  ctx.requirement = state_.config.requirement;
  if (!state_.requirement.empty()) ctx.requirement += (ctx.requirement.empty() ? "" : "\n") + state_.requirement;
  ctx.suggestion = state_.suggestion;
  std::string hits;
  for (const auto& h : ctx.kb_hits) hits += (hits.empty() ? "" : ", ") + h.entry->id;
  Progress(fmt::format("round {} (attempt {}): {} | knowledge base: {}", state_.round, state_.attempt, diagnosis,
                       hits.empty() ? "no match" : hits));
  RunToolHost tools(
      artifacts_->Get(state_.task_artifact), dir_,
      [&] {
        nlohmann::json hits = nlohmann::json::array();
        for (const auto& h : ctx.kb_hits)
          hits.push_back({{"id", h.entry->id},
                          {"guidance", h.entry->guidance},
                          {"score", h.score},
                          {"succeeded", h.entry->record.succeeded},
                          {"matched", h.entry->record.matched}});
        return hits.dump(2);
      },
      env_.kb_dir.empty() ? "" : env_.kb_dir + "/notes");
  bool deterministic = false;
  TurnResult turn = Turn(ctx, tools, &deterministic);
  std::vector<Proposal>& proposals = turn.proposals;
  RepairProposedEvent proposed;
  proposed.round = state_.round;
  for (const auto& p : proposals) {
    std::string hash = artifacts_->Put(p.source);
    if (state_.seen.count(hash)) {  // oscillation: never validate a candidate twice
      ++proposed.skipped_seen;
      proposed.skipped.push_back(hash);
      continue;
    }
    proposed.proposals.push_back({hash, p.origin, p.description});
  }
  for (const auto& h : ctx.kb_hits) proposed.kb_hits.push_back(h.entry->id);
  proposed.tool_calls = tools.calls();
  proposed.probes_requested = tools.probes_requested();
  proposed.usage = turn.usage;
  proposed.deterministic = deterministic;
  proposed.turn_error = turn.failure;
  if (!turn.transcript.is_null())
    proposed.transcript =
        artifacts_->Put(turn.transcript.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  Append(proposed);
  if (!turn.failure.empty()) Progress("  the repairer's turn failed: " + turn.failure);
}

TurnResult RepairRun::Turn(const RepairContext& ctx, RunToolHost& tools, bool* deterministic) {
  const std::string current = state_.current ? state_.current->candidate : "";
  std::optional<PinnedTurn> pinned =
      env_.pinned ? env_.pinned->Turn({state_.turns - 1, state_.round, current}) : std::nullopt;
  if (pinned) {  // the recorded answer; its tool calls are made again, so their answers are compared
    tools.Repeat(pinned->tool_calls);
    *deterministic = false;
    return std::move(pinned->result);
  }
  if (!session_ || session_attempt_ != state_.attempt) {  // one session per attempt
    session_ = repairer_->OpenSession();
    session_attempt_ = state_.attempt;
  }
  *deterministic = repairer_->deterministic();
  return session_->Turn(ctx, tools);
}

void RepairRun::CloseRound() {
  const std::vector<Scored>& results = state_.round_results;
  RoundInput in = RoundInputFrom(state_);
  RoundDecision decision = CloseRoundDecision(in, [&](const Scored& s) {
    return s.forensics.empty() ? Forensics{} : ForensicsFromJson(nlohmann::json::parse(artifacts_->Get(s.forensics)));
  });
  RoundClosedEvent closed{state_.round, decision, {}};
  // Knowledge-base track records: one use per entry per round.
  std::map<std::string, KbUpdate> uses;
  for (const auto& r : results) {
    if (r.origin.rfind("kb:", 0) != 0) continue;
    KbUpdate& u = uses[r.origin.substr(3)];
    u.id = r.origin.substr(3);
    u.succeeded |= r.passed;
    u.integrity |= r.integrity;
    u.degenerated |= r.failure == FailureClass::kDegenerate;
  }
  // The track-record updates are part of the run's log (the per-user state is updated
  // after, as the knowledge base's memory across runs).
  for (const auto& [id, u] : uses) closed.kb_updates.push_back(u);
  Append(closed);
  for (const auto& g : decision.guards)
    Progress(fmt::format("  guard {}: {} ({})", GuardKindName(g.guard), GuardActionName(g.action), g.reason));
  for (const auto& [id, u] : uses) kb_->RecordUse(id, u.succeeded, u.integrity, u.degenerated);
}

const Scored* RepairRun::FinalCandidate() const {
  if (!state_.current) return state_.best ? &*state_.best : nullptr;
  const Scored& c = *state_.current;
  if (state_.best &&
      ((state_.best->passed && !c.passed) || (state_.best->passed == c.passed && state_.best->score > c.score + 1e-9)))
    return &*state_.best;
  return &c;
}

void RepairRun::Finish(bool success, const std::string& reason, const std::string& message) {
  const Scored* final_candidate = FinalCandidate();
  Append(RunFinishedEvent{success, reason, message, final_candidate ? final_candidate->candidate : ""});
  // Learn from the repair: the signature it fixed and the change that fixed it.
  const std::string before = state_.current ? state_.current->previous : "";
  if (!success || before.empty() || state_.config.Without(Ablation::kKnowledgeBase)) return;
  for (const RunEvent& e : events_) {
    const auto* validated = std::get_if<ValidatedEvent>(&e);
    if (validated == nullptr || validated->scored.candidate != before || validated->scored.forensics.empty()) continue;
    Forensics f = ForensicsFromJson(nlohmann::json::parse(artifacts_->Get(validated->scored.forensics)));
    std::string id =
        kb_->ProposeLearned(task(), f, artifacts_->Get(before), artifacts_->Get(state_.current->candidate));
    if (!id.empty()) Progress("  proposed learned knowledge-base entry " + id);
    return;
  }
}

void RepairRun::WriteOutputs() {
  nlohmann::json s;
  s["success"] = state_.success;
  s["workflow"] = "repair";
  s["repairer"] = RepairerKindName(state_.config.repairer.kind);
  s["policy"] = RepairPolicyName(state_.config.policy);
  s["usage"] = state_.usage.ToJson();
  s["model"] = {{"base_url", state_.config.repairer.base_url},
                {"model", state_.config.repairer.model},
                {"calls", state_.usage.model_calls},
                {"prompt_tokens", state_.usage.prompt_tokens},
                {"cached_prompt_tokens", state_.usage.cached_prompt_tokens},
                {"completion_tokens", state_.usage.completion_tokens},
                {"cost_usd", CostOf(state_.usage, state_.config.repairer)},
                {"turns_answered_by_recipes", state_.usage.recipe_turns}};
  if (state_.usage.model_calls > 0 && state_.usage.recipe_turns > 0)
    s["model"]["tokens_saved_by_recipes_estimate"] =  // one model call per turn saved
        state_.usage.recipe_turns * (state_.usage.prompt_tokens + state_.usage.completion_tokens) /
        state_.usage.model_calls;
  s["iterations"] = state_.iterations;
  s["rounds"] = state_.round;
  s["attempts"] = state_.attempt;
  const Scored* final_candidate = FinalCandidate();
  s["final_iteration"] = final_candidate ? final_candidate->iteration : 0;
  s["op_name"] = task().name;
  s["backend"] = BackendName(state_.config.backend);
  s["error_history"] = nlohmann::json::array();
  for (FailureClass f : state_.error_history) s["error_history"].push_back(FailureClassName(f));
  s["finished"] = state_.finished;
  if (state_.cancelled) s["cancelled"] = true;
  s["reason"] = state_.finish_reason;
  if (final_candidate) {
    s["final_candidate"] = final_candidate->candidate;
    s["final_level"] = LevelName(final_candidate->level);
    s["final_score"] = final_candidate->score;
  }
  if (state_.best) s["best_candidate"] = state_.best->candidate;
  // What the final verdict's certification covered: the fixed adversarial inputs and the
  // shapes drawn from its seed (present when the full set ran).
  if (final_candidate && !final_candidate->verdict.empty()) {
    nlohmann::json v = nlohmann::json::parse(artifacts_->Get(final_candidate->verdict), nullptr, false);
    if (v.is_object() && v.contains("fixed_inputs"))
      s["certification"] = {{"seed", v.value("seed", uint64_t{0})},
                            {"fixed_inputs", v["fixed_inputs"]},
                            {"random_shapes", v.value("random_shapes", nlohmann::json::array())}};
  }
  // Speed before and after: the near-miss's and the final candidate's (verify/speed.h).
  if (state_.config.degenerate_below > 0 && !state_.config.Without(Ablation::kSpeed) &&
      state_.config.task_format == TaskFormat::kTaskFile) {
    const nlohmann::json near_miss = NearMissVerdict();
    const nlohmann::json final_verdict =
        final_candidate && !final_candidate->verdict.empty()
            ? nlohmann::json::parse(artifacts_->Get(final_candidate->verdict), nullptr, false)
            : nlohmann::json();
    auto speed_of = [](const nlohmann::json& v) {
      return Speed::FromJson(v.is_object() ? v.value("speed", nlohmann::json()) : nlohmann::json());
    };
    const Speed before = speed_of(near_miss), after = speed_of(final_verdict);
    s["speed"] = {{"near_miss", before.ToJson()},
                  {"final", after.ToJson()},
                  {"degenerate_below", state_.config.degenerate_below}};
    // The ratio of the figures taken together (the final candidate beside the near-miss).
    const nlohmann::json final_speed =
        final_verdict.is_object() ? final_verdict.value("speed", nlohmann::json()) : nlohmann::json();
    const Speed alongside = Speed::FromJson(
        final_speed.is_object() ? final_speed.value("alongside_near_miss", nlohmann::json()) : nlohmann::json());
    if (const double ratio = SpeedRatio(alongside, after); ratio > 0) s["speed"]["ratio"] = ratio;
    if (final_candidate && final_candidate->failure == FailureClass::kDegenerate) s["speed"]["degenerate"] = true;
  }
  if (!state_.success && state_.finished) {
    s["failure_reason"] = state_.finish_reason;
    s["last_error"] = final_candidate ? final_candidate->message : "";
  }
  WriteFileAtomic(RunFiles(dir_).summary(), s.dump(2) + "\n", sync_);
  summary_ = std::move(s);
  if (state_.success && final_candidate)
    WriteFileAtomic(RunFiles(dir_).final_source(state_.config.SourceExtension()),
                    artifacts_->Get(final_candidate->candidate));
}

void RepairRun::Step() {
  if (env_.cancel != nullptr) env_.cancel->ThrowIfCancelled();
  if (state_.trace_pending) {  // derived from the stored verdict: the same after a resume
    Append(ValidationTraceEvent{ValidationTrace(nlohmann::json::parse(artifacts_->Get(state_.last_verdict)),
                                                machine_.env().processes().SelfId())});
    return;
  }
  if (!state_.current && state_.initial_candidate.empty()) {
    // A run from the task alone: the repairer's first turn writes the candidate.
    if (state_.proposed && !state_.proposals.empty()) {
      Progress(fmt::format("validating {} written by {} (light, then full)", state_.proposals[0].substr(0, 8),
                           repairer_->name()));
      Validate(artifacts_->Get(state_.proposals[0]), 0, -1, state_.proposal_origins[0], "");
    } else if (state_.proposed) {
      Finish(false, "no_candidate", "the repairer wrote no candidate from the task");
    } else if (state_.requested) {
      CallRepairer();
    } else {
      RequestRepair();
    }
    return;
  }
  if (!state_.current) {
    Progress(fmt::format("validating {} on {} (light, then full)", state_.initial_candidate.substr(0, 8), task().name));
    Validate(artifacts_->Get(state_.initial_candidate), 0, -1, "", "");
    return;
  }
  if (state_.round == 0 && state_.current->passed && state_.config.requirement.empty()) {
    Finish(true, "already_correct", "the initial candidate is certified");
    return;
  }
  if (!state_.stop_pending.empty()) {
    Finish(state_.stop_success, state_.stop_pending, state_.stop_message);
    return;
  }
  // Proposals are validated in order; a certified one ends the round early. Both
  // conditions are read from the folded state, so a resumed run decides the same way.
  bool certified = !state_.round_results.empty() && state_.round_results.back().passed;
  if (state_.proposed && !certified && state_.round_results.size() < state_.proposals.size()) {
    size_t i = state_.round_results.size();
    Validate(artifacts_->Get(state_.proposals[i]), state_.round, static_cast<int>(i), state_.proposal_origins[i],
             state_.current->candidate);
    return;
  }
  if (state_.proposed) {
    if (state_.clock_round != state_.round) {  // persist the reading first, then decide from it
      std::optional<int64_t> pinned = env_.pinned ? env_.pinned->ElapsedSeconds(state_.round) : std::nullopt;
      Append(ClockReadEvent{
          state_.round,
          pinned ? *pinned
                 : (machine_.env().clock().WallMicros() - state_.started_wall_us - state_.paused_us) / 1000000});
      return;
    }
    CloseRound();
    return;
  }
  if (state_.requested) {
    CallRepairer();
    return;
  }
  if (state_.user_stop) {
    Finish(false, "stopped_by_user", "the user stopped the run between rounds");
    return;
  }
  if (env_.between_rounds && state_.user_round != state_.round) {
    UserDecidedEvent decided = env_.between_rounds(state_);
    decided.round = state_.round;
    Append(decided);  // persist first, then act on it
    return;
  }
  RequestRepair();
}

const RunState& RepairRun::Run() {
  const ScopedFd lock = TryLockFile(dir_ + "/" + kRunLockFile, LockMode::kExclusive);
  if (!lock.valid())
    throw UsageError("the run in " + dir_ +
                     " is being driven by another kforge process; wait for it to finish, or stop it and resume");
  try {
    if (state_.cancelled && !state_.finished) {
      Append(ResumedEvent{state_.round});
      Progress(fmt::format("resuming at round {} (attempt {})", state_.round, state_.attempt));
    }
    while (!state_.finished) Step();
  } catch (const CancelledError& e) {
    // The step in progress recorded nothing; resume takes it again from the folded state.
    Append(CancelledEvent{e.what(), state_.round, state_.attempt});
    Progress(fmt::format("{}: stopped at round {}", e.what(), state_.round));
  } catch (const EnvironmentError& e) {
    if (env_.cancel != nullptr && env_.cancel->cancelled()) {
      // Stopped while a tool ran: the signal that cancelled the run (Ctrl-C at a terminal,
      // SIGTERM from a batch system) reached the sandbox or compiler too, which then failed.
      // That is an interruption, resumable, not the environment's verdict on the run.
      Append(CancelledEvent{env_.cancel->reason(), state_.round, state_.attempt});
      Progress(fmt::format("{}: stopped at round {}", env_.cancel->reason(), state_.round));
    } else {
      Append(RunFinishedEvent{false, "environment", e.what(), "", /*environment=*/true});
      Progress(std::string("environment error: ") + e.what());
    }
  }
  WriteOutputs();
  return state_;
}

}  // namespace kforge
