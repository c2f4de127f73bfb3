#include "verify/bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/clock.h"
#include "core/error.h"
#include "core/expr.h"
#include "core/fs.h"
#include "exec/arena.h"
#include "exec/compiler.h"
#include "exec/sandbox.h"
#include "verify/inputs.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

/// A result this much faster than the roofline floor cannot be right: the kernel skipped
/// work, or the timer missed it.
constexpr double kSuspectFraction = 1.10;

/// The case named `name` among the bench and full cases; by default the first bench case,
/// else the largest full case.
const Case& PickCase(const Task& task, const std::string& name) {
  if (!name.empty()) {
    for (const auto* set : {&task.bench, &task.full})
      for (const auto& c : *set)
        if (c.name == name) return c;
    throw UsageError("task '" + task.name + "' has no bench or full case named '" + name + "'");
  }
  if (!task.bench.empty()) return task.bench.front();
  const Case* best = nullptr;
  int64_t best_elems = -1;
  for (const auto& c : task.full) {
    int64_t elems = 0;
    for (const auto& t : task.inputs) elems += NumElements(ResolveShape(t, c.params));
    if (elems > best_elems) best_elems = elems, best = &c;
  }
  if (best == nullptr) throw UsageError("task '" + task.name + "' has no cases to time");
  return *best;
}

class Timer {
 public:
  Timer(const Task& task, const Case& kase, uint64_t seed, const BenchOptions& options, const CudaDevice& device)
      : task_(task), kase_(kase), seed_(seed), options_(options), device_(device) {}

  /// Compiles and times one kernel; its outputs (as doubles) land in `outputs`.
  KernelTiming Time(const std::string& label, const std::string& path, const std::string& kind,
                    const std::vector<std::string>& link, std::vector<std::vector<double>>* outputs) {
    KernelTiming k;
    k.label = label;
    k.path = path;
    k.kind = kind;
    std::string source, error;
    if (!TryReadFile(path, &source, &error)) throw UsageError("cannot read " + label + " " + path + ": " + error);
    CompilerOptions copts;
    copts.cache_dir = options_.cache_dir;
    copts.cuda_arch = device_.arch;
    copts.extra_flags = link;
    CompileResult compiled = CompileCudaCandidate(source, copts);
    if (!compiled.ok) throw UsageError("the " + label + " " + path + " does not compile:\n" + compiled.log);
    k.compile_seconds = compiled.seconds;
    k.compile_cached = compiled.cached;

    std::vector<ArenaTensor> layout;
    for (const auto* list : {&task_.inputs, &task_.outputs})
      for (const auto& t : *list) layout.push_back(ArenaTensor{t.dtype, ResolveShape(t, kase_.params)});
    TensorArena arena(layout);
    size_t n_in = task_.inputs.size();
    Distribution dist = kase_.distributions.empty() ? Distribution::kNormal : kase_.distributions.front();
    inputs_.assign(n_in, {});
    for (size_t i = 0; i < n_in; ++i)
      inputs_[i] = FillInput(dist, MixSeed(seed_, i), arena.tensor(i).dtype, arena.data(i), NumElements(arena.tensor(i).shape));
    for (size_t o = n_in; o < arena.size(); ++o) PoisonOutput(arena.tensor(o).dtype, arena.data(o), NumElements(arena.tensor(o).shape));

    SandboxLimits limits;
    limits.address_space_bytes = 0;
    CandidateProcess proc(compiled.so_path, ResolveSandboxMode(), limits, arena.total_bytes(), /*gpu=*/true);
    LoadResult load = proc.Start(60000);
    if (!load.ok) throw EnvironmentError("cannot load the " + label + " for timing: " + load.message);
    CaseRun run = proc.Bench(1, arena, n_in, options_.warmup, options_.reps, options_.timeout_ms);
    if (run.outcome != CaseRun::Outcome::kReturned || run.rc != 0)
      throw EnvironmentError(fmt::format("the {} failed while being timed ({}, rc {}): {}", label,
                                         OutcomeName(run.outcome), run.rc, run.message));
    k.timing = run.timing;
    outputs->clear();
    for (size_t o = n_in; o < arena.size(); ++o) {
      const ArenaTensor& t = arena.tensor(o);
      std::vector<double> v(static_cast<size_t>(NumElements(t.shape)));
      for (size_t i = 0; i < v.size(); ++i) v[i] = LoadAsDouble(arena.data(o), t.dtype, i);
      outputs->push_back(std::move(v));
    }
    return k;
  }

  /// Compares the candidate's outputs with the baseline's within the task's tolerance.
  CompareResult Agreement(const std::vector<std::vector<double>>& cand, const std::vector<std::vector<double>>& base,
                          std::vector<char>* storage) const {
    CompareResult worst;
    for (size_t o = 0; o < task_.outputs.size(); ++o) {
      const TensorSpec& spec = task_.outputs[o];
      std::vector<int64_t> shape = ResolveShape(spec, kase_.params);
      storage->assign(cand[o].size() * DTypeSize(spec.dtype), 0);
      for (size_t i = 0; i < cand[o].size(); ++i) StoreFromDouble(storage->data(), spec.dtype, i, cand[o][i]);
      CompareInput ci;
      ci.spec = &spec;
      ci.shape = shape;
      ci.got = storage->data();
      ci.reference = &base[o];
      ci.tolerance = task_.ToleranceFor(spec.dtype);
      ci.reduction_size = EvalExpr(task_.reduction_size, kase_.params);
      ci.comparison = task_.comparison;
      if (task_.comparison == Comparison::kArgmax) {
        ci.argmax_source = &inputs_[0];
        ci.argmax_cols = ResolveShape(task_.inputs[0], kase_.params).back();
      }
      CompareResult r = CompareOutput(ci);
      if (o == 0 || !r.passed()) worst = std::move(r);
    }
    return worst;
  }

 private:
  const Task& task_;
  const Case& kase_;
  uint64_t seed_;
  const BenchOptions& options_;
  const CudaDevice& device_;
  std::vector<std::vector<double>> inputs_;
};

nlohmann::json TimingJson(const KernelTiming& k) {
  const CaseTiming& t = k.timing;
  return {{"path", k.path}, {"kind", k.kind}, {"compile_seconds", k.compile_seconds}, {"compile_cached", k.compile_cached},
          {"reps", t.reps}, {"rotations", t.rotations}, {"l2_flush_bytes", t.flush_bytes},
          {"median_us", t.median_ns / 1e3}, {"mean_us", t.mean_ns / 1e3}, {"min_us", t.min_ns / 1e3},
          {"max_us", t.max_ns / 1e3}, {"p10_us", t.p10_ns / 1e3}, {"p90_us", t.p90_ns / 1e3},
          {"spread", t.median_ns > 0 ? (t.p90_ns - t.p10_ns) / t.median_ns : 0.0}};
}

}  // namespace

void JudgeTiming(const DeviceCeilings& ceilings, bool low_precision, BenchReport* report) {
  BenchReport& r = *report;
  r.ceilings = ceilings;
  double med = r.candidate.timing.median_ns * 1e-9, base_med = r.baseline.timing.median_ns * 1e-9;
  // 16-bit inputs may use tensor cores: their ceiling is the bf16 matrix rate.
  double peak = low_precision ? ceilings.bf16_flops_per_s : ceilings.fp32_flops_per_s;
  if (ceilings.present && ceilings.copy_bytes_per_s > 0 && peak > 0) {
    double mem_s = r.bytes / ceilings.copy_bytes_per_s, compute_s = r.flops / peak;
    r.floor_seconds = std::max(mem_s, compute_s);
    r.bound = mem_s >= compute_s ? "memory" : "compute";
    r.roofline_fraction = med > 0 ? r.floor_seconds / med : 0;
    r.baseline_roofline_fraction = base_med > 0 ? r.floor_seconds / base_med : 0;
    if (r.roofline_fraction > kSuspectFraction)
      r.suspects.push_back(fmt::format("faster than the roofline floor allows ({:.1f}% of the floor time): work "
                                       "skipped, or done where the timer cannot see it",
                                       100 / r.roofline_fraction));
  }
  // The host saw the timed loop take at least as long as the event times add up to.
  const CaseTiming& t = r.candidate.timing;
  if (t.loop_wall_ns > 0 && t.min_ns * t.reps > 1.05 * static_cast<double>(t.loop_wall_ns))
    r.suspects.push_back("the CUDA event times exceed the host's wall clock over the same loop");
}

Baseline FindBaseline(const Task& task, const std::string& baselines_dir) {
  std::string text, error;
  if (!TryReadFile(baselines_dir + "/manifest.json", &text, &error))
    throw EnvironmentError("cannot read the bench baselines: " + error);
  nlohmann::json m = nlohmann::json::parse(text, nullptr, false);
  if (m.is_discarded()) throw EnvironmentError(baselines_dir + "/manifest.json is not valid JSON");
  Baseline b{baselines_dir + "/" + task.name + ".cu", "straightforward kernel", {}};
  if (m["baselines"].contains(task.name)) {
    const auto& e = m["baselines"][task.name];
    b.path = baselines_dir + "/" + e.value("file", task.name + ".cu");
    b.kind = e.value("kind", b.kind);
    b.link = e.value("link", std::vector<std::string>{});
  }
  if (!FileExists(b.path))
    throw UsageError("task '" + task.name + "' has no bench baseline (" + b.path + "); give one with --baseline FILE");
  return b;
}

BenchReport RunBench(const Task& task, const std::string& candidate_path, const BenchOptions& options) {
  CudaDevice device = ProbeCudaDevice();
  BenchReport r;
  r.task = task.name;
  const Case& kase = PickCase(task, options.case_name);
  r.case_name = kase.name;
  r.params = kase.params;
  Baseline baseline = options.baseline_path.empty() ? FindBaseline(task, options.baselines_dir)
                                                    : Baseline{options.baseline_path, "given with --baseline", {}};

  VerifyOptions vo;
  vo.backend = "cuda";
  vo.full = options.full;
  vo.seed = options.seed;
  vo.cache_dir = options.cache_dir;
  r.verdict = Verifier(task).Verify(candidate_path, vo);
  if (!r.verdict.passed) return r;  // a wrong or cheating kernel is never timed

  uint64_t seed = MixSeed(r.verdict.seed, 0xbe4c);
  Timer timer(task, kase, seed, options, device);
  std::vector<std::vector<double>> cand_out, base_out;
  r.baseline = timer.Time("baseline", baseline.path, baseline.kind, baseline.link, &base_out);
  r.candidate = timer.Time("candidate", candidate_path, "", {}, &cand_out);
  r.timed = true;
  std::vector<char> storage;
  r.agreement = timer.Agreement(cand_out, base_out, &storage);
  r.agrees = r.agreement.passed();
  if (!r.agrees)
    r.suspects.push_back(fmt::format("at the bench shape the candidate's outputs differ from the baseline's "
                                     "({} of {} elements outside tolerance, max abs error {:.3g})",
                                     r.agreement.mismatches, r.agreement.elements, r.agreement.max_abs_error));
  double med = r.candidate.timing.median_ns * 1e-9, base_med = r.baseline.timing.median_ns * 1e-9;
  r.speedup = med > 0 ? base_med / med : 0;
  r.flops = static_cast<double>(EvalExpr(task.flops, kase.params));
  r.bytes = static_cast<double>(EvalExpr(task.bytes, kase.params));
  bool low_precision = false;
  for (const auto& t : task.inputs) low_precision |= t.dtype == DType::kFloat16 || t.dtype == DType::kBFloat16;
  JudgeTiming(LoadCeilings(device, options.cache_dir), low_precision, &r);
  return r;
}

nlohmann::json BenchReport::ToJson() const {
  nlohmann::json j = {{"task", task}, {"case", case_name}, {"params", params}, {"ok", ok()},
                      {"verdict", {{"passed", verdict.passed}, {"level", LevelName(verdict.level)},
                                   {"failure_class", verdict.passed ? nlohmann::json(nullptr)
                                                                    : nlohmann::json(FailureClassName(verdict.failure))},
                                   {"message", verdict.message}, {"seed", verdict.seed}}},
                      {"timed", timed}, {"device", verdict.device}};
  if (!timed) return j;
  j["candidate"] = TimingJson(candidate);
  j["baseline"] = TimingJson(baseline);
  j["speedup"] = speedup;
  j["outputs_agree_with_baseline"] = agrees;
  j["agreement"] = {{"max_abs_error", agreement.max_abs_error}, {"mismatches", agreement.mismatches}};
  j["flops"] = flops;
  j["bytes"] = bytes;
  if (ceilings.present) {
    j["roofline"] = {{"floor_us", floor_seconds * 1e6}, {"bound", bound}, {"fraction", roofline_fraction},
                     {"baseline_fraction", baseline_roofline_fraction},
                     {"ceilings", {{"copy_bytes_per_s", ceilings.copy_bytes_per_s},
                                   {"fp32_flops_per_s", ceilings.fp32_flops_per_s},
                                   {"path", ceilings.path}}}};
  } else {
    j["roofline"] = nullptr;
  }
  j["suspects"] = suspects;
  return j;
}

std::string BenchReport::Text() const {
  if (!timed)
    return fmt::format("{}: not timed: the candidate did not pass verification ({})\n{}", task,
                       verdict.passed ? "" : std::string(FailureClassName(verdict.failure)), verdict.Summary());
  auto row = [](const KernelTiming& k) {
    const CaseTiming& t = k.timing;
    return fmt::format("  {:<10} median {:>10.2f} us  p10 {:>10.2f}  p90 {:>10.2f}  spread {:>5.1f}%  ({} reps, compile {:.2f} s{})\n",
                       k.label, t.median_ns / 1e3, t.p10_ns / 1e3, t.p90_ns / 1e3,
                       t.median_ns > 0 ? 100 * (t.p90_ns - t.p10_ns) / t.median_ns : 0.0, t.reps, k.compile_seconds,
                       k.compile_cached ? ", cached" : "");
  };
  std::string s = fmt::format("{} case {} (verified: {})\n", task, case_name, LevelName(verdict.level));
  s += row(candidate);
  s += row(baseline) + fmt::format("  baseline: {}\n", baseline.kind);
  s += fmt::format("  speedup over baseline: {:.2f}x\n", speedup);
  if (ceilings.present)
    s += fmt::format("  roofline: {}-bound floor {:.2f} us; candidate reaches {:.1f}% of it, baseline {:.1f}%\n", bound,
                     floor_seconds * 1e6, 100 * roofline_fraction, 100 * baseline_roofline_fraction);
  else
    s += "  roofline: no calibrated ceilings for this device (run 'kforge device calibrate')\n";
  s += fmt::format("  outputs agree with the baseline: {}\n", agrees ? "yes" : "NO");
  for (const auto& x : suspects) s += "  SUSPECT: " + x + "\n";
  return s;
}

}  // namespace kforge
