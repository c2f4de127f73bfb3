#include "verify/kernelbench/verifier.h"

#include "verify/kernelbench/verifier_internal.h"

namespace kforge::kernelbench_internal {
namespace {

std::string PythonDir(Machine& machine) {
  std::string include = machine.IncludeDir();
  for (const std::string& d :
       {include + "/../python", include + "/../../python", std::string(KFORGE_SOURCE_DIR "/python")})
    if (FileExists(d + "/kforge_torch_worker.py")) return d;
  throw EnvironmentError(
      "cannot find kforge's python/ directory (kforge_torch_worker.py) beside its include/ directory");
}

std::string ReadSource(const std::string& path, const char* what) {
  std::string text, error;
  if (!TryReadFile(path, &text, &error))
    throw UsageError(std::string("cannot read the ") + what + " " + path + ": " + error);
  return text;
}

}  // namespace

ConfinedProgram* KernelBenchVerifier::Prepare(ConfinedProgram* p, bool with_candidate) {
  if (!p->started()) ProvideWorkerScripts(p, python_dir_);  // a warm worker has them
  // The candidate's process gets the reference without its Model (the checker's
  // inputs_source): it draws its inputs from it and has no reference to run.
  // The files' texts as Begin read them, never the files again: what runs is what the
  // verdict names (task.sha256), and what a kept reference was kept under.
  if (with_candidate && !reference_inputs_.empty())
    p->Write(kReferenceFile, reference_inputs_);
  else
    p->Write(kReferenceFile, reference_text_);
  if (with_candidate && !candidate_.empty()) p->Write(kCandidateFile, candidate_text_);
  return p;
}

json KernelBenchVerifier::Check(const std::string& reference, const std::string& candidate) {
  ConfinedProgram program(machine_, options_.limits, false);
  reference_ = reference;
  candidate_ = candidate;
  Prepare(&program, true);
  program.Provide(python_dir_ + "/kforge_check_modelnew.py", "check_modelnew.py");
  std::vector<std::string> argv = {torch_.python, "-I",        "eval/check_modelnew.py", "--reference", kReferenceFile,
                                   "--out",       "check.json"};
  if (!candidate.empty()) argv.insert(argv.end() - 2, {"--candidate", kCandidateFile});
  ExitStatus status = program.Run(argv, WorkerEnv(false), 120000);
  json j = ReadJsonFile(program.ScratchPath(""), "check.json");
  if (!status.ok() || !j.is_object())
    throw EnvironmentError("kforge's static check of the KernelBench files did not finish (" + status.Describe() +
                           "): " + UntrustedText(program.OutputTail(2000)));
  return j;
}

json KernelBenchVerifier::ResolveByRunning() {
  json calls = json::array();
  std::string stopped;
  {
    ConfinedProgram program(machine_, options_.limits, false);
    Prepare(&program, true);
    std::string script = program.Provide(python_dir_ + "/kforge_load_inline.py", "build_ext.py");
    program.Write(
        "job.json",
        json{
            {"mode", "resolve"}, {"reference", kReferenceFile}, {"candidate", kCandidateFile}, {"out", "resolved.json"}}
            .dump());
    ExitStatus status = program.Run({torch_.python, "-I", script, "job.json"}, WorkerEnv(false), kResolveTimeoutMs);
    json run = ReadJsonFile(program.ScratchPath(""), "resolved.json");
    if (run.is_object() && run.contains("calls") && run["calls"].is_array()) calls = run["calls"];
    stopped = run.is_object() ? JsonString(run, "error") : "";
    if (!status.ok() && stopped.empty())
      stopped = "the candidate's module did not finish loading (" + status.Describe() + ")";
  }
  // What the run recorded is data: the keys and sources are made by kforge's checker from
  // the arguments alone, in a process that runs no candidate code.
  ConfinedProgram program(machine_, options_.limits, false);
  program.Provide(python_dir_ + "/eval_utils.py", "eval_utils.py");
  std::string checker = program.Provide(python_dir_ + "/kforge_check_modelnew.py", "check_modelnew.py");
  program.Write("calls.json", calls.dump());
  ExitStatus status = program.Run({torch_.python, "-I", checker, "--derive", "calls.json", "--out", "derived.json"},
                                  WorkerEnv(false), 120000);
  json derived = ReadJsonFile(program.ScratchPath(""), "derived.json");
  json extensions = json::array();
  if (status.ok() && derived.is_object() && derived.contains("derived") && derived["derived"].is_object() &&
      derived["derived"].contains("extensions") && derived["derived"]["extensions"].is_array())
    extensions = derived["derived"]["extensions"];
  return json{{"extensions", extensions}, {"error", stopped}};
}

namespace {

/// Module-level integer constants varied to odd sizes (about half, plus one): catches
/// kernels that assume the file's sizes (multiples of a block, of 4 for vector loads).
json OddSizes(const json& constants) {
  json out = json::object();
  for (auto& [name, value] : constants.items())
    if (value.is_number_integer() && value.get<int64_t>() >= 8) out[name] = value.get<int64_t>() / 2 + 1;
  return out;
}

/// Whether ModelNew holds the reference's weights: each of Model's parameters and buffers is
/// looked up in ModelNew by name (then by value). "different_values": a parameter of the same
/// name and shape holds other values — the common false failure where ModelNew creates its
/// parameters in another order or way and so draws other random weights under the same seed.
std::string WeightsCheck(const json& ref, const json& cand) {
  if (!ref.is_array() || !cand.is_array()) return "unknown";
  int differing = 0, missing = 0;
  for (const auto& p : ref) {
    if (!p.is_array() || p.size() != 3) continue;
    bool by_name = false, same = false;
    for (const auto& q : cand) {
      if (!q.is_array() || q.size() != 3) continue;
      if (q[0] == p[0] && q[1] == p[1]) {
        by_name = true;
        same = q[2] == p[2];
        break;
      }
    }
    if (!by_name)
      for (const auto& q : cand) same = same || (q.is_array() && q.size() == 3 && q[2] == p[2]);
    if (by_name && !same) ++differing;
    if (!by_name && !same) ++missing;
  }
  return differing > 0 ? "different_values" : missing > 0 ? "missing" : "same";
}

}  // namespace

Verdict KernelBenchVerifier::Finish(RunState& r) {
  Verdict& out = r.v;
  KernelBenchVerdict& kb = r.kb;
  json& measured = kb.measurements;
  kb.trials = KernelBenchVerdict::FromJson({{"trials", kernelbench_trials_}}).trials;
  kb.judge_seconds = r.judge_seconds;  // reading and comparing outputs, beside the workers
  bool kb_pass = kb.trials.size() == static_cast<size_t>(kKernelBenchTrials);
  for (const auto& t : kb.trials) kb_pass = kb_pass && t.passed;
  kb.correct = kb_pass;
  if (!options_.kernelbench_trials) kb.not_given = "KernelBench's own trials were not run (--certified-only)";
  if (!kb.not_given.empty()) kb.correct.reset();
  kb.compiled = out.compile.ok;
  if (!measured.contains("attribution")) measured["attribution"] = {{"policy", KernelBenchPolicyName(options_.policy)}};
  measured["attribution"]["in_source"] = r.placement;
  if (!r.static_findings.empty()) {  // the certified verdict fails on them, whatever ran after
    out.passed = false;
    out.level = Level::kNone;
    out.failure = FailureClass::kIntegrity;
    for (auto it = r.static_findings.rbegin(); it != r.static_findings.rend(); ++it)
      if (std::none_of(out.integrity.begin(), out.integrity.end(), [&](const IntegrityFinding& f) {
            return f.check == it->check && f.detail == it->detail && f.line == it->line;
          }))
        out.integrity.insert(out.integrity.begin(), *it);
    out.message = "integrity: " + out.integrity.front().check + ": " + out.integrity.front().detail;
  }
  out.kernelbench = kb;
  out.total_seconds = (machine_.env().clock().MonotonicNanos() - r.start_ns) / 1e9;
  return out;
}

CandidateExtensions KernelBenchVerifier::ReadCandidate(const json& rc, const json& cc, RunState& r) {
  KernelBenchVerdict& kb = r.kb;
  json& measured = kb.measurements;
  std::vector<IntegrityFinding>& static_findings = r.static_findings;
  json read_extensions = cc.value("extensions", json::array());
  if (!read_extensions.is_array()) read_extensions = json::array();
  // load_inline calls whose arguments only running the module gives (an f-string, a
  // template filled in): run it confined, with load_inline recording, and build what it
  // asked for. A call the run did not reach stays a finding.
  std::set<int> unresolved, resolved;
  for (const auto& f : cc.value("findings", json::array()))
    if (f.is_object() && JsonString(f, "check") == "wrapper.unresolved_extension" && f["line"].is_number_integer())
      unresolved.insert(f["line"].get<int>());
  if (!unresolved.empty()) {
    reference_inputs_ = JsonString(rc, "inputs_source");
    json run = ResolveByRunning();
    std::set<std::string> keys;
    for (const auto& e : read_extensions)
      if (e.is_object()) keys.insert(JsonString(e, "key"));
    for (const auto& e : run["extensions"]) {
      if (!e.is_object() || !e.contains("line") || !e["line"].is_number_integer()) continue;
      int line = e["line"].get<int>();
      if (!unresolved.count(line)) continue;  // the checker read that call itself
      resolved.insert(line);
      if (keys.insert(JsonString(e, "key")).second) read_extensions.push_back(e);
    }
    measured["extensions_resolved_by_running"] = {{"lines", resolved}, {"stopped", JsonString(run, "error")}};
  }
  CandidateExtensions extensions = ReadCandidateExtensions(read_extensions);
  std::vector<IntegrityFinding> found;
  for (const auto& f : cc.value("findings", json::array())) {
    if (!f.is_object()) continue;
    const std::string check = JsonString(f, "check");
    const int line = f.contains("line") && f["line"].is_number_integer() ? f["line"].get<int>() : 0;
    if (check == "wrapper.unresolved_extension" && resolved.count(line)) continue;
    AddFinding(&found, check, JsonString(f, "detail"), line);
  }
  found.insert(found.end(), extensions.findings.begin(), extensions.findings.end());
  // Kernels by name are not kernels: an extension whose every function only calls the
  // framework or a library (however spelled) is the framework's compute behind a wrapper.
  if (!extensions.sources.empty() && !extensions.own_code && !cc.value("triton", false) &&
      cc.value("reaches_kernel", false))
    AddFinding(&found, "wrapper.no_custom_kernel",
               "the candidate's extensions have no code of their own (no loop, no __global__ kernel): each "
               "function only calls the framework or a library",
               0);
  // Where compute runs is the policy's to judge (reported under the benchmark's rules);
  // everything else found in the source is a cheat under every policy.
  for (auto& f : found) {
    if (IsComputePlacementFinding(f.check))
      r.placement.push_back({{"check", f.check}, {"detail", f.detail}, {"line", f.line}});
    if (!IsComputePlacementFinding(f.check) || options_.policy == KernelBenchPolicy::kStrict)
      static_findings.push_back(std::move(f));
  }
  // An extension kforge cannot build before the candidate runs would fail its load there,
  // where KernelBench's own build would have made it: no compatible verdict rather than a
  // wrong one.
  for (const auto& f : static_findings) {
    if (f.check == "wrapper.unresolved_extension")
      kb.not_given = "kforge cannot build the candidate's extensions before it runs (line " + std::to_string(f.line) +
                     "): " + f.detail;
    // KernelBench's loader runs both files in one namespace, so the reference's Model is in
    // the candidate's scope there; kforge never gives it to the candidate's process (#35).
    if (f.check == "wrapper.reference_call")
      kb.not_given = "the candidate calls the reference's Model (line " + std::to_string(f.line) +
                     "), which KernelBench's loader leaves in its scope and kforge never gives the candidate's "
                     "process: what KernelBench would say cannot be computed without running the reference there";
  }
  return extensions;
}

bool KernelBenchVerifier::BuildExtensions(CandidateExtensions& extensions, RunState& r) {
  Verdict& v = r.v;
  KernelBenchVerdict& kb = r.kb;
  json& measured = kb.measurements;
  CompilerOptions co;
  co.cache_dir = options_.cache_dir;
  co.timeout_ms = kExtensionBuildTimeoutMs;
  co.limits = options_.limits;
  if (options_.backend == BackendKind::kCuda) co.cuda_arch = machine_.Device().arch;
  v.compile.attempted = true;
  v.compile.ok = true;
  v.compile.cached = true;
  v.compile.compiler = "torch extension (" + machine_.HostCompiler().path + ")";
  measured["extensions"] = json::array();
  for (const auto& s : extensions.sources) {
    if (options_.cancel && options_.cancel->cancelled()) throw CancelledError(options_.cancel->reason());
    // What kforge's own build does not take (include paths, a linker flag), torch's
    // load_inline builds, confined as the candidate is.
    const std::string by_load_inline = WhyLoadInlineBuild(s);
    TorchExtension built = by_load_inline.empty() ? CompileTorchExtension(machine_, torch_, s, co)
                                                  : BuildWithLoadInline(machine_, torch_, python_dir_, s,
                                                                        extensions.load_inline_args[s.key], co);
    const CompileResult& r = built.compile;
    v.compile.seconds += r.seconds;
    v.compile.cached = v.compile.cached && r.cached;
    v.compile.version = r.compiler_version;
    v.compile.flags = r.flags;
    v.compile.log += UntrustedText(r.log);
    if (!r.ok) {
      v.compile.ok = false;
      v.failure = FailureClass::kBuildError;
      v.message = "the extension '" + s.name + "' does not build" + (r.timed_out ? " (timed out)" : "") + ": " +
                  TracebackTail(UntrustedText(r.log), 6);
      // KernelBench's own build would have run it (its shell takes the line as it is): what
      // the benchmark would say is not known, not "incorrect".
      if (!by_load_inline.empty())
        if (std::string refused = LoadInlineBuildProblem(s); !refused.empty())
          kb.not_given = "kforge does not run this build: " + refused;
      return false;
    }
    json report = {{"name", s.name},
                   {"binding", by_load_inline.empty() ? ExtensionBindingName(built.binding) : "load_inline"},
                   {"cached", r.cached},
                   {"seconds", r.seconds}};
    if (!by_load_inline.empty()) report["load_inline_because"] = by_load_inline;
    if (!s.cuda_cu.empty() && by_load_inline.empty()) {
      report["cuda_split"] = built.split;
      if (!built.split)
        report["cuda_whole_because"] =
            extensions.not_split[s.key].empty() ? "its two halves did not build" : extensions.not_split[s.key];
    }
    measured["extensions"].push_back(report);
    extensions_[s.key] = {
        {"path", r.so_path}, {"binding", ExtensionBindingName(built.binding)}, {"functions", s.functions}};
  }
  return true;
}

KernelBenchVerifier::EndedWorkers KernelBenchVerifier::JudgeTrials(const std::vector<KernelBenchTrial>& set,
                                                                   LiveWorker reference, LiveWorker candidate,
                                                                   RunState& r) {
  Clock& clock = machine_.env().clock();
  // Each trial is judged once both workers report it, and its files deleted; a worker waits
  // while its outputs not yet judged exceed its budget (the job's "pace_bytes"). Leaving
  // early (the reference failed, a cancellation) abandons both: nothing would delete what
  // they wait on. A worker that ends early has the other's trials drained, not judged.
  struct AbandonUnlessDone {
    LiveWorker *reference, *candidate;
    bool done = false;
    ~AbandonUnlessDone() {
      if (done) return;
      reference->feed->Abandon();
      candidate->feed->Abandon();
    }
  } abandon{&reference, &candidate};
  auto check_cancel = [&] {
    if (options_.cancel && options_.cancel->cancelled()) throw CancelledError(options_.cancel->reason());
  };
  check_cancel();
  std::optional<WorkerRun> stopped_candidate;  // its run, once it has ended before a trial
  bool reference_on = true, candidate_on = true;
  bool candidate_failed = false;  // as a whole (WorkerProblem, reported below): no case is judged
  JudgeBuffers buffers;           // the trials' outputs are read into the same memory
  for (size_t i = 0; i < set.size() && (reference_on || candidate_on); ++i) {
    TrialReports reports;
    if (reference_on) reports.reference = reference.feed->Trial(i, 50, check_cancel);
    reference_on = !reports.reference.is_null();  // else its worker stopped: WorkerProblem(ref) below
    if (candidate_on) reports.candidate = candidate.feed->Trial(i, 50, check_cancel);
    if (candidate_on && reports.candidate.is_null()) {
      stopped_candidate = candidate.run.get();
      candidate_on = false;
      candidate_failed = !WorkerProblem(*stopped_candidate).empty();
    }
    if (stopped_candidate) reports.candidate_ended = WorkerEnded(*stopped_candidate);
    if (reference_on && !candidate_failed) {
      reports.reference_dir = reference.out_dir;
      reports.candidate_dir = candidate.out_dir;
      reports.threads = machine_.config().threads;
      reports.buffers = &buffers;
      reports.index = static_cast<int64_t>(i);
      if (reference.exports && candidate.exports) {  // then gpu_judge runs (both on the same condition)
        reports.gpu = r.gpu_judge;
        reports.reference_exports = reference.exports.get();
        reports.candidate_exports = candidate.exports.get();
      }
      const int64_t judge_start = clock.MonotonicNanos();
      reports.procedure = options_.procedure;
      JudgeKernelBenchTrial(set[i], reports, &kernelbench_trials_, &r.v);
      r.judge_seconds += (clock.MonotonicNanos() - judge_start) / 1e9;
    }
    if (reference.recording && reference_on) reference.recording->Keep(reports.reference, reference.out_dir);
    RemoveTrialFiles(reference.out_dir, reports.reference);
    RemoveTrialFiles(candidate.out_dir, reports.candidate);
    reference.feed->Judged(i);
    candidate.feed->Judged(i);
    for (const auto& exports : {reference.exports, candidate.exports})
      if (exports) exports->Judged(static_cast<int64_t>(i));
  }
  abandon.done = true;
  EndedWorkers ended;
  ended.reference = reference.run.get();
  if (reference.recording && WorkerProblem(ended.reference).empty()) {
    std::vector<int64_t> trial_ms;
    for (size_t i = 0; i < set.size(); ++i) trial_ms.push_back(reference.feed->TrialMillis(i, clock.MonotonicNanos()));
    reference.recording->Commit(ended.reference.result, trial_ms, set.size());
  }
  ended.candidate = stopped_candidate ? std::move(*stopped_candidate) : candidate.run.get();
  return ended;
}

bool KernelBenchVerifier::ConcludeSet(SetKind kind, size_t before, EndedWorkers ended, RunState& r) {
  Verdict& v = r.v;
  KernelBenchVerdict& kb = r.kb;
  json& measured = kb.measurements;
  WorkerRun& ref = ended.reference;
  WorkerRun& cand = ended.candidate;
  for (size_t i = before; i < v.cases.size(); ++i)
    if (cand.program) v.cases[i].pid = cand.program->pid();  // one worker process runs every trial
  v.reference_seconds += ref.seconds;
  if (kind == SetKind::kTrials) {
    measured["worker_stages"] = {{"reference", StageTimes(ref.result)}, {"candidate", StageTimes(cand.result)}};
    measured["worker_start"] = {{"reference", WorkerStart(ref)}, {"candidate", WorkerStart(cand)}};
    measured["worker_steps"] = {{"reference", StepTotals(ref.result)}, {"candidate", StepTotals(cand.result)}};
  }
  if (std::string why = WorkerProblem(ref); !why.empty()) {
    if (kind == SetKind::kSizes) return true;  // the reference does not take other sizes
    throw UsageError(why);
  }
  v.run_seconds += cand.seconds;
  v.sandbox_layers = cand.layers;
  if (cand.escapes.count > 0)
    AddFinding(&v.integrity, "sandbox.write_outside_scratch",
               std::to_string(cand.escapes.count) + " paths, first " +
                   (cand.escapes.first.empty() ? std::string("?") : cand.escapes.first.front()));
  if (cand.result.is_object() && cand.result.contains("parameters"))
    kb.weights = WeightsCheck(ref.result.value("parameters", json()), cand.result["parameters"]);
  std::string problem = WorkerProblem(cand);
  if (!cand.violation.empty()) AddFinding(&v.integrity, "worker.progress_protocol", cand.violation);
  if (!problem.empty()) {
    v.failure = !cand.violation.empty()                           ? FailureClass::kIntegrity
                : cand.status.kind == ExitStatus::Kind::kTimedOut ? FailureClass::kTimeout
                                                                  : FailureClass::kRuntimeError;
    v.message = problem;
    return false;
  }
  // What every judged forward ran (the worker's profiler): fails closed when not recorded.
  // A trial that is not a runtime error had its forward return (its outputs were judged).
  int64_t completed = 0;
  for (size_t i = before; i < v.cases.size(); ++i) completed += v.cases[i].failure != FailureClass::kRuntimeError;
  measured["attribution"] = KernelBenchAttribution(cand.result.is_object() ? cand.result.value("ops", json()) : json(),
                                                   options_.policy, completed, &v.integrity);
  if (kind == SetKind::kTrials) {
    // Whether the kernels' results reach the output matters for a candidate whose outputs
    // are right: a failing one keeps the class observed in its outputs.
    bool outputs_right = true;
    for (size_t i = before; i < v.cases.size(); ++i) outputs_right = outputs_right && v.cases[i].passed();
    std::vector<IntegrityFinding> unused;
    measured["attribution"]["neutralised"] =
        KernelBenchNeutralisation(cand.result.is_object() ? cand.result.value("neutralised", json()) : json(),
                                  completed, outputs_right ? &v.integrity : &unused);
  }
  if (options_.backend == BackendKind::kCuda)
    measured["launches"] = KernelBenchLaunchFindings(
        cand.result.is_object() ? cand.result.value("launches", json()) : json(), completed, &v.integrity);
  if (!v.integrity.empty()) {
    v.failure = FailureClass::kIntegrity;
    v.message = "integrity: " + v.integrity.front().check + ": " + v.integrity.front().detail;
    return false;
  }
  return SetPassed(before, r);
}

bool KernelBenchVerifier::SetPassed(size_t before, RunState& r) {
  Verdict& v = r.v;
  const KernelBenchVerdict& kb = r.kb;
  // The verdict's class is the first failing trial's, preferring one the engine observed
  // (an output it compared) to one the candidate's code said (an exception: its text can
  // claim anything, "out of memory" over a wrong result).
  size_t first_failed = v.cases.size();
  for (size_t i = before; i < v.cases.size(); ++i)
    if (!v.cases[i].passed() &&
        (first_failed == v.cases.size() || (v.cases[first_failed].failure == FailureClass::kRuntimeError &&
                                            v.cases[i].failure != FailureClass::kRuntimeError)))
      first_failed = i;
  for (size_t i = before; i < v.cases.size(); ++i) {
    if (!v.cases[i].passed()) break;  // the level is what passed before the first failure
    if (v.cases[i].set == TrialSet::kFull && v.level < Level::kL2Light) v.level = Level::kL2Light;
  }
  for (size_t i = before; i < v.cases.size(); ++i) {
    if (i == first_failed) {
      v.failure = v.cases[i].failure;
      v.message = std::string(TrialSetName(v.cases[i].set)) + " trial " + v.cases[i].name + " (" +
                  v.cases[i].distribution + "): " + v.cases[i].message;
      const std::string& w = kb.weights;
      if (w == "different_values")
        v.message +=
            "; note: ModelNew's weights differ from Model's: it creates its parameters in a different "
            "order or way, so it gets other random weights under the same seed; create them as Model "
            "does before blaming the kernel";
      return false;
    }
  }
  return true;
}

bool KernelBenchVerifier::RunSet(const std::vector<KernelBenchTrial>& set, SetKind kind, LiveWorker reference,
                                 LiveWorker candidate, RunState& r) {
  const size_t before = r.v.cases.size();
  return ConcludeSet(kind, before, JudgeTrials(set, std::move(reference), std::move(candidate), r), r);
}

void KernelBenchVerifier::Begin(const std::string& reference_path, const std::string& candidate_path, RunState& r) {
  r.start_ns = machine_.env().clock().MonotonicNanos();
  Verdict& v = r.v;
  v.backend = options_.backend;
  v.seed = options_.seed;
  v.full_requested = options_.full;
  v.kforge_version = std::string(KforgeVersion());
  v.sandbox = std::string(SandboxModeName(machine_.Sandbox()));
  std::string reference_text = ReadSource(reference_path, "reference");
  std::string candidate_text = ReadSource(candidate_path, "candidate");
  v.task_name = std::filesystem::path(reference_path).stem().string();
  v.task_origin = reference_path;
  v.task_sha256 = Sha256Hex(reference_text);
  v.candidate_path = candidate_path;
  v.candidate_sha256 = Sha256Hex(candidate_text);
  reference_text_ = std::move(reference_text);
  candidate_text_ = std::move(candidate_text);
  python_dir_ = PythonDir(machine_);
  torch_ = FindTorch(machine_);
  KernelBenchVerdict& kb = r.kb;
  kb.procedure = KernelBenchProcedureText(options_.procedure);
  kb.version = KernelBenchProcedureName(options_.procedure);
  kb.policy = KernelBenchPolicyName(options_.policy);
  kb.python = torch_.python;
  kb.torch = torch_.torch_version;
}

KernelBenchVerifier::TrialPlan KernelBenchVerifier::PlanTrials() const {
  // KernelBench's 5 and the certified distributions; --full adds more, and sizes.
  TrialPlan plan;
  for (int i = 0; i < (options_.kernelbench_trials ? kKernelBenchTrials : 0); ++i)
    plan.trials.push_back({"kernelbench_" + std::to_string(i), "kernelbench", 0, i, TrialSet::kLight});
  uint64_t s = options_.seed * 1000003u + 17;
  for (const char* d : kLightDistributions) plan.trials.push_back({d, d, s++, -1, TrialSet::kLight});
  if (options_.full)
    for (const char* d : kFullDistributions) plan.trials.push_back({d, d, s++, -1, TrialSet::kFull});
  plan.sized = {{"sizes_kernelbench", "kernelbench", s++, -1, TrialSet::kFull},
                {"sizes_all_negative", "all_negative", s++, -1, TrialSet::kFull}};
  return plan;
}

Verdict KernelBenchVerifier::Run(const std::string& reference_path, const std::string& candidate_path) {
  RunState r;
  Begin(reference_path, candidate_path, r);
  Verdict& v = r.v;
  KernelBenchVerdict& kb = r.kb;
  json& measured = kb.measurements;

  // L0: the files' shape and the wrapper's integrity, read without running either.
  json check = Check(reference_path, candidate_path);
  const json& rc = check["reference"];
  if (!rc.is_object() || !rc.value("ok", false))
    throw UsageError(reference_path + " is not a KernelBench reference: " +
                     (rc.is_object() ? JsonString(rc, "problem") : std::string("the check wrote nothing")));
  const json& cc = check["candidate"];
  if (!cc.is_object() || !cc.value("ok", false)) {
    v.failure = FailureClass::kBuildError;
    v.message = cc.is_object() ? JsonString(cc, "problem") : "the candidate could not be analysed";
    return Finish(r);
  }
  CandidateExtensions extensions = ReadCandidate(rc, cc, r);
  if (!r.static_findings.empty() && (!options_.kernelbench_trials || !kb.not_given.empty())) return Finish(r);
  v.level = Level::kL0Static;

  const TrialPlan plan = PlanTrials();
  const std::vector<KernelBenchTrial>&trials = plan.trials, &sized = plan.sized;
  json constants = rc.value("constants", json::object());
  reference_inputs_ = JsonString(rc, "inputs_source");
  if (reference_inputs_.empty())
    throw EnvironmentError("kforge's check of the reference gave no source for the candidate's inputs");
  // The reference needs nothing of the candidate's: its worker runs while the extensions
  // build (only reads what Check set; the builds write extensions_, which it does not read).
  // Its first trial's output sizes go to the candidate's worker (the blocks it poisons).
  // Outputs handed over in GPU memory are judged there: the judge starts (and initialises
  // CUDA) before the workers, so that a judge that cannot start leaves nothing running.
  std::unique_ptr<GpuJudge> gpu_judge;
  if (options_.backend == BackendKind::kCuda && options_.device_output_bytes >= 0)
    gpu_judge = std::make_unique<GpuJudge>(machine_);
  r.gpu_judge = gpu_judge.get();
  std::promise<std::vector<int64_t>> reference_sizes;
  std::future<std::vector<int64_t>> first_sizes = reference_sizes.get_future();
  std::once_flag sizes_once;
  auto offer_sizes = [&](std::vector<int64_t> nbytes) {
    std::call_once(sizes_once, [&] { reference_sizes.set_value(std::move(nbytes)); });
  };
  // Kept on the CPU only: a GPU reference's outputs are judged in GPU memory (and depend on
  // the device), so GPU verdicts run their reference each time.
  if (options_.backend == BackendKind::kCpu)
    r.references.emplace((options_.cache_dir.empty() ? machine_.config().cache_dir : options_.cache_dir) +
                         "/kernelbench-reference");
  LiveWorker early_reference = StartReference(
      trials, json::object(), "trials", r,
      [&](const json& progress) {
        std::vector<int64_t> nbytes;
        if (FirstOutputSizes(progress, &nbytes)) offer_sizes(nbytes);
      },
      [&] { offer_sizes({}); });
  // So does the candidate's: it imports torch and starts CUDA while the extensions build,
  // then waits for them (DeliverExtensions) before it imports the candidate.
  WorkerRun early = NewWorker(WorkerRole::kCandidate, trials, json::object(), json(), true);
  ConfinedProgram* early_program = early.program.get();
  LiveWorker early_candidate = Start(std::move(early), nullptr, nullptr, early_reference.feed);
  // Leaving before their trials are judged (a build that fails, a cancellation) ends both:
  // paced, they would wait for a judge that never comes.
  struct AbandonOnExit {
    std::shared_ptr<WorkerFeed> reference, candidate;
    ~AbandonOnExit() {
      reference->Abandon();
      candidate->Abandon();
    }
  } abandon_early{early_reference.feed, early_candidate.feed};
  // However the build ends (a failure, cancellation, an error), the waiting worker is told
  // (before early_candidate's destructor waits for it).
  struct Undelivered {
    KernelBenchVerifier* self;
    ConfinedProgram* program;
    bool done = false;
    ~Undelivered() {
      if (done) return;
      try {
        self->DeliverExtensions(program, false);
      } catch (const std::exception&) {  // the worker's own deadline ends it
      }
    }
  } undelivered{this, early_program};

  // L1: every extension built before any candidate code runs.
  if (!BuildExtensions(extensions, r)) return Finish(r);
  v.level = Level::kL1Compile;
  DeliverExtensions(early_program, true);
  undelivered.done = true;
  DeliverPoisonSizes(early_program, first_sizes.get());

  // L2: one reference and one candidate process for the light set (and with --full, the full
  // set's distributions), judged in order; then, with --full, the odd sizes.
  // The candidate's worker runs beside the reference's: all it takes from it are the sizes of
  // the reference's first outputs (the blocks it poisons), relayed with the extensions.
  if (!RunSet(trials, SetKind::kTrials, std::move(early_reference), std::move(early_candidate), r) ||
      !r.static_findings.empty())
    return Finish(r);
  v.level = Level::kL2Light;
  if (options_.full) {
    json odd = OddSizes(constants);
    if (!odd.empty()) {
      v.random_shapes.push_back({});
      for (auto& [name, value] : odd.items()) v.random_shapes.back()[name] = value.get<int64_t>();
      LiveWorker reference = StartReference(sized, odd, "sizes", r);
      std::shared_ptr<const WorkerFeed> pace = reference.feed;
      if (!RunSet(sized, SetKind::kSizes, std::move(reference),
                  Start(NewWorker(WorkerRole::kCandidate, sized, odd, json(), false), nullptr, nullptr, pace), r))
        return Finish(r);
    }
    v.level = Level::kL2Full;
  }
  v.passed = true;
  if (options_.timing_trials > 0) measured["timing"] = Timing();  // only a certified candidate is timed
  return Finish(r);
}

}  // namespace kforge::kernelbench_internal

namespace kforge {

using kernelbench_internal::KernelBenchVerifier;

KernelBenchOptions KernelBenchOptionsFrom(const VerifyOptions& options) {
  KernelBenchOptions kb;
  kb.backend = options.backend;
  kb.full = options.full;
  kb.kernelbench_trials = options.kernelbench_trials;
  kb.policy = options.kernelbench_policy;
  kb.procedure = options.kernelbench_procedure;
  kb.seed = options.seed.value();
  kb.call_timeout_ms = options.case_timeout_ms;
  kb.cache_dir = options.cache_dir;
  kb.reuse_reference = options.reuse_reference;
  kb.limits = options.limits;
  kb.cancel = options.cancel;
  return kb;
}

bool IsKernelBenchFile(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".py") == 0;
}

Verdict VerifyKernelBench(Machine& machine, const std::string& reference_path, const std::string& candidate_path,
                          const KernelBenchOptions& options) {
  KernelBenchVerifier verifier(machine, options);
  return verifier.Run(reference_path, candidate_path);
}

}  // namespace kforge
