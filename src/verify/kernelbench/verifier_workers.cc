#include "verify/kernelbench/verifier_internal.h"

namespace kforge::kernelbench_internal {

std::vector<std::string> WorkerEnv(bool gpu) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                  "HOME=.",
                                  "PYTHONDONTWRITEBYTECODE=1",
                                  "PYTHONHASHSEED=0",
                                  "CUDA_HOME=/usr/local/cuda",
                                  "OMP_NUM_THREADS=2",
                                  "OMP_WAIT_POLICY=PASSIVE",
                                  "TRITON_CACHE_DIR=triton-cache",
                                  "TORCH_EXTENSIONS_DIR=torch-extensions",
                                  "LC_ALL=C.UTF-8"};
  // Fresh heap memory is filled with 0x7f bytes (3.4e38 as float32): an output left unwritten
  // (torch.empty returned as is) cannot pass by finding a right answer in recycled memory.
  if (!gpu) env.push_back("GLIBC_TUNABLES=glibc.malloc.perturb=128:glibc.malloc.mmap_threshold=33554432");
  return env;
}

std::vector<std::string> WorkerArgv(const std::string& python) { return {python, "-I", kWorkerScript, kJobFile}; }

void ProvideWorkerScripts(ConfinedProgram* p, const std::string& python_dir) {
  p->Provide(python_dir + "/eval_utils.py", "eval_utils.py");
  p->Provide(python_dir + "/kforge_torch_worker.py", "run_and_check.py");
}

const char* WorkerStart(const WorkerRun& run) {
  if (!run.program) return "none";
  return run.warm ? "warm" : "started";
}

/// How many bytes of not-yet-judged outputs a worker may leave on disk before it waits for
/// the judge: an eighth of the free space where they go (two workers share it), from 256 MiB
/// to 16 GiB. Trials of small outputs never wait; a worker always has one trial's outputs on
/// disk if it needs to, so at KernelBench's 6.4 GB it writes one trial ahead of the judge.
int64_t PaceBytes(const std::string& dir) {
  std::error_code ec;
  auto space = std::filesystem::space(dir, ec);
  int64_t eighth = ec ? 0 : static_cast<int64_t>(space.available / 8);
  return std::clamp<int64_t>(eighth, int64_t{256} << 20, int64_t{16} << 30);
}

WorkerRun KernelBenchVerifier::Worker(WorkerRole role, const std::vector<KernelBenchTrial>& trials,
                                      const json& constants, const json& timing) {
  WorkerRun run = NewWorker(role, trials, constants, timing, false);
  RunWorker(&run);
  return run;
}

json KernelBenchVerifier::ProvideExtensions(ConfinedProgram* p) {
  json extensions = json::object();
  for (auto& [key, ext] : extensions_.items()) {
    json e = ext;
    e["path"] = p->Provide(ext["path"].get<std::string>(), "ext_" + key.substr(0, 16) + ".so");
    extensions[key] = e;
  }
  return extensions;
}

void KernelBenchVerifier::DeliverExtensions(ConfinedProgram* p, bool built) {
  json extensions = ProvideExtensions(p);
  // Written whole (renamed into place): the worker reads it as soon as it exists.
  p->Write(kBuildWordFile,
           built ? json{{"extensions", extensions}, {"poison_file", kSizesFile}}.dump() : json{{"abort", true}}.dump());
}

void KernelBenchVerifier::DeliverPoisonSizes(ConfinedProgram* p, const std::vector<int64_t>& poison_nbytes) {
  p->Write(kSizesFile, json{{"poison_nbytes", poison_nbytes}}.dump());
}

WorkerRun KernelBenchVerifier::NewWorker(WorkerRole role, const std::vector<KernelBenchTrial>& trials,
                                         const json& constants, const json& timing, bool extensions_later) {
  WorkerRun run;
  run.role = role;
  run.timeout_ms = options_.worker_timeout_ms;
  bool gpu = options_.backend == BackendKind::kCuda;
  WarmWorker warm;
  if (options_.warm != nullptr)
    warm = options_.warm->Take(WarmWorkerSpec{gpu, torch_.python, python_dir_, options_.limits});
  run.warm = warm.program != nullptr;
  run.program = run.warm ? std::move(warm.program) : std::make_unique<ConfinedProgram>(machine_, options_.limits, gpu);
  ConfinedProgram* p = run.program.get();
  Prepare(p, run.role == WorkerRole::kCandidate);
  MakeDirs(p->ScratchPath("out"));  // before PaceBytes asks how much room it has
  json job = {{"role", WorkerRoleName(role)},
              {"reference", kReferenceFile},
              {"device", gpu ? "cuda" : "cpu"},
              {"constants", constants},
              {"kernelbench_trials", kKernelBenchTrials},
              {"out", "out"},
              {"extensions", json::object()},
              {"trials", json::array()}};
  if (!timing.is_null()) job["timing"] = timing;
  if (gpu && options_.device_output_bytes >= 0 && timing.is_null()) {
    ScopedFd ours = std::move(warm.exports), theirs;
    if (!run.warm) {
      StreamSocketPair(&ours, &theirs);
      p->PassFd(std::move(theirs), kExportsFd);
    }
    run.exports = std::make_unique<ExportInbox>(std::move(ours), machine_.env().clock());
    job["output_socket"] = kExportsFd;
    job["device_output_bytes"] = options_.device_output_bytes;
  }
  job["pace_bytes"] = PaceBytes(p->ScratchPath("out"));  // the judge deletes each trial's outputs (Start)
  // The candidate's GPU work is accounted (the worker's profiler pass) with its trials.
  job["launches"] = gpu && run.role == WorkerRole::kCandidate && timing.is_null();
  // At the file's own sizes, once: the first trial's forward again with the candidate's
  // kernels neutralised (KernelBenchNeutralisation judges it).
  job["neutralise"] = run.role == WorkerRole::kCandidate && timing.is_null() && constants.empty();
  if (run.role == WorkerRole::kCandidate) {
    job["candidate"] = kCandidateFile;
    if (extensions_later) {
      job["extensions"] = nullptr;
      job["extensions_file"] = kBuildWordFile;
      run.timeout_ms += kBuildAllowanceMs;  // the build's time is in the worker's now
    } else {
      job["extensions"] = ProvideExtensions(p);
    }
  }
  for (const auto& t : trials) {
    json jt = {{"name", t.name}, {"distribution", t.distribution}, {"seed", t.seed}};
    if (t.kernelbench_index >= 0) jt["kernelbench_index"] = t.kernelbench_index;
    job["trials"].push_back(jt);
  }
  p->Write(kJobFile, job.dump());
  if (run.warm) warm.Go();  // the job is in place: the worker reads it now
  return run;
}

void KernelBenchVerifier::RunWorker(WorkerRun* run, const std::function<void(const json&)>& on_progress,
                                    WorkerFeed* feed, const WorkerFeed* reference) {
  ConfinedProgram* p = run->program.get();
  bool gpu = options_.backend == BackendKind::kCuda;
  Clock& clock = machine_.env().clock();
  int64_t start = clock.MonotonicNanos();
  // Deadlines by stage, from the progress the worker writes (WorkerProgress): generous while
  // torch imports and for the reference; for the candidate's import and each of its trials,
  // 10 s plus the per-call limit (and, in a trial, twice the reference's time on it). The
  // whole run's limit stays absolute, whatever the progress file says.
  WorkerAllowances allowances;
  allowances.candidate = run->role == WorkerRole::kCandidate;
  allowances.call_ms = options_.call_timeout_ms;
  allowances.build_ms = kBuildAllowanceMs;
  allowances.timing_calls = options_.timing_warmup + options_.timing_trials;
  allowances.compile_ms = kCompiledTimingAllowanceMs;
  WorkerProgress progress(allowances);
  const std::string scratch = p->ScratchPath("");
  auto keep_going = [&]() {
    if (feed != nullptr && feed->abandoned()) return false;
    json r = ReadJsonFile(scratch, "out/result.json");
    const int64_t now = clock.MonotonicNanos();
    const size_t begun = r.is_object() && r.contains("trials") && r["trials"].is_array() ? r["trials"].size() : 0;
    const bool judge_behind = WaitsForTheJudge(r, feed);  // an earlier trial is unjudged
    // The launch accounting draws get_inputs() as the first KernelBench trial did.
    const int64_t reference_ms =
        allowances.candidate && reference != nullptr ? reference->TrialMillis(begun > 0 ? begun - 1 : 0, now) : 0;
    // The build's word (DeliverExtensions) ends a wait for it, whatever the worker says.
    if (progress.stage() == WorkerStage::kWaitBuild && FileExists(p->ScratchPath(kBuildWordFile)))
      progress.BuildDelivered(now);
    switch (progress.Observe(r, now, judge_behind, reference_ms)) {
      case WorkerProgress::Step::kGoOn:
        break;
      case WorkerProgress::Step::kDone:  // sealed: the worker waits to be ended, exit hooks never run
        if (on_progress) on_progress(progress.sealed());
        if (feed != nullptr) feed->Offer(progress.sealed(), now);
        return false;
      case WorkerProgress::Step::kOverTime:
      case WorkerProgress::Step::kWentBack:
        return false;
    }
    if (on_progress) on_progress(r);
    if (feed != nullptr) feed->Offer(r, now);
    return true;
  };
  run->status = p->started() ? p->Await(run->timeout_ms, keep_going)
                             : p->Run(WorkerArgv(torch_.python), WorkerEnv(gpu), run->timeout_ms, keep_going);
  run->seconds = (clock.MonotonicNanos() - start) / 1e9;
  if (run->warm && progress.sealed().is_null() && progress.stage() <= WorkerStage::kWaitJob &&
      !(feed != nullptr && feed->abandoned()))
    throw EnvironmentError("kforge's warm " + std::string(WorkerRoleName(run->role)) +
                           " worker ended before it took its job (" + run->status.Describe() + "): " +
                           UntrustedText(p->OutputTail(1000)) + " — the verdict is not the candidate's; ask again");
  run->violation = progress.violation();
  if (!progress.sealed().is_null()) {
    run->result = progress.sealed();
    run->status = ExitStatus{};  // ended by the engine once it had the sealed report
  } else {
    // It ended (or was ended) before it said it was done: what it left is read for the
    // error it names, and is never a finished result, whatever it claims.
    run->result = ReadJsonFile(p->ScratchPath(""), "out/result.json");
    if (run->result.is_object()) {
      run->result["ok"] = false;
      if (JsonString(run->result, "stage") == "done") run->result["stage"] = "exit";
    }
  }
  run->output = UntrustedText(p->OutputTail(4000));
  run->layers = p->layers();
  run->escapes = p->escapes();
  run->out_dir = p->ScratchPath("out");
}

KernelBenchVerifier::LiveWorker KernelBenchVerifier::Start(WorkerRun run, std::function<void(const json&)> on_progress,
                                                           std::function<void()> on_end,
                                                           std::shared_ptr<const WorkerFeed> reference) {
  LiveWorker live;
  live.feed = std::make_shared<WorkerFeed>();
  live.out_dir = run.program->ScratchPath("out");
  live.exports = std::move(run.exports);
  live.run = std::async(std::launch::async,
                        [this, run = std::move(run), feed = live.feed, on_progress = std::move(on_progress),
                         on_end = std::move(on_end), reference = std::move(reference)]() mutable {
                          try {
                            RunWorker(&run, on_progress, feed.get(), reference.get());
                          } catch (...) {  // the judge and `on_end` hear of the end, whatever it was
                            feed->Finish(nullptr);
                            if (on_end) on_end();
                            throw;
                          }
                          feed->Finish(run.result);
                          if (on_end) on_end();
                          return std::move(run);
                        });
  return live;
}

namespace {

/// What tells this machine's CPU apart from another's, for the store's keys: torch's CPU
/// kernels pick their code by the instruction set (a cache shared over NFS between unlike
/// nodes must not mix their references).
std::string ReadCpuIdentity() {
  std::string text, why;
  if (!ReadFileBeneath("/proc", "cpuinfo", size_t{4} << 20, &text, &why)) return "unknown";
  std::string model, flags;
  size_t at = 0;
  while (at < text.size() && (model.empty() || flags.empty())) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (model.empty() && line.rfind("model name", 0) == 0) model = line;
    if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) flags = line;
  }
  return Sha256Hex(model + "\n" + flags).substr(0, 16);
}

/// Read once a process: the CPU does not change under it.
const std::string& CpuIdentity() {
  static const std::string identity = ReadCpuIdentity();
  return identity;
}

/// Which file `path` is: where it resolves, its size and its last change (a rebuilt package
/// of the same version is another file).
std::string FileIdentity(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) return "missing";
  const auto size = std::filesystem::file_size(real, ec);
  const auto changed = std::filesystem::last_write_time(real, ec).time_since_epoch().count();
  return fmt::format("{}:{}:{}", real.string(), ec ? 0 : size, ec ? 0 : changed);
}

std::string FileSha256(const std::string& path) {
  std::string text, error;
  return TryReadFile(path, &text, &error) ? Sha256Hex(text) : "unreadable: " + error;
}

}  // namespace

json KernelBenchVerifier::ReferenceKeyParts(const std::vector<KernelBenchTrial>& trials, const json& constants,
                                            const RunState& r) const {
  json planned = json::array();
  for (const auto& t : trials)
    planned.push_back({t.name, t.distribution, t.seed, t.kernelbench_index, static_cast<int>(t.set)});
  return {{"reference_sha256", r.v.task_sha256},
          {"trials", planned},
          {"constants", constants},
          {"kernelbench_trials", kKernelBenchTrials},
          {"device", options_.backend == BackendKind::kCuda ? "cuda" : "cpu"},
          {"cpu", CpuIdentity()},
          {"worker", FileSha256(python_dir_ + "/kforge_torch_worker.py")},
          {"eval_utils", FileSha256(python_dir_ + "/eval_utils.py")},
          {"python", FileIdentity(torch_.python)},
          {"torch", torch_.torch_version},
          {"torch_library",
           [&] {
             json libs = json::array();
             for (const std::string& dir : torch_.library_paths)
               for (const char* lib : {"libtorch_cpu.so", "libc10.so"}) libs.push_back(FileIdentity(dir + "/" + lib));
             return libs;
           }()},
          {"blas",  // Debian's alternatives choose the BLAS torch's CPU kernels call
           {FileIdentity("/usr/lib/x86_64-linux-gnu/libblas.so.3"),
            FileIdentity("/usr/lib/aarch64-linux-gnu/libblas.so.3")}},
          {"kforge", std::string(KforgeVersion())}};
}

KernelBenchVerifier::LiveWorker KernelBenchVerifier::StartReference(const std::vector<KernelBenchTrial>& trials,
                                                                    const json& constants, const char* set_name,
                                                                    RunState& r,
                                                                    std::function<void(const json&)> on_progress,
                                                                    std::function<void()> on_end) {
  json& said = r.kb.measurements["reference_reuse"];
  if (!r.references) {
    said[set_name] = "not kept on the GPU (its outputs are judged in GPU memory)";
    return Start(NewWorker(WorkerRole::kReference, trials, constants, json(), false), std::move(on_progress),
                 std::move(on_end));
  }
  const json key_parts = ReferenceKeyParts(trials, constants, r);
  std::optional<StoredReference> found;
  if (options_.reuse_reference) found = r.references->Find(key_parts, machine_.config().temp_dir);
  if (found) {
    said[set_name] = "reused";
    LiveWorker live;
    live.stored = std::make_shared<StoredReference>(std::move(*found));
    live.feed = std::make_shared<WorkerFeed>();
    live.feed->Replay(live.stored->result, live.stored->trial_ms);
    live.out_dir = live.stored->dir->path();
    WorkerRun run;
    run.role = WorkerRole::kReference;
    run.result = live.stored->result;
    run.out_dir = live.out_dir;
    std::promise<WorkerRun> ran;
    ran.set_value(std::move(run));
    live.run = ran.get_future();
    if (on_progress) on_progress(live.stored->result);
    if (on_end) on_end();
    return live;
  }
  // Run again on purpose (--fresh-reference), it replaces what was kept: a way to mend an
  // entry that should not stand.
  said[set_name] = options_.reuse_reference ? "ran" : "ran (--fresh-reference)";
  LiveWorker live = Start(NewWorker(WorkerRole::kReference, trials, constants, json(), false), std::move(on_progress),
                          std::move(on_end));
  live.recording = r.references->Record(key_parts, /*replace=*/!options_.reuse_reference);
  return live;
}

namespace {

/// One timed worker's statistics as the verdict carries them, or none (with why) when they
/// are not a timing of `trials` calls on `clock`: a worker's figures are its own report.
std::optional<json> TimingStats(const json& t, int trials, const std::string& clock, std::string* why) {
  if (!t.is_object() || !(JsonNumber(t, "mean_ms") > 0)) {
    *why = "no timing in its report";
    return std::nullopt;
  }
  json stats = json::object();
  for (const char* k : {"mean_ms", "std_ms", "median_ms", "min_ms", "max_ms"}) stats[k] = JsonNumber(t, k);
  stats["trials"] = static_cast<int64_t>(JsonNumber(t, "trials"));
  stats["clock"] = CutText(JsonString(t, "clock"), 32);
  const double lo = stats["min_ms"], hi = stats["max_ms"], mean = stats["mean_ms"], median = stats["median_ms"];
  const bool consistent = std::isfinite(hi) && lo > 0 && lo <= mean && mean <= hi && lo <= median && median <= hi &&
                          std::isfinite(stats["std_ms"].get<double>());
  if (!consistent || stats["trials"] != trials || stats["clock"] != clock) {
    *why = fmt::format(
        "its report is not a timing of {} calls on {} (min {} mean {} median {} max {} ms, {} trials, {})", trials,
        clock, lo, mean, median, hi, stats["trials"].get<int64_t>(), stats["clock"].get<std::string>());
    return std::nullopt;
  }
  return stats;
}

/// Why the worker has no torch.compile timing: torch's version has none, or compiling failed.
std::string CompiledTimingProblem(const json& c) {
  std::string why;
  if (c.is_object()) why = JsonString(c, c.contains("unavailable") ? "unavailable" : "error");
  return why.empty() ? "the reference's worker reported no torch.compile timing" : CutText(why, 2000);
}

}  // namespace

json KernelBenchVerifier::Timing() {
  const json spec = {{"warmup", options_.timing_warmup},
                     {"trials", options_.timing_trials},
                     {"discard_first", 1},
                     {"compiled", options_.timing_compiled}};
  json out = {
      {"procedure", "KernelBench main (time_execution_with_cuda_event): " + std::to_string(options_.timing_warmup) +
                        " warm-up calls, " + std::to_string(options_.timing_trials) +
                        " timed after one discarded, CUDA events, L2 thrashed (256 MB) before each call, each on fresh "
                        "copies of its inputs; on the CPU perf_counter. Speedups are of the means, as KernelBench "
                        "scores them"}};
  const std::string clock = options_.backend == BackendKind::kCuda ? "cuda_event" : "perf_counter";
  for (WorkerRole role : {WorkerRole::kReference, WorkerRole::kCandidate}) {
    const char* name = WorkerRoleName(role);
    WorkerRun run = Worker(role, {}, json::object(), spec);
    const json none;
    const bool sealed = run.result.is_object() && run.result.contains("ok") && run.result["ok"] == true;
    // The candidate's figures count only from its sealed report. The reference's eager ones
    // also when torch.compile overran after them (its scratch is out of the candidate's reach).
    const bool compile_overran =
        role == WorkerRole::kReference && !sealed && JsonString(run.result, "stage") == "timing_compiled";
    std::string why;
    std::optional<json> stats;
    if (sealed || compile_overran)
      stats =
          TimingStats(run.result.contains("timing") ? run.result["timing"] : none, options_.timing_trials, clock, &why);
    if (!stats) {
      if (why.empty()) why = WorkerProblem(run);
      out["error"] = std::string("the ") + name + " could not be timed" + (why.empty() ? "" : ": " + why);
      return out;
    }
    out[name] = *stats;
    if (role == WorkerRole::kReference && options_.timing_compiled) {
      // torch.compile's baseline: timed, or why not (an older torch, a model inductor refuses).
      const json& c = sealed && run.result.contains("timing_compiled") ? run.result["timing_compiled"] : none;
      std::string compiled_why;
      if (std::optional<json> compiled = TimingStats(c, options_.timing_trials, clock, &compiled_why))
        out["reference_compiled"] = *compiled;
      else
        out["compiled_error"] = compile_overran ? "torch.compile of the reference did not finish within its " +
                                                      std::to_string(kCompiledTimingAllowanceMs / 1000) + " s"
                                                : CompiledTimingProblem(c);
    }
  }
  const double candidate_ms = out["candidate"]["mean_ms"].get<double>();
  out["speedup"] = out["reference"]["mean_ms"].get<double>() / candidate_ms;
  if (out.contains("reference_compiled"))
    out["speedup_over_compiled"] = out["reference_compiled"]["mean_ms"].get<double>() / candidate_ms;
  return out;
}

}  // namespace kforge::kernelbench_internal
