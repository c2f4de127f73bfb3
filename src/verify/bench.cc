#include "verify/bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/clock.h"
#include "core/error.h"
#include "core/expr.h"
#include "core/fs.h"
#include "exec/arena.h"
#include "exec/candidate_process.h"
#include "exec/compiler.h"
#include "exec/machine.h"
#include "exec/runner_protocol.h"
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

/// Compiles one kernel and times it on `arena` (the bench case's inputs, shared by both
/// kernels); its raw output bytes, in task order, land in `outputs`.
/// The raw bytes of copy `copy`'s outputs, in task order.
std::vector<std::string> CopyOutputs(TensorArena& arena, size_t per_copy, size_t num_inputs, size_t copy) {
  std::vector<std::string> out;
  for (size_t o = copy * per_copy + num_inputs; o < (copy + 1) * per_copy; ++o)
    out.emplace_back(static_cast<const char*>(arena.data(o)), arena.tensor(o).bytes);
  return out;
}

/// Compiles one kernel and times it on `arena` (the bench case's inputs, then the sampled
/// calls' inputs, shared by both kernels); the raw output bytes of each copy, in task order,
/// land in `outputs` (copy 0 first).
KernelTiming TimeKernel(Machine& machine, const std::string& label, const std::string& path, const std::string& kind,
                        const std::vector<std::string>& link, const CudaDevice& device, const BenchOptions& options,
                        size_t num_inputs, TensorArena& arena, const BenchSamples& samples,
                        std::vector<std::vector<std::string>>* outputs) {
  KernelTiming k;
  k.label = label;
  k.path = path;
  k.kind = kind;
  std::string source, error;
  if (!TryReadFile(path, &source, &error)) throw UsageError("cannot read " + label + " " + path + ": " + error);
  CompilerOptions copts;
  copts.cache_dir = options.cache_dir;
  copts.cuda_arch = device.arch;
  copts.extra_flags = link;
  CompileResult compiled = CompileCudaCandidate(machine, source, copts);
  if (!compiled.ok) throw UsageError("the " + label + " " + path + " does not compile:\n" + compiled.log);
  k.compile_seconds = compiled.seconds;
  k.compile_cached = compiled.cached;

  const size_t per_copy = samples.calls.empty() ? arena.size() : samples.tensors_per_copy;
  const size_t copies = arena.size() / per_copy;
  std::vector<std::string> inputs;  // every copy's inputs, to see them mutated
  for (size_t i = 0; i < arena.size(); ++i) {
    if (i % per_copy >= num_inputs)
      PoisonOutput(arena.tensor(i).dtype, arena.data(i), NumElements(arena.tensor(i).shape));
    else
      inputs.emplace_back(static_cast<const char*>(arena.data(i)), arena.tensor(i).bytes);
  }
  SandboxLimits limits;
  limits.address_space_bytes = 0;
  CandidateProcess proc(machine, compiled.so_path, limits, arena.total_bytes(), /*gpu=*/true);
  LoadResult load = proc.Start(60000);
  if (!load.ok) throw EnvironmentError("cannot load the " + label + " for timing: " + load.message);
  CaseRun run = proc.Bench(1, arena, num_inputs, options.warmup, options.reps, options.timeout_ms, samples);
  if (run.outcome != CaseRun::Outcome::kReturned || run.rc != 0)
    throw EnvironmentError(fmt::format("the {} failed while being timed ({}, rc {}): {}", label,
                                       OutcomeName(run.outcome), run.rc, run.message));
  // The engine paced the timed loop (RunGo): its clock from the go to the reply is the time
  // per call as a clock outside the candidate's process sees it, plus the harness's work.
  k.engine_call_ns = static_cast<double>(run.paced_wall_ns) / options.reps;
  if (run.l2_persistence)
    throw EnvironmentError("the " + label +
                           " set up persisting L2 while being timed (an access-policy window or a "
                           "persisting-L2 limit): its times would not be comparable, and kforge refuses them");
  k.timing = run.timing;
  // The bound on the event times comes from the engine's clock over the paced loop, which
  // the candidate cannot reach; the runner's own loop clock is in its address space.
  k.timing.loop_wall_ns = run.paced_wall_ns;
  for (size_t i = 0, in = 0; i < arena.size(); ++i) {
    if (!arena.DamagedGuard(i).empty())
      throw EnvironmentError("the " + label + " wrote outside a tensor while being timed");
    if (i % per_copy < num_inputs &&
        std::string_view(static_cast<const char*>(arena.data(i)), arena.tensor(i).bytes) != inputs[in++])
      throw EnvironmentError("the " + label + " modified an input while being timed");
  }
  outputs->clear();
  for (size_t c = 0; c < copies; ++c) outputs->push_back(CopyOutputs(arena, per_copy, num_inputs, c));
  return k;
}

/// The calls' kernel time from CUPTI (null when none was recorded: the CPU, or no CUPTI).
nlohmann::json KernelTimeJson(const CaseTiming& t) {
  if (t.kernels <= 0 || t.kernel_calls <= 0) return nullptr;
  return {{"source", "cupti"},
          {"calls", t.kernel_calls},
          {"kernels_per_call", static_cast<double>(t.kernels) / t.kernel_calls},
          {"median_us", t.kernel_median_ns / 1e3},
          {"mean_us", t.kernel_mean_ns / 1e3},
          {"min_us", t.kernel_min_ns / 1e3},
          {"max_us", t.kernel_max_ns / 1e3},
          {"p10_us", t.kernel_p10_ns / 1e3},
          {"p90_us", t.kernel_p90_ns / 1e3},
          {"spread", t.kernel_median_ns > 0 ? (t.kernel_p90_ns - t.kernel_p10_ns) / t.kernel_median_ns : 0.0}};
}

nlohmann::json TimingJson(const KernelTiming& k) {
  const CaseTiming& t = k.timing;
  return {{"path", k.path},
          {"kind", k.kind},
          {"compile_seconds", k.compile_seconds},
          {"compile_cached", k.compile_cached},
          {"reps", t.reps},
          {"rotations", t.rotations},
          {"l2_flush_bytes", t.flush_bytes},
          {"engine_call_us", k.engine_call_ns / 1e3},
          {"median_us", t.median_ns / 1e3},
          {"mean_us", t.mean_ns / 1e3},
          {"min_us", t.min_ns / 1e3},
          {"max_us", t.max_ns / 1e3},
          {"p10_us", t.p10_ns / 1e3},
          {"p90_us", t.p90_ns / 1e3},
          {"spread", t.median_ns > 0 ? (t.p90_ns - t.p10_ns) / t.median_ns : 0.0},
          {"kernel_time", KernelTimeJson(t)}};
}

}  // namespace

void JudgeTiming(const DeviceCeilings& ceilings, bool low_precision, BenchReport* report) {
  BenchReport& r = *report;
  r.ceilings = ceilings;
  double med = r.candidate.timing.median_ns * 1e-9, base_med = r.baseline.timing.median_ns * 1e-9;
  r.speedup = med > 0 ? base_med / med : 0;
  // The roofline and the diagnosis judge the device's work: the kernel time where CUPTI
  // recorded it (no launch overhead or gaps between kernels), else the event time.
  const double kernel_med = RooflineSeconds(r.candidate.timing), base_kernel_med = RooflineSeconds(r.baseline.timing);
  // 16-bit inputs may use tensor cores: their ceiling is the bf16 matrix rate.
  double peak = low_precision ? ceilings.bf16_flops_per_s : ceilings.fp32_flops_per_s;
  if (ceilings.present && ceilings.copy_bytes_per_s > 0 && peak > 0) {
    double mem_s = r.bytes / ceilings.copy_bytes_per_s, compute_s = r.flops / peak;
    r.floor_seconds = std::max(mem_s, compute_s);
    r.bound = mem_s >= compute_s ? "memory" : "compute";
    r.roofline_fraction = kernel_med > 0 ? r.floor_seconds / kernel_med : 0;
    r.baseline_roofline_fraction = base_kernel_med > 0 ? r.floor_seconds / base_kernel_med : 0;
    if (r.roofline_fraction > kSuspectFraction)
      r.suspects.push_back(
          fmt::format("faster than the roofline floor allows ({:.1f}% of the floor time): work "
                      "skipped, or done where the timer cannot see it",
                      100 / r.roofline_fraction));
  }
  r.diagnosis = DiagnosePerformance({r.bytes, r.flops, kernel_med * 1e9, ceilings, low_precision, r.profile});
  // The host saw the timed loop take at least as long as the event times add up to.
  const CaseTiming& t = r.candidate.timing;
  if (t.loop_wall_ns > 0 && t.min_ns * t.reps > 1.05 * static_cast<double>(t.loop_wall_ns))
    r.suspects.push_back("the CUDA event times exceed the host's wall clock over the same loop");
  r.engine_mean_ns = EngineMeanNanos(r.candidate, r.baseline);
  const double hidden_ns = r.engine_mean_ns - t.mean_ns;
  const double margin_ns =
      kHiddenTimeFloorNs + kHiddenTimeFraction * t.mean_ns + kHarnessNoiseFraction * HarnessNanos(r.baseline);
  if (r.engine_mean_ns > 0 && hidden_ns > margin_ns)
    r.suspects.push_back(
        fmt::format("by the engine's clock a call takes {:.1f} us, but the candidate's CUDA events say {:.1f} us: "
                    "its process reports less time than its calls take (a patched timer, or work its events "
                    "do not cover)",
                    r.engine_mean_ns / 1e3, t.mean_ns / 1e3));
}

double RooflineSeconds(const CaseTiming& t) {
  return (t.kernels > 0 && t.kernel_median_ns > 0 ? t.kernel_median_ns : t.median_ns) * 1e-9;
}

double HarnessNanos(const KernelTiming& baseline) {
  // The baseline's process ran only trusted code: what its calls took beyond its events is
  // the harness's own work per call (L2 flush, event records, synchronisation, the sampled
  // calls' copies, the copy back).
  return std::max(0.0, baseline.engine_call_ns - baseline.timing.mean_ns);
}

double EngineMeanNanos(const KernelTiming& candidate, const KernelTiming& baseline) {
  if (candidate.engine_call_ns <= 0 || baseline.engine_call_ns <= 0) return 0;
  return std::max(0.0, candidate.engine_call_ns - HarnessNanos(baseline));
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

CompareResult CompareWithBaseline(const Task& task, const Bindings& params, const std::vector<std::string>& candidate,
                                  const std::vector<std::string>& baseline, const std::vector<double>& argmax_source) {
  CompareResult worst;
  for (size_t o = 0; o < task.outputs.size(); ++o) {
    const TensorSpec& spec = task.outputs[o];
    std::vector<int64_t> shape = ResolveShape(spec, params);
    std::vector<double> reference(static_cast<size_t>(NumElements(shape)));
    for (size_t i = 0; i < reference.size(); ++i) reference[i] = LoadAsDouble(baseline[o].data(), spec.dtype, i);
    CompareInput ci;
    ci.spec = &spec;
    ci.shape = shape;
    ci.got = candidate[o].data();
    ci.reference = &reference;
    ci.tolerance = task.ToleranceFor(spec.dtype);
    ci.reduction_size = EvalExpr(task.reduction_size, params);
    ci.comparison = task.comparison;
    if (task.comparison == Comparison::kArgmax) {
      ci.argmax_source = &argmax_source;
      ci.argmax_cols = ResolveShape(task.inputs[0], params).back();
    }
    CompareResult r = CompareOutput(ci);
    if (o == 0 || !r.passed()) worst = std::move(r);
  }
  return worst;
}

BenchReport RunBench(Machine& machine, const Task& task, const std::string& candidate_path,
                     const BenchOptions& options) {
  const CudaDevice& device = machine.Device();
  BenchReport r;
  r.task = task.name;
  const Case& kase = PickCase(task, options.case_name);
  r.case_name = kase.name;
  r.params = kase.params;
  Baseline baseline = options.baseline_path.empty() ? FindBaseline(task, options.baselines_dir)
                                                    : Baseline{options.baseline_path, "given with --baseline", {}};
  if (!options.ncu_csv.empty()) {  // read first: a bad file costs nothing of the bench
    std::string text, error;
    if (!TryReadFile(options.ncu_csv, &text, &error) || !ParseNcuCsv(text, &r.profile, &error))
      throw UsageError("--ncu-csv " + options.ncu_csv + ": " + error);
  }

  VerifyOptions vo;
  vo.cancel = options.cancel;
  vo.backend = BackendKind::kCuda;
  vo.full = options.full;
  vo.seed = options.seed;
  vo.cache_dir = options.cache_dir;
  r.verdict = Verifier(task, machine).Verify(candidate_path, vo);
  if (!r.verdict.passed) return r;  // a wrong or cheating kernel is never timed

  // The bench case's inputs, generated once for both kernels: copy 0 for every timed call,
  // then one fresh copy per sampled call.
  const std::vector<ArenaTensor> layout = CaseLayout(task, kase.params);
  const size_t n_in = task.inputs.size(), per_copy = layout.size();
  uint64_t seed = MixSeed(r.verdict.seed, 0xbe4c);
  BenchSamples samples;
  samples.tensors_per_copy = per_copy;
  int sampled = std::clamp(options.sampled_calls, 0, std::min(kMaxBenchSamples, options.reps));
  for (uint64_t draw = 0; static_cast<int>(samples.calls.size()) < sampled; ++draw) {
    uint32_t call = static_cast<uint32_t>(MixSeed(seed, 0x5a3b1e + draw) % static_cast<uint64_t>(options.reps));
    if (std::find(samples.calls.begin(), samples.calls.end(), call) == samples.calls.end())
      samples.calls.push_back(call);
  }
  std::vector<ArenaTensor> all;
  for (size_t c = 0; c <= samples.calls.size(); ++c) all.insert(all.end(), layout.begin(), layout.end());
  TensorArena arena(all);
  Distribution dist = kase.distributions.empty() ? Distribution::kNormal : kase.distributions.front();
  std::vector<std::vector<double>> argmax_source(samples.calls.size() + 1);
  for (size_t c = 0; c <= samples.calls.size(); ++c)
    for (size_t i = 0; i < n_in; ++i) {
      size_t t = c * per_copy + i;
      std::vector<double> values =
          FillInput(dist, MixSeed(MixSeed(seed, c), i), arena.tensor(t).dtype, arena.data(t), arena.tensor(t).shape, i);
      if (i == 0 && task.comparison == Comparison::kArgmax) argmax_source[c] = std::move(values);
    }
  std::vector<std::vector<std::string>> cand_out, base_out;
  r.baseline = TimeKernel(machine, "baseline", baseline.path, baseline.kind, baseline.link, device, options, n_in,
                          arena, samples, &base_out);
  r.candidate =
      TimeKernel(machine, "candidate", candidate_path, "", {}, device, options, n_in, arena, samples, &cand_out);
  r.timed = true;
  r.agreement = CompareWithBaseline(task, kase.params, cand_out[0], base_out[0], argmax_source[0]);
  if (!r.agreement.passed())
    r.suspects.push_back(
        fmt::format("at the bench shape the candidate's outputs differ from the baseline's "
                    "({} of {} elements outside tolerance, max abs error {:.3g})",
                    r.agreement.mismatches, r.agreement.elements, r.agreement.max_abs_error));
  r.sampled_calls = samples.calls;
  for (size_t k = 0; k < samples.calls.size(); ++k) {
    r.sample_agreement.push_back(
        CompareWithBaseline(task, kase.params, cand_out[k + 1], base_out[k + 1], argmax_source[k + 1]));
    const CompareResult& a = r.sample_agreement.back();
    if (!a.passed())
      r.suspects.push_back(
          fmt::format("timed call {} (sampled, with fresh inputs) returned wrong outputs ({} of {} "
                      "elements outside tolerance): work skipped or results reused across calls",
                      samples.calls[k], a.mismatches, a.elements));
  }
  r.flops = static_cast<double>(EvalExpr(task.flops, kase.params));
  r.bytes = static_cast<double>(EvalExpr(task.bytes, kase.params));
  bool low_precision = false;
  for (const auto& t : task.inputs) low_precision |= t.dtype == DType::kFloat16 || t.dtype == DType::kBFloat16;
  JudgeTiming(LoadCeilings(device, options.cache_dir.empty() ? machine.config().cache_dir : options.cache_dir),
              low_precision, &r);
  return r;
}

nlohmann::json BenchReport::ToJson() const {
  nlohmann::json j = {
      {"task", task},
      {"case", case_name},
      {"params", params},
      {"ok", ok()},
      {"verdict",
       {{"passed", verdict.passed},
        {"level", LevelName(verdict.level)},
        {"failure_class", verdict.passed ? nlohmann::json(nullptr) : nlohmann::json(FailureClassName(verdict.failure))},
        {"message", verdict.message},
        {"seed", verdict.seed}}},
      {"timed", timed},
      {"device", verdict.device}};
  if (!timed) return j;
  j["candidate"] = TimingJson(candidate);
  j["baseline"] = TimingJson(baseline);
  j["speedup"] = speedup;
  j["engine_mean_us"] = engine_mean_ns / 1e3;
  j["outputs_agree_with_baseline"] = agrees();
  j["agreement"] = {{"max_abs_error", agreement.max_abs_error}, {"mismatches", agreement.mismatches}};
  j["sampled_calls"] = nlohmann::json::array();
  for (size_t k = 0; k < sampled_calls.size() && k < sample_agreement.size(); ++k)
    j["sampled_calls"].push_back({{"call", sampled_calls[k]},
                                  {"agrees", sample_agreement[k].passed()},
                                  {"mismatches", sample_agreement[k].mismatches}});
  j["flops"] = flops;
  j["bytes"] = bytes;
  if (ceilings.present) {
    j["roofline"] = {{"floor_us", floor_seconds * 1e6},
                     {"bound", bound},
                     {"fraction", roofline_fraction},
                     {"baseline_fraction", baseline_roofline_fraction},
                     {"judged_by", candidate.timing.kernels > 0 ? "kernel_time" : "event_time"},
                     {"ceilings",
                      {{"copy_bytes_per_s", ceilings.copy_bytes_per_s},
                       {"fp32_flops_per_s", ceilings.fp32_flops_per_s},
                       {"path", ceilings.path}}}};
  } else {
    j["roofline"] = nullptr;
  }
  j["diagnosis"] = diagnosis.ToJson();
  j["suspects"] = suspects;
  return j;
}

std::string BenchReport::Text() const {
  if (!timed)
    return fmt::format("{}: not timed: the candidate did not pass verification ({})\n{}", task,
                       verdict.passed ? "" : std::string(FailureClassName(verdict.failure)), verdict.Summary());
  auto row = [](const KernelTiming& k) {
    const CaseTiming& t = k.timing;
    return fmt::format(
        "  {:<10} median {:>10.2f} us  p10 {:>10.2f}  p90 {:>10.2f}  spread {:>5.1f}%  ({} reps, compile {:.2f} s{})\n",
        k.label, t.median_ns / 1e3, t.p10_ns / 1e3, t.p90_ns / 1e3,
        t.median_ns > 0 ? 100 * (t.p90_ns - t.p10_ns) / t.median_ns : 0.0, t.reps, k.compile_seconds,
        k.compile_cached ? ", cached" : "");
  };
  auto kernel_row = [](const KernelTiming& k) {
    const CaseTiming& t = k.timing;
    if (t.kernels <= 0 || t.kernel_calls <= 0) return std::string();
    return fmt::format(
        "  {:<10} kernels (CUPTI) median {:>10.2f} us  p10 {:>10.2f}  p90 {:>10.2f}  ({:.1f} a call, {} calls)\n", "",
        t.kernel_median_ns / 1e3, t.kernel_p10_ns / 1e3, t.kernel_p90_ns / 1e3,
        static_cast<double>(t.kernels) / t.kernel_calls, t.kernel_calls);
  };
  std::string s = fmt::format("{} case {} (verified: {})\n", task, case_name, LevelName(verdict.level));
  s += row(candidate) + kernel_row(candidate);
  s += row(baseline) + kernel_row(baseline) + fmt::format("  baseline: {}\n", baseline.kind);
  s += fmt::format("  speedup over baseline: {:.2f}x\n", speedup);
  if (engine_mean_ns > 0)
    s += fmt::format("  by the engine's clock: {:.2f} us per call (candidate's mean {:.2f} us)\n", engine_mean_ns / 1e3,
                     candidate.timing.mean_ns / 1e3);
  if (ceilings.present)
    s +=
        fmt::format("  roofline: {}-bound floor {:.2f} us; candidate reaches {:.1f}% of it, baseline {:.1f}% (by {})\n",
                    bound, floor_seconds * 1e6, 100 * roofline_fraction, 100 * baseline_roofline_fraction,
                    candidate.timing.kernels > 0 ? "kernel time" : "event time");
  else
    s += "  roofline: no calibrated ceilings for this device (run 'kforge device calibrate')\n";
  if (!diagnosis.findings.empty()) s += "  diagnosis: " + diagnosis.Text() + "\n";
  s += fmt::format("  outputs agree with the baseline: {}\n", agrees() ? "yes" : "NO");
  for (const auto& x : suspects) s += "  SUSPECT: " + x + "\n";
  return s;
}

}  // namespace kforge
