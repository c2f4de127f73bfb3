#include "verify/kernelbench.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "core/cancel.h"
#include "core/clock.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/text.h"
#include "exec/confined_program.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "verify/compare.h"
#include "verify/kernelbench_extensions.h"
#include "verify/static_checks.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr int kKernelBenchTrials = 5;
constexpr int64_t kMaxElements = int64_t{1} << 31;  ///< per output, as read back from a worker
/// How long a candidate's worker may wait for its extensions to build (the engine's builds
/// have their own limits; it always says when they are done).
constexpr int64_t kBuildAllowanceMs = 30 * 60 * 1000;
// Distributions of the certified trials beyond KernelBench's own (python/kforge_torch_worker.py).
const char* const kLightDistributions[] = {"normal", "all_negative", "negative_offset"};
const char* const kFullDistributions[] = {"uniform", "large_magnitude", "large_offset", "small_magnitude",
                                          "signed_rows"};

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

/// A JSON document a confined process wrote, or null when it wrote none that parses.
json ReadJson(const std::string& path) {
  std::string text, error;
  if (!TryReadFile(path, &text, &error) || text.size() > (64u << 20)) return nullptr;
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? UntrustedText(it->get<std::string>()) : "";
}

/// A number the worker reported, or 0 when it is missing or not a number (worker output is
/// the candidate's process's: never trusted to have the right types).
double Num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

/// A flag the worker reported: true only when it is the boolean true.
bool IsTrue(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

/// The last few lines of a Python traceback: where it failed and why.
std::string TracebackTail(const std::string& text, int lines = 4) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t begin = end + 1;
  for (int i = 0; i < lines && begin > 0; ++i) {
    size_t nl = text.rfind('\n', begin - 1);
    begin = nl == std::string::npos ? 0 : nl;
    if (nl == std::string::npos) break;
  }
  if (begin < text.size() && text[begin] == '\n') ++begin;
  return text.substr(begin, end + 1 - begin);
}

struct Tensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::string bytes;
  int64_t elements() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

/// Reads one output a worker described; "" or why it cannot be used.
std::string LoadTensor(const std::string& dir, const json& d, Tensor* t) {
  if (!d.is_object()) return "an output description is not an object";
  std::string file = Str(d, "file"), dtype = Str(d, "dtype");
  if (file.empty() || file.size() > 64 ||
      file.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") != std::string::npos ||
      file.find("..") != std::string::npos)
    return "an output names an unexpected file";
  if (!TryParseDType(dtype, &t->dtype)) return "an output has dtype '" + dtype + "', which kforge does not compare";
  auto shape = d.find("shape");
  if (shape == d.end() || !shape->is_array() || shape->size() > 8) return "an output has no usable shape";
  t->shape.clear();
  int64_t n = 1;
  for (const auto& v : *shape) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxElements)
      return "an output has a bad dimension";
    t->shape.push_back(v.get<int64_t>());
    n *= std::max<int64_t>(1, t->shape.back());
    if (n > kMaxElements) return "an output has more elements than kforge compares";
  }
  std::string error;
  std::string path = dir + "/" + file;
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec || static_cast<int64_t>(size) != t->elements() * static_cast<int64_t>(DTypeSize(t->dtype)))
    return "an output file does not hold the tensor its description names";
  if (!TryReadFile(path, &t->bytes, &error)) return "an output file cannot be read: " + error;
  return "";
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = LoadAsDouble(t.bytes.data(), t.dtype, i);
  return v;
}

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// KernelBench's tolerance for torch.allclose (atol = rtol), by output dtype.
double KernelBenchTolerance(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16 ? 1e-2 : 1e-4; }

/// The certified tolerance against the float64 reference, by output dtype.
Tolerance CertifiedTolerance(DType t) {
  switch (t) {
    case DType::kFloat16:
      return {1e-3, 1e-3, 0, ""};
    case DType::kBFloat16:
      return {8e-3, 8e-3, 0, ""};
    case DType::kFloat64:
      return {1e-10, 1e-10, 0, ""};
    default:
      return {1e-5, 1e-4, 0, ""};
  }
}

struct Trial {
  std::string name, distribution;
  uint64_t seed = 0;
  int kernelbench_index = -1;  ///< >= 0: one of KernelBench's own trials
  TrialSet set = TrialSet::kLight;
};

struct WorkerRun {
  std::string role;  ///< "reference" or "candidate"
  int64_t timeout_ms = 0;
  json result;  ///< null when the worker wrote none
  ExitStatus status;
  std::string output;
  std::vector<std::string> layers;
  EscapeScan escapes;
  std::string out_dir;  ///< host path of its outputs
  std::unique_ptr<ConfinedProgram> program;
  double seconds = 0;
};

class KernelBenchVerifier {
 public:
  KernelBenchVerifier(Machine& machine, const KernelBenchOptions& options) : machine_(machine), options_(options) {
    options_.limits.address_space_bytes = 0;  // Python with torch maps far more than it uses
    // Outputs go back to the engine as files (a KernelBench level-1 tensor is 1 GiB or more).
    options_.limits.file_size_bytes = std::max<int64_t>(options_.limits.file_size_bytes, int64_t{16} << 30);
  }

  Verdict Run(const std::string& reference_path, const std::string& candidate_path);

 private:
  json Check(const std::string& reference, const std::string& candidate);
  WorkerRun Worker(const char* role, const std::vector<Trial>& trials, const json& constants,
                   const json& timing = json());
  /// A worker's process with its job written, not yet run. With `extensions_later`, the
  /// candidate's worker starts (imports torch, starts CUDA) while its extensions build, and
  /// waits before importing the candidate until DeliverExtensions says what was built.
  WorkerRun NewWorker(const char* role, const std::vector<Trial>& trials, const json& constants, const json& timing,
                      bool extensions_later);
  void RunWorker(WorkerRun* run);
  /// The built extensions (or, when `built` is false, word that there are none to run).
  void DeliverExtensions(ConfinedProgram* p, bool built);
  /// KernelBench's timing of the reference and the candidate, each in its own process.
  json Timing();
  void Judge(const std::vector<Trial>& trials, const WorkerRun& ref, const WorkerRun& cand, Verdict* v);
  /// Copies kforge's Python, the reference and (unless `with_candidate` is false: the
  /// reference's process never sees it) the candidate into the program's scratch.
  ConfinedProgram* Prepare(ConfinedProgram* p, bool with_candidate);

  Machine& machine_;
  KernelBenchOptions options_;
  std::string python_dir_, reference_, candidate_;
  TorchToolchain torch_;
  json extensions_ = json::object();  ///< key -> {path: the built module's host path, binding, functions}
  json kernelbench_trials_ = json::array();
};

ConfinedProgram* KernelBenchVerifier::Prepare(ConfinedProgram* p, bool with_candidate) {
  p->Provide(python_dir_ + "/kforge_kernelbench.py", "kforge_kernelbench.py");
  p->Provide(python_dir_ + "/kforge_check_modelnew.py", "kforge_check_modelnew.py");
  p->Provide(python_dir_ + "/kforge_torch_worker.py", "kforge_torch_worker.py");
  p->Provide(reference_, "reference.py");
  if (with_candidate && !candidate_.empty()) p->Provide(candidate_, "candidate.py");
  return p;
}

std::vector<std::string> WorkerEnv(bool gpu) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                  "HOME=.",
                                  "PYTHONDONTWRITEBYTECODE=1",
                                  "PYTHONHASHSEED=0",
                                  "CUDA_HOME=/usr/local/cuda",
                                  "OMP_NUM_THREADS=2",
                                  "TRITON_CACHE_DIR=triton-cache",
                                  "TORCH_EXTENSIONS_DIR=torch-extensions",
                                  "LC_ALL=C.UTF-8"};
  // Fresh heap memory is filled with 0x7f bytes (3.4e38 as float32): an output left unwritten
  // (torch.empty returned as is) cannot pass by finding a right answer in recycled memory.
  if (!gpu) env.push_back("GLIBC_TUNABLES=glibc.malloc.perturb=128:glibc.malloc.mmap_threshold=33554432");
  return env;
}

json KernelBenchVerifier::Check(const std::string& reference, const std::string& candidate) {
  ConfinedProgram program(machine_, options_.limits, false);
  reference_ = reference;
  candidate_ = candidate;
  Prepare(&program, true);
  std::vector<std::string> argv = {
      torch_.python, "-I",        "kforge/kforge_check_modelnew.py", "--reference", "kforge/reference.py",
      "--out",       "check.json"};
  if (!candidate.empty()) argv.insert(argv.end() - 2, {"--candidate", "kforge/candidate.py"});
  ExitStatus status = program.Run(argv, WorkerEnv(false), 120000);
  json j = ReadJson(program.ScratchPath("check.json"));
  if (!status.ok() || !j.is_object())
    throw EnvironmentError("kforge's static check of the KernelBench files did not finish (" + status.Describe() +
                           "): " + UntrustedText(program.OutputTail(2000)));
  return j;
}

WorkerRun KernelBenchVerifier::Worker(const char* role, const std::vector<Trial>& trials, const json& constants,
                                      const json& timing) {
  WorkerRun run = NewWorker(role, trials, constants, timing, false);
  RunWorker(&run);
  return run;
}

void KernelBenchVerifier::DeliverExtensions(ConfinedProgram* p, bool built) {
  json extensions = json::object();
  for (auto& [key, ext] : extensions_.items()) {
    json e = ext;
    e["path"] = p->Provide(ext["path"].get<std::string>(), "ext_" + key.substr(0, 16) + ".so");
    extensions[key] = e;
  }
  // Written whole (renamed into place): the worker reads it as soon as it exists.
  p->Write("kforge/extensions.json", built ? json{{"extensions", extensions}}.dump() : json{{"abort", true}}.dump());
}

WorkerRun KernelBenchVerifier::NewWorker(const char* role, const std::vector<Trial>& trials, const json& constants,
                                         const json& timing, bool extensions_later) {
  WorkerRun run;
  run.role = role;
  run.timeout_ms = options_.worker_timeout_ms;
  bool gpu = options_.backend == BackendKind::kCuda;
  run.program = std::make_unique<ConfinedProgram>(machine_, options_.limits, gpu);
  ConfinedProgram* p = run.program.get();
  Prepare(p, run.role == "candidate");
  json job = {{"role", role},
              {"reference", "kforge/reference.py"},
              {"device", gpu ? "cuda" : "cpu"},
              {"constants", constants},
              {"kernelbench_trials", kKernelBenchTrials},
              {"out", "out"},
              {"extensions", json::object()},
              {"trials", json::array()}};
  if (!timing.is_null()) job["timing"] = timing;
  // The candidate's GPU work is accounted (the worker's profiler pass) with its trials.
  job["launches"] = gpu && run.role == "candidate" && timing.is_null();
  if (run.role == "candidate") {
    job["candidate"] = "kforge/candidate.py";
    if (extensions_later) {
      job["extensions"] = nullptr;
      job["extensions_file"] = "kforge/extensions.json";
      run.timeout_ms += kBuildAllowanceMs;  // the build's time is in the worker's now
    } else {
      for (auto& [key, ext] : extensions_.items()) {
        json e = ext;
        e["path"] = p->Provide(ext["path"].get<std::string>(), "ext_" + key.substr(0, 16) + ".so");
        job["extensions"][key] = e;
      }
    }
  }
  for (const auto& t : trials) {
    json jt = {{"name", t.name}, {"distribution", t.distribution}, {"seed", t.seed}};
    if (t.kernelbench_index >= 0) jt["kernelbench_index"] = t.kernelbench_index;
    job["trials"].push_back(jt);
  }
  MakeDirs(p->ScratchPath("out"));
  p->Write("job.json", job.dump());
  return run;
}

void KernelBenchVerifier::RunWorker(WorkerRun* run) {
  ConfinedProgram* p = run->program.get();
  bool gpu = options_.backend == BackendKind::kCuda;
  Clock& clock = machine_.env().clock();
  int64_t start = clock.MonotonicNanos();
  // Deadlines by stage, from the progress the worker writes: generous while torch imports
  // and for the reference; for the candidate's import and each of its trials, 10 s plus the
  // per-call limit. The whole run's limit stays absolute, whatever the progress file says.
  const bool is_candidate = run->role == "candidate";
  std::string progress_path = p->ScratchPath("out/result.json");
  std::string last_state;
  int64_t state_since = start;
  auto keep_going = [&]() {
    json r = ReadJson(progress_path);
    std::string stage = r.is_object() ? Str(r, "stage") : "";
    size_t trials_started = r.is_object() && r.contains("trials") && r["trials"].is_array() ? r["trials"].size() : 0;
    std::string state = stage + "/" + std::to_string(trials_started);
    int64_t now = clock.MonotonicNanos();
    if (state != last_state) {
      last_state = state;
      state_since = now;
    }
    bool candidate_code =
        is_candidate && (stage == "load_candidate" || stage == "init" || stage == "trials" || stage == "launches");
    int64_t allowance_ms = candidate_code ? 10000 + 2 * options_.call_timeout_ms : 180000;
    if (stage == "wait_build") allowance_ms = kBuildAllowanceMs;  // the engine ends the wait
    if (is_candidate && stage == "timing")                        // every timed call gets the per-call limit
      allowance_ms = 10000 + (options_.timing_warmup + options_.timing_trials + 1) * options_.call_timeout_ms;
    return (now - state_since) / 1000000 <= allowance_ms;
  };
  run->status = p->Run({torch_.python, "-I", "kforge/kforge_torch_worker.py", "job.json"}, WorkerEnv(gpu),
                       run->timeout_ms, keep_going);
  run->seconds = (clock.MonotonicNanos() - start) / 1e9;
  run->result = ReadJson(p->ScratchPath("out/result.json"));
  run->output = UntrustedText(p->OutputTail(4000));
  run->layers = p->layers();
  run->escapes = p->escapes();
  run->out_dir = p->ScratchPath("out");
}

/// When each stage of a worker began, in seconds from its start (its untrusted report, capped).
json StageTimes(const json& result) {
  json out = json::array();
  if (!result.is_object() || !result.contains("stages") || !result["stages"].is_array()) return out;
  for (const auto& s : result["stages"]) {
    if (out.size() >= 16) break;
    if (s.is_array() && s.size() == 2 && s[0].is_string() && s[1].is_number())
      out.push_back({s[0].get<std::string>().substr(0, 32), s[1].get<double>()});
  }
  return out;
}

void AddCase(Verdict* v, CaseEvidence c) { v->cases.push_back(std::move(c)); }

/// What went wrong in a worker as a whole (it wrote no usable result, or stopped early).
std::string WorkerProblem(const WorkerRun& run, const char* who) {
  if (run.status.kind == ExitStatus::Kind::kTimedOut) {
    std::string where;
    std::string stage = run.result.is_object() ? Str(run.result, "stage") : "";
    if (stage == "load_candidate") where = " while importing the candidate (a hang at import?)";
    if (stage == "init") where = " while constructing the model";
    if (stage == "trials" && run.result.contains("trials") && run.result["trials"].is_array() &&
        !run.result["trials"].empty())
      where = " in trial " + Str(run.result["trials"].back(), "name") + " (a forward that never returns?)";
    return std::string("the ") + who + "'s process timed out" + where;
  }
  if (!run.result.is_object())
    return std::string("the ") + who + "'s process ended (" + run.status.Describe() +
           ") without a result: " + TracebackTail(run.output, 3);
  if (!IsTrue(run.result, "ok") && Str(run.result, "stage") != "trials")
    return std::string("the ") + who + " failed at " + Str(run.result, "stage") + ": " +
           TracebackTail(Str(run.result, "error"), 3);
  return "";
}

json KernelBenchVerifier::Timing() {
  const json spec = {{"warmup", options_.timing_warmup}, {"trials", options_.timing_trials}, {"discard_first", 1}};
  json out = {
      {"procedure", "KernelBench main (time_execution_with_cuda_event): " + std::to_string(options_.timing_warmup) +
                        " warm-up calls, " + std::to_string(options_.timing_trials) +
                        " timed after one discarded, CUDA events, L2 thrashed (256 MB) after each call; on the CPU "
                        "perf_counter"}};
  for (const char* role : {"reference", "candidate"}) {
    WorkerRun run = Worker(role, {}, json::object(), spec);
    const json* t = run.result.is_object() && run.result.contains("timing") ? &run.result["timing"] : nullptr;
    if (t == nullptr || !t->is_object() || !(Num(*t, "mean_ms") > 0)) {
      std::string why = WorkerProblem(run, role);
      out["error"] = std::string("the ") + role + " could not be timed" + (why.empty() ? "" : ": " + why);
      return out;
    }
    json stats = json::object();
    for (const char* k : {"mean_ms", "std_ms", "min_ms", "max_ms"}) stats[k] = Num(*t, k);
    stats["trials"] = static_cast<int64_t>(Num(*t, "trials"));
    stats["clock"] = CutText(Str(*t, "clock"), 32);
    out[role] = stats;
  }
  out["speedup"] = out["reference"]["mean_ms"].get<double>() / out["candidate"]["mean_ms"].get<double>();
  return out;
}

void KernelBenchVerifier::Judge(const std::vector<Trial>& trials, const WorkerRun& ref, const WorkerRun& cand,
                                Verdict* v) {
  const json rt = ref.result.value("trials", json::array());
  const json* ct = cand.result.is_object() && cand.result.contains("trials") && cand.result["trials"].is_array()
                       ? &cand.result["trials"]
                       : nullptr;
  for (size_t i = 0; i < trials.size(); ++i) {
    const Trial& t = trials[i];
    CaseEvidence c;
    c.set = t.set;
    c.name = t.name;
    c.distribution = t.distribution;
    c.seed = t.seed;
    if (cand.program) c.pid = cand.program->pid();  // one worker process runs every trial
    const json& r = i < rt.size() ? rt[i] : json();
    if (!r.is_object() || !IsTrue(r, "ok")) {
      // The reference cannot run these inputs (sizes it does not support): not a trial.
      if (t.set == TrialSet::kFull && t.name.rfind("sizes", 0) == 0) continue;
      throw UsageError("the reference failed on trial " + t.name + ": " + TracebackTail(Str(r, "error"), 3));
    }
    if (r.contains("seed") && r["seed"].is_number_unsigned()) c.seed = r["seed"].get<uint64_t>();
    c.reference_ms = Num(r, "forward_ms");
    const json& k = ct && i < ct->size() ? (*ct)[i] : json();
    auto fail = [&](FailureClass f, std::string message) {
      c.failure = f;
      c.message = std::move(message);
    };
    if (!k.is_object()) {
      fail(cand.status.kind == ExitStatus::Kind::kTimedOut ? FailureClass::kTimeout : FailureClass::kRuntimeError,
           WorkerProblem(cand, "candidate").empty() ? "the candidate's process stopped before this trial"
                                                    : WorkerProblem(cand, "candidate"));
      AddCase(v, std::move(c));
      continue;
    }
    if (k.contains("forward_ms") && k["forward_ms"].is_number()) c.run_ms = k["forward_ms"].get<double>();
    if (!IsTrue(k, "ok")) {
      std::string err = Str(k, "error");
      bool oom = err.find("out of memory") != std::string::npos || err.find("MemoryError") != std::string::npos ||
                 err.find("can't allocate memory") != std::string::npos;
      fail(oom ? FailureClass::kResourceLimit : FailureClass::kRuntimeError, TracebackTail(err, 3));
      AddCase(v, std::move(c));
      continue;
    }
    if (Str(k, "inputs_sha256") != Str(r, "inputs_sha256")) {
      fail(FailureClass::kIntegrity, "the candidate's process drew different inputs than the reference's");
      AddFinding(&v->integrity, "runtime.inputs_differ",
                 "trial " + t.name + ": the inputs in the candidate's process differ from the reference's");
      AddCase(v, std::move(c));
      continue;
    }
    if (k.contains("mutated_inputs") && k["mutated_inputs"].is_array() && !k["mutated_inputs"].empty()) {
      for (const auto& m : k["mutated_inputs"])
        if (m.is_number_integer()) c.mutated_inputs.push_back("input" + std::to_string(m.get<int64_t>()));
      fail(FailureClass::kInputMutated, "the candidate wrote into its inputs");
      AddCase(v, std::move(c));
      continue;
    }
    const json ro = r.value("outputs", json::array());
    const json r64 = r.contains("reference64") ? r["reference64"] : ro;
    if (!ro.is_array() || !r64.is_array() || r64.size() != ro.size())
      throw EnvironmentError("the reference's worker described its outputs inconsistently (trial " + t.name + ")");
    const json& co = k.contains("outputs") ? k["outputs"] : json();
    if (!co.is_array() || co.size() != ro.size()) {
      fail(FailureClass::kWrongResult, "the candidate returned " + std::to_string(co.is_array() ? co.size() : 0) +
                                           " outputs; the reference returns " + std::to_string(ro.size()));
      AddCase(v, std::move(c));
      continue;
    }
    json kb_trial = {{"trial", t.name}, {"seed", c.seed}, {"passed", true}};
    for (size_t o = 0; o < ro.size(); ++o) {
      Tensor ref32, ref64, got;
      std::string problem = LoadTensor(ref.out_dir, ro[o], &ref32);
      if (problem.empty()) problem = LoadTensor(ref.out_dir, r64[o], &ref64);
      if (problem.empty() && ref64.shape != ref32.shape) problem = "its float64 and float32 outputs differ in shape";
      if (!problem.empty()) throw EnvironmentError("the reference's output cannot be read: " + problem);
      problem = LoadTensor(cand.out_dir, co[o], &got);
      std::string name = "output" + std::to_string(o);
      if (problem.empty() && got.shape != ref32.shape)
        problem = name + " has shape " + ShapeText(got.shape) + "; the reference's is " + ShapeText(ref32.shape);
      if (problem.empty() && got.dtype != ref32.dtype)
        problem = name + " is " + std::string(DTypeName(got.dtype)) + "; the reference's is " +
                  std::string(DTypeName(ref32.dtype));
      if (!problem.empty()) {
        fail(FailureClass::kWrongResult, problem);
        kb_trial["passed"] = false;
        kb_trial["issue"] = problem;
        break;
      }
      int64_t unwritten = 0;
      const size_t width = DTypeSize(got.dtype);
      // An element made of one of the poison bytes: 0xff (freed blocks the worker filled) or
      // 0x7f (every fresh heap allocation on the CPU, glibc's malloc perturb).
      for (size_t x = 0; x + width <= got.bytes.size(); x += width) {
        auto first = got.bytes.begin() + static_cast<std::ptrdiff_t>(x);
        unsigned char b0 = static_cast<unsigned char>(*first);
        unwritten +=
            (b0 == 0xff || b0 == 0x7f) && std::all_of(first, first + static_cast<std::ptrdiff_t>(width),
                                                      [&](char b) { return static_cast<unsigned char>(b) == b0; });
      }
      if (unwritten > 0) {
        problem = name + ": " + std::to_string(unwritten) + " of " + std::to_string(got.elements()) +
                  " elements still hold the poison kforge left in memory (0xff or 0x7f bytes: allocated, never "
                  "written)";
        fail(FailureClass::kUnwrittenOutput, problem);
      }
      // Only the float64 reference is held as doubles (CompareOutput takes it so); the output
      // and the float32 reference are read in place: a KernelBench output is often 1 GiB.
      const std::vector<double> e64 = AsDoubles(ref64);
      const size_t n = static_cast<size_t>(got.elements());  // = ref32's = ref64's (checked above)
      // One pass: KernelBench's torch.allclose(ref, new, atol, rtol) (NaN never equal), and how
      // far the float32 reference is from float64 (what the certified comparison allows for).
      double tol = KernelBenchTolerance(got.dtype), max_diff = 0, sum_diff = 0, err32 = 0;
      bool close = true;
      for (size_t x = 0; x < n; ++x) {
        const double gx = LoadAsDouble(got.bytes.data(), got.dtype, x);
        const double ex = LoadAsDouble(ref32.bytes.data(), ref32.dtype, x);
        double d = std::fabs(gx - ex);
        bool ok = (gx == ex) || d <= tol + tol * std::fabs(ex);
        if (std::isnan(gx) || std::isnan(ex)) ok = false;
        close = close && ok;
        if (std::isfinite(d)) {
          max_diff = std::max(max_diff, d);
          sum_diff += d;
        }
        if (std::isfinite(ex) && std::isfinite(e64[x])) err32 = std::max(err32, std::fabs(ex - e64[x]));
      }
      if (!close) kb_trial["passed"] = false;
      kb_trial["max_difference"] = std::max(kb_trial.value("max_difference", 0.0), max_diff);
      kb_trial["avg_difference"] = n == 0 ? 0.0 : sum_diff / static_cast<double>(n);
      // Certified: against float64, scale-aware, allowing what float32's own reference errs by.
      TensorSpec spec{name, got.dtype, {}};
      CompareInput in;
      in.spec = &spec;
      in.shape = got.shape;
      in.got = got.bytes.data();
      in.reference = &e64;
      in.tolerance = CertifiedTolerance(got.dtype);
      in.unavoidable_everywhere = 4 * err32;
      OutputEvidence ev;
      ev.name = name;
      ev.shape = got.shape;
      ev.sha256 = Sha256Hex(got.bytes);
      v->KeepOutput(ev.sha256, got.bytes);
      ev.compare = CompareOutput(in);
      if (!ev.compare.passed() && c.passed())
        fail(ClassifyNumeric(ev.compare), name + ": " + std::to_string(ev.compare.mismatches) + " of " +
                                              std::to_string(ev.compare.elements) +
                                              " elements outside the certified tolerance");
      c.outputs.push_back(std::move(ev));
    }
    if (t.kernelbench_index >= 0) kernelbench_trials_.push_back(kb_trial);
    AddCase(v, std::move(c));
  }
}

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

Verdict KernelBenchVerifier::Run(const std::string& reference_path, const std::string& candidate_path) {
  Clock& clock = machine_.env().clock();
  const int64_t start = clock.MonotonicNanos();
  Verdict v;
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
  python_dir_ = PythonDir(machine_);
  torch_ = FindTorch(machine_);
  json kb = {{"procedure",
              "KernelBench main (eval.py after v0.1): seed 42, 5 trials, torch.allclose atol=rtol=1e-4 "
              "(float32), 1e-2 (float16, bfloat16)"},
             {"python", torch_.python},
             {"torch", torch_.torch_version}};
  auto finish = [&](Verdict& out) -> Verdict {
    kb["trials"] = kernelbench_trials_;
    bool kb_ran = kernelbench_trials_.size() == static_cast<size_t>(kKernelBenchTrials);
    bool kb_pass = kb_ran;
    for (const auto& t : kernelbench_trials_) kb_pass = kb_pass && t.value("passed", false);
    kb["correct"] = kb_pass;
    kb["compiled"] = out.compile.ok;
    out.kernelbench = kb;
    out.total_seconds = (clock.MonotonicNanos() - start) / 1e9;
    return out;
  };

  // L0: the files' shape and the wrapper's integrity, read without running either.
  json check = Check(reference_path, candidate_path);
  const json& rc = check["reference"];
  if (!rc.is_object() || !rc.value("ok", false))
    throw UsageError(reference_path + " is not a KernelBench reference: " +
                     (rc.is_object() ? Str(rc, "problem") : std::string("the check wrote nothing")));
  const json& cc = check["candidate"];
  if (!cc.is_object() || !cc.value("ok", false)) {
    v.failure = FailureClass::kBuildError;
    v.message = cc.is_object() ? Str(cc, "problem") : "the candidate could not be analysed";
    return finish(v);
  }
  for (const auto& f : cc.value("findings", json::array()))
    if (f.is_object()) AddFinding(&v.integrity, Str(f, "check"), Str(f, "detail"), f.value("line", 0));
  CandidateExtensions extensions = ReadCandidateExtensions(cc.value("extensions", json::array()));
  for (const auto& f : extensions.findings) AddFinding(&v.integrity, f.check, f.detail, f.line);
  const std::vector<ExtensionSource>& sources = extensions.sources;
  if (!v.integrity.empty()) {
    v.level = Level::kNone;
    v.failure = FailureClass::kIntegrity;
    v.message = "integrity: " + v.integrity.front().check + ": " + v.integrity.front().detail;
    return finish(v);
  }
  v.level = Level::kL0Static;

  // The trials: KernelBench's 5 and the certified distributions; --full adds more, and sizes.
  std::vector<Trial> trials;
  for (int i = 0; i < kKernelBenchTrials; ++i)
    trials.push_back({"kernelbench_" + std::to_string(i), "kernelbench", 0, i, TrialSet::kLight});
  uint64_t s = options_.seed * 1000003u + 17;
  for (const char* d : kLightDistributions) trials.push_back({d, d, s++, -1, TrialSet::kLight});
  if (options_.full)
    for (const char* d : kFullDistributions) trials.push_back({d, d, s++, -1, TrialSet::kFull});
  json constants = rc.value("constants", json::object());
  std::vector<Trial> sized = {{"sizes_kernelbench", "kernelbench", s++, -1, TrialSet::kFull},
                              {"sizes_all_negative", "all_negative", s++, -1, TrialSet::kFull}};
  // The reference needs nothing of the candidate's: its worker runs while the extensions
  // build (only reads what Check set; the builds write extensions_, which it does not read).
  std::future<WorkerRun> early_reference =
      std::async(std::launch::async, [&] { return Worker("reference", trials, json::object()); });
  // So does the candidate's: it imports torch and starts CUDA while the extensions build,
  // then waits for them (DeliverExtensions) before it imports the candidate.
  WorkerRun early = NewWorker("candidate", trials, json::object(), json(), true);
  ConfinedProgram* early_program = early.program.get();
  std::future<WorkerRun> early_candidate = std::async(std::launch::async, [this, run = std::move(early)]() mutable {
    RunWorker(&run);
    return std::move(run);
  });
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
  CompilerOptions co;
  co.cache_dir = options_.cache_dir;
  co.timeout_ms = 300000;
  co.limits = options_.limits;
  if (options_.backend == BackendKind::kCuda) co.cuda_arch = machine_.Device().arch;
  v.compile.attempted = true;
  v.compile.ok = true;
  v.compile.cached = true;
  v.compile.compiler = "torch extension (" + machine_.HostCompiler().path + ")";
  kb["extensions"] = json::array();
  for (const auto& s : sources) {
    if (options_.cancel && options_.cancel->cancelled()) throw CancelledError(options_.cancel->reason());
    TorchExtension built = CompileTorchExtension(machine_, torch_, s, co);
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
      return finish(v);
    }
    json report = {{"name", s.name},
                   {"binding", ExtensionBindingName(built.binding)},
                   {"cached", r.cached},
                   {"seconds", r.seconds}};
    if (!s.cuda_cu.empty()) {
      report["cuda_split"] = built.split;
      if (!built.split)
        report["cuda_whole_because"] =
            extensions.not_split[s.key].empty() ? "its two halves did not build" : extensions.not_split[s.key];
    }
    kb["extensions"].push_back(report);
    extensions_[s.key] = {
        {"path", r.so_path}, {"binding", ExtensionBindingName(built.binding)}, {"functions", s.functions}};
  }
  v.level = Level::kL1Compile;
  DeliverExtensions(early_program, true);
  undelivered.done = true;

  // L2: one reference and one candidate process for the light set (and with --full, the full
  // set's distributions), judged in order; then, with --full, the odd sizes.
  // The candidate's worker runs beside the reference's (it needs nothing of it: it poisons
  // blocks of the output sizes it learns from the reference on the meta device).
  auto run_set = [&](const std::vector<Trial>& set, std::future<WorkerRun> reference,
                     std::future<WorkerRun> candidate) -> bool {
    if (options_.cancel && options_.cancel->cancelled()) throw CancelledError(options_.cancel->reason());
    WorkerRun ref = reference.get();
    WorkerRun cand = candidate.get();
    v.reference_seconds += ref.seconds;
    if (&set == &trials)
      kb["worker_stages"] = {{"reference", StageTimes(ref.result)}, {"candidate", StageTimes(cand.result)}};
    if (std::string why = WorkerProblem(ref, "reference"); !why.empty()) {
      if (&set == &sized) return true;  // the reference does not take other sizes
      throw UsageError(why);
    }
    v.run_seconds += cand.seconds;
    v.sandbox_layers = cand.layers;
    if (cand.escapes.count > 0)
      AddFinding(&v.integrity, "sandbox.write_outside_scratch",
                 std::to_string(cand.escapes.count) + " paths, first " +
                     (cand.escapes.first.empty() ? std::string("?") : cand.escapes.first.front()));
    if (cand.result.is_object() && cand.result.contains("parameters"))
      kb["weights"] = WeightsCheck(ref.result.value("parameters", json()), cand.result["parameters"]);
    std::string problem = WorkerProblem(cand, "candidate");
    if (!problem.empty()) {
      v.failure =
          cand.status.kind == ExitStatus::Kind::kTimedOut ? FailureClass::kTimeout : FailureClass::kRuntimeError;
      v.message = problem;
      return false;
    }
    size_t before = v.cases.size();
    Judge(set, ref, cand, &v);
    if (cand.result.is_object() && cand.result.contains("launches"))
      kb["launches"] = KernelBenchLaunchFindings(cand.result["launches"], &v.integrity);
    if (!v.integrity.empty()) {
      v.failure = FailureClass::kIntegrity;
      v.message = "integrity: " + v.integrity.front().check + ": " + v.integrity.front().detail;
      return false;
    }
    for (size_t i = before; i < v.cases.size(); ++i) {
      if (v.cases[i].set == TrialSet::kFull && v.level < Level::kL2Light) v.level = Level::kL2Light;
      if (!v.cases[i].passed()) {
        v.failure = v.cases[i].failure;
        v.message = std::string(TrialSetName(v.cases[i].set)) + " trial " + v.cases[i].name + " (" +
                    v.cases[i].distribution + "): " + v.cases[i].message;
        std::string w = kb.value("weights", "");
        if (w == "different_values")
          v.message +=
              "; note: ModelNew's weights differ from Model's: it creates its parameters in a different "
              "order or way, so it gets other random weights under the same seed; create them as Model "
              "does before blaming the kernel";
        return false;
      }
    }
    return true;
  };
  if (!run_set(trials, std::move(early_reference), std::move(early_candidate))) return finish(v);
  v.level = Level::kL2Light;
  if (options_.full) {
    json odd = OddSizes(constants);
    if (!odd.empty()) {
      v.random_shapes.push_back({});
      for (auto& [name, value] : odd.items()) v.random_shapes.back()[name] = value.get<int64_t>();
      if (!run_set(sized, std::async(std::launch::async, [&] { return Worker("reference", sized, odd); }),
                   std::async(std::launch::async, [&] { return Worker("candidate", sized, odd); })))
        return finish(v);
    }
    v.level = Level::kL2Full;
  }
  v.passed = true;
  if (options_.timing_trials > 0) kb["timing"] = Timing();  // only a certified candidate is timed
  return finish(v);
}

}  // namespace

KernelBenchOptions KernelBenchOptionsFrom(const VerifyOptions& options) {
  KernelBenchOptions kb;
  kb.backend = options.backend;
  kb.full = options.full;
  kb.seed = options.seed.value();
  kb.call_timeout_ms = options.case_timeout_ms;
  kb.cache_dir = options.cache_dir;
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
