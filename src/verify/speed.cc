#include "verify/speed.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/cancel.h"
#include "core/error.h"
#include "core/expr.h"
#include "core/names.h"
#include "exec/arena.h"
#include "exec/candidate_process.h"
#include "exec/machine.h"
#include "verify/backend.h"
#include "verify/compare.h"
#include "verify/expected_outputs.h"
#include "verify/inputs.h"
#include "verify/reference.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

constexpr int64_t kSpeedLoadTimeoutMs = 60000;
/// The figure of a CPU kernel whose calls take no longer than the harness's noise.
constexpr double kFloorNs = 1;

/// Does nothing: timed on the same case, its calls are the harness's own work per call
/// (the control socket, the runner's checks of the arena), which the CPU figure leaves out.
constexpr char kNoOpKernel[] =
    "#include <dlpack/dlpack.h>\n"
    "extern \"C\" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) { return 0; }\n";

int64_t CaseElements(const Task& task, const Case& c) {
  int64_t elems = 0;
  for (const auto& t : task.inputs) elems += NumElements(ResolveShape(t, c.params));
  return elems;
}

/// The value at fraction `q` of `sorted` (nearest rank).
double Quantile(const std::vector<double>& sorted, double q) {
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5));
  return sorted[i];
}

Speed NotMeasured(std::string problem, bool fault) {
  Speed s;
  s.problem = std::move(problem);
  s.fault = fault;
  return s;
}

}  // namespace

constexpr NameEntry<SpeedClock> kSpeedClockNames[] = {{SpeedClock::kNone, "none"},
                                                      {SpeedClock::kCpuWall, "cpu_wall"},
                                                      {SpeedClock::kCpuTime, "cpu_time"},
                                                      {SpeedClock::kCudaEvents, "cuda_events"}};
constexpr NameEntry<SpeedStop> kSpeedStopNames[] = {
    {SpeedStop::kReps, "reps"}, {SpeedStop::kPrecise, "precise"}, {SpeedStop::kTimeCap, "time_cap"}};

std::string_view SpeedClockName(SpeedClock c) { return NameIn(kSpeedClockNames, c); }

std::string_view SpeedStopName(SpeedStop s) { return NameIn(kSpeedStopNames, s); }

double RelativeStandardError(const std::vector<double>& samples) {
  const size_t n = samples.size();
  if (n < 2) return std::numeric_limits<double>::infinity();
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(n);
  if (mean == 0) return std::numeric_limits<double>::infinity();
  double ss = 0;
  for (double x : samples) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  return sd / std::sqrt(static_cast<double>(n)) / std::abs(mean);
}

nlohmann::json Speed::ToJson() const {
  if (!measured()) return {{"measured", false}, {"problem", problem}, {"fault", fault}};
  nlohmann::json j = {{"measured", true},      {"clock", SpeedClockName(clock)}, {"case", case_name},
                      {"reps", reps},          {"median_us", median_ns / 1e3},   {"p10_us", p10_ns / 1e3},
                      {"p90_us", p90_ns / 1e3}};
  if (harness_ns > 0) j["harness_us"] = harness_ns / 1e3;
  if (rse > 0 && std::isfinite(rse)) j["rse"] = rse;
  j["stopped"] = SpeedStopName(stopped);
  return j;
}

Speed Speed::FromJson(const nlohmann::json& j) {
  Speed s;
  if (!j.is_object()) return s;
  s.problem = j.value("problem", "");
  s.fault = j.value("fault", false);
  if (!j.value("measured", false)) return s;
  if (!ParseIn(kSpeedClockNames, j.value("clock", ""), &s.clock)) s.clock = SpeedClock::kNone;
  s.case_name = j.value("case", "");
  s.reps = j.value("reps", 0);
  s.median_ns = j.value("median_us", 0.0) * 1e3;
  s.p10_ns = j.value("p10_us", 0.0) * 1e3;
  s.p90_ns = j.value("p90_us", 0.0) * 1e3;
  s.harness_ns = j.value("harness_us", 0.0) * 1e3;
  s.rse = j.value("rse", 0.0);
  ParseIn(kSpeedStopNames, j.value("stopped", "reps"), &s.stopped);
  return s;
}

const Case* SpeedCase(const Task& task, BackendKind backend, const std::set<std::string>& allowed) {
  auto ok = [&](const Case& c) { return allowed.empty() || allowed.count(c.name) > 0; };
  if (backend == BackendKind::kCuda && !task.bench.empty() && ok(task.bench.front())) return &task.bench.front();
  const Case* best = nullptr;
  for (const auto* set : {&task.full, &task.light})
    for (const auto& c : *set)
      if (ok(c) && (best == nullptr || CaseElements(task, c) > CaseElements(task, *best))) best = &c;
  return best;
}

namespace {

/// The processes of one MeasureSpeeds call, one per source and on the CPU the no-op kernel's
/// last, each timed on an arena of its own that holds the same inputs. Its own: a runner keeps
/// its mapping of the arena between calls (exec/runner/arena_mapping.h), so an arena shared
/// by two processes is one that either could write into while the other is timed.
class SpeedSession {
 public:
  SpeedSession(Machine& machine, const Task& task, BackendKind backend, const SpeedOptions& options)
      : machine_(machine),
        task_(task),
        backend_(MakeBackend(backend)),
        reference_(MakeBuiltinReference(task.reference)),
        options_(options),
        kase_(*SpeedCase(task, backend, options.cases)),
        layout_(CaseLayout(task, kase_.params)),
        n_in_(task.inputs.size()) {
    backend_->Prepare(machine);
    copts_.cache_dir = options.cache_dir.empty() ? machine.config().cache_dir : options.cache_dir;
    Draw(0);
  }
  ~SpeedSession() {
    for (auto& p : procs_)
      if (p != nullptr) p->Cleanup();
  }

  /// Builds and starts one more process.
  void Start(const std::string& source) {
    const size_t k = speeds_.size();
    speeds_.emplace_back();
    procs_.emplace_back();
    arenas_.push_back(std::make_unique<TensorArena>(layout_));
    arenas_[k]->set_keep_mapped(true);  // sent to process k alone
    for (size_t i = 0; i < n_in_; ++i) std::memcpy(arenas_[k]->data(i), inputs_[i].data(), inputs_[i].size());
    speeds_[k].case_name = kase_.name;
    CompileResult built = backend_->Build(machine_, source, copts_);
    if (!built.ok) {
      speeds_[k].problem = "it does not build";
      return;
    }
    procs_[k] = backend_->NewProcess(machine_, built.so_path, options_.limits, arenas_[k]->total_bytes());
    procs_[k]->set_cancel(options_.cancel);
    procs_[k]->set_measure_cpu(true);
    LoadResult load = procs_[k]->Start(kSpeedLoadTimeoutMs);
    if (!load.ok)
      Fault(k, "it does not load: " + load.message);
    else if (load.threads_started > 0)  // it would run beside the others while they are timed
      Fault(k, "its static constructors left threads running");
  }

  /// Each process's Bench loop in turn (CUDA events), in batches of `reps` calls, until every
  /// candidate's batch medians are as precise as asked (or the cap or the most calls).
  void TimeOnGpu() {
    std::vector<std::vector<double>> medians(speeds_.size()), p10s(speeds_.size()), p90s(speeds_.size());
    std::vector<int> calls(speeds_.size(), 0);
    const int64_t start = machine_.env().clock().MonotonicNanos();
    const int batch = std::max(1, options_.reps), most = std::max(batch, options_.max_reps);
    SpeedStop stopped = SpeedStop::kReps;
    for (int made = 0; made < most; made += batch) {
      const int n = std::min(batch, most - made);
      // Every batch after the first starts with one untimed call: a batch's first call finds
      // the caches and clocks as the previous one left them.
      const int warmup = made == 0 ? options_.warmup : 1;
      for (size_t k = 0; k < speeds_.size(); ++k) {
        if (!Alive(k)) continue;
        if (options_.cancel != nullptr) options_.cancel->ThrowIfCancelled();
        CaseRun run = procs_[k]->Bench(1, *arenas_[k], n_in_, warmup, n, options_.call_timeout_ms * (n + warmup));
        if (!Kept(k, run)) continue;
        medians[k].push_back(run.timing.median_ns);
        p10s[k].push_back(run.timing.p10_ns);
        p90s[k].push_back(run.timing.p90_ns);
        calls[k] += n;
      }
      if (made + n >= most) break;
      if ((stopped = NextStop(medians, start)) != SpeedStop::kReps) break;
    }
    for (size_t k = 0; k < speeds_.size(); ++k) {
      if (!Alive(k) || medians[k].empty()) continue;
      Speed& s = speeds_[k];
      s.clock = SpeedClock::kCudaEvents;
      s.reps = calls[k];
      // The median batch's median (one slow batch does not move it); the band from the fastest
      // batch's p10 to the slowest's p90, so drift between batches widens it, never hides.
      std::sort(medians[k].begin(), medians[k].end());
      s.median_ns = Quantile(medians[k], 0.5);
      s.p10_ns = *std::min_element(p10s[k].begin(), p10s[k].end());
      s.p90_ns = *std::max_element(p90s[k].begin(), p90s[k].end());
      s.rse = medians[k].size() > 1 ? RelativeStandardError(medians[k]) : 0;
      s.stopped = stopped;
    }
  }

  /// The calls of every process alternate, so a change in the machine's load while they are
  /// timed reaches each of them alike instead of the one that happened to run then; the last
  /// process is the harness, whose median is taken off the others'. Each call is timed by the
  /// CPU time the candidate's processes used (what waiting for a CPU on a busy machine does
  /// not change) or the wall time, whichever is smaller (a kernel's threads add up their CPU
  /// time), or by the engine's wall clock alone where those clocks cannot be read.
  ///
  /// Every call is a round of its own: inputs drawn afresh (a kernel cannot return what it
  /// cached from an earlier call), every output poisoned before it and compared with the
  /// reference after it (one that is right when checked and lazy when timed fails).
  void TimeOnCpu() {
    std::vector<std::vector<double>> wall(speeds_.size()), cpu(speeds_.size());
    bool cpu_readable = true;
    const size_t noop = speeds_.size() - 1;
    const int64_t start = machine_.env().clock().MonotonicNanos();
    SpeedStop stopped = SpeedStop::kReps;
    for (int call = 0; call < options_.warmup + std::max(options_.reps, options_.max_reps); ++call) {
      const int timed = call - options_.warmup;  // calls timed so far
      if (!Alive(noop)) break;                   // nothing is measured without the harness's figure
      if (timed >= options_.reps &&
          (stopped = NextStop(NetOfHarness(cpu_readable ? cpu : wall), start)) != SpeedStop::kReps)
        break;
      Draw(static_cast<uint64_t>(call));
      std::vector<std::vector<std::string>> outputs(noop);
      for (size_t k = 0; k < speeds_.size(); ++k) {
        if (!Alive(k)) continue;
        if (options_.cancel != nullptr) options_.cancel->ThrowIfCancelled();
        Prepare(*arenas_[k]);
        CaseRun run = procs_[k]->Run(static_cast<uint64_t>(call + 1), *arenas_[k], n_in_, options_.call_timeout_ms);
        if (!Kept(k, run)) continue;
        if (run.threads_after > 1) {
          Fault(k, "it left threads running after a call");
          continue;
        }
        if (k < noop)
          for (size_t o = n_in_; o < arenas_[k]->size(); ++o)
            outputs[k].emplace_back(static_cast<const char*>(arenas_[k]->data(o)), arenas_[k]->tensor(o).bytes);
        if (call >= options_.warmup) {
          wall[k].push_back(static_cast<double>(run.engine_wall_ns));
          // The smaller of the two: waiting for a CPU grows the wall time, threads the CPU time.
          cpu[k].push_back(static_cast<double>(std::min(run.engine_cpu_ns, run.engine_wall_ns)));
          cpu_readable = cpu_readable && run.engine_cpu_ns >= 0;
        }
      }
      JudgeOutputs(call, outputs);
    }
    std::vector<std::vector<double>>& times = cpu_readable ? cpu : wall;
    const std::vector<std::vector<double>> net = NetOfHarness(times);
    for (size_t k = 0; k < noop; ++k) {
      speeds_[k].rse = net[k].size() > 1 ? RelativeStandardError(net[k]) : 0;
      speeds_[k].stopped = stopped;
    }
    Summarize(cpu_readable ? SpeedClock::kCpuTime : SpeedClock::kCpuWall, &times);
  }

  /// Each candidate's calls less the harness's call of the same round (the calls alternate, so
  /// round i of each pairs up): the figure reported is net of the harness, and so must be the
  /// precision the timing stops on - a 1 us kernel behind a 30 us harness is not known to 1%
  /// when their sum is.
  std::vector<std::vector<double>> NetOfHarness(const std::vector<std::vector<double>>& times) const {
    const size_t noop = speeds_.size() - 1;
    const std::vector<double>& harness = times[noop];
    std::vector<std::vector<double>> net(noop);
    for (size_t k = 0; k < noop; ++k)
      for (size_t i = 0; i < times[k].size() && i < harness.size(); ++i) net[k].push_back(times[k][i] - harness[i]);
    return net;
  }

  /// Whether timing stops now: every live candidate's samples are as precise as asked, or the
  /// time cap has passed since `start` (kReps: go on).
  SpeedStop NextStop(const std::vector<std::vector<double>>& samples, int64_t start) const {
    bool precise = true;
    for (size_t k = 0; k < samples.size() && precise; ++k)
      if (Alive(k)) precise = RelativeStandardError(samples[k]) <= options_.target_rse;
    if (precise) return SpeedStop::kPrecise;
    if (machine_.env().clock().MonotonicNanos() - start >= options_.time_cap_ms * 1000000) return SpeedStop::kTimeCap;
    return SpeedStop::kReps;
  }

  /// The first `n` speeds, unmeasured ones with their reason.
  std::vector<Speed> Speeds(size_t n) const {
    std::vector<Speed> out(speeds_.begin(), speeds_.begin() + static_cast<std::ptrdiff_t>(n));
    for (Speed& s : out)
      if (!s.problem.empty()) s = NotMeasured(s.problem, s.fault);
    return out;
  }

 private:
  /// Inputs for call `round`, the same for every process, drawn from the session's seed.
  void Draw(uint64_t round) {
    // The case's first seeded distribution: all-ones or arange inputs would be the same every round.
    Distribution dist = Distribution::kNormal;
    for (Distribution d : kase_.distributions)
      if (d != Distribution::kOnes && d != Distribution::kArange) {
        dist = d;
        break;
      }
    inputs_.assign(n_in_, std::string());
    ref_in_.assign(n_in_, RefTensor());
    for (size_t i = 0; i < n_in_; ++i) {
      const ArenaTensor& t = layout_[i];
      inputs_[i].resize(static_cast<size_t>(NumElements(t.shape)) * DTypeSize(t.dtype));
      ref_in_[i].shape = t.shape;
      ref_in_[i].data =
          FillInput(dist, MixSeed(MixSeed(options_.seed, round), i), t.dtype, inputs_[i].data(), t.shape, i);
    }
  }
  /// An arena ready for a call: this round's inputs, poisoned outputs, intact guards.
  void Prepare(TensorArena& arena) const {
    for (size_t i = 0; i < n_in_; ++i) std::memcpy(arena.data(i), inputs_[i].data(), inputs_[i].size());
    for (size_t o = n_in_; o < arena.size(); ++o)
      PoisonOutput(arena.tensor(o).dtype, arena.data(o), NumElements(arena.tensor(o).shape));
    arena.RestoreGuards();
  }
  /// Each candidate's outputs of call `call` against the reference's for its inputs; those of
  /// SpeedOptions::written_only need only have been written.
  void JudgeOutputs(int call, const std::vector<std::vector<std::string>>& outputs) {
    if (reference_ == nullptr) {
      for (size_t k = 0; k < outputs.size(); ++k)
        if (Alive(k)) speeds_[k].problem = "the task has no built-in reference to judge timed calls by";
      return;
    }
    std::vector<std::vector<int64_t>> shapes;
    for (size_t o = n_in_; o < layout_.size(); ++o) shapes.push_back(layout_[o].shape);
    const ExpectedOutputs expected(task_, *reference_, ref_in_, shapes, nullptr);
    const int64_t reduction = EvalExpr(task_.reduction_size, kase_.params);
    for (size_t k = 0; k < outputs.size(); ++k)
      for (size_t o = 0; o < outputs[k].size(); ++o) {
        if (!Alive(k)) break;
        const CompareResult r = expected.Compare(o, layout_[n_in_ + o].dtype, outputs[k][o].data(), reduction);
        if (options_.written_only.count(k) > 0) {
          if (r.unwritten > 0)
            Fault(k, fmt::format("it left {} elements of output '{}' unwritten in timed call {}", r.unwritten,
                                 task_.outputs[o].name, call + 1));
        } else if (!r.passed()) {
          Fault(k, fmt::format("its output '{}' of timed call {} was wrong ({} of {} elements): a kernel must "
                               "compute every call it is timed on",
                               task_.outputs[o].name, call + 1, r.mismatches, NumElements(layout_[n_in_ + o].shape)));
        }
      }
  }

  /// The figures of every candidate from its calls' `times`, less the harness's median.
  void Summarize(SpeedClock clock, std::vector<std::vector<double>>* times) {
    const size_t noop = speeds_.size() - 1;
    for (auto& t : *times) std::sort(t.begin(), t.end());
    const std::vector<double>& harness_times = (*times)[noop];
    const bool harness_timed = Alive(noop) && !harness_times.empty();
    const double harness = harness_timed ? Quantile(harness_times, 0.5) : 0;
    for (size_t k = 0; k < noop; ++k) {
      const std::vector<double>& t = (*times)[k];
      if (Alive(k) && !harness_timed) speeds_[k].problem = "the harness could not be timed: " + speeds_[noop].problem;
      if (Alive(k) && t.empty()) speeds_[k].problem = "no timed call";
      if (!Alive(k)) continue;
      Speed& s = speeds_[k];
      s.clock = clock;
      s.reps = static_cast<int>(t.size());
      s.harness_ns = harness;
      auto net = [&](double q) { return std::max(0.0, Quantile(t, q) - harness); };
      s.median_ns = std::max(kFloorNs, net(0.5));  // within the harness's noise: fast
      s.p10_ns = net(0.1);
      s.p90_ns = std::max(s.median_ns, net(0.9));
    }
  }
  bool Alive(size_t k) const { return procs_[k] != nullptr && speeds_[k].problem.empty(); }
  /// What the candidate did, not a limit of the measurement.
  void Fault(size_t k, std::string why) {
    speeds_[k].problem = std::move(why);
    speeds_[k].fault = true;
  }
  /// Whether call `run` of process `k` returned and left the inputs as they were: what one
  /// call writes into an input the next would read, so the inputs are compared after each
  /// call and put back.
  bool Kept(size_t k, const CaseRun& run) {
    if (run.outcome != CaseRun::Outcome::kReturned || run.rc != 0) {
      Fault(k, fmt::format("a timed call failed ({}, rc {}){}", OutcomeName(run.outcome), run.rc,
                           run.message.empty() ? "" : ": " + run.message));
      return false;
    }
    bool kept = true;
    for (size_t i = 0; i < n_in_; ++i) {
      if (std::memcmp(arenas_[k]->data(i), inputs_[i].data(), inputs_[i].size()) == 0) continue;
      std::memcpy(arenas_[k]->data(i), inputs_[i].data(), inputs_[i].size());
      kept = false;
    }
    if (!kept) {
      Fault(k, "it modified an input while being timed");
      return false;
    }
    for (size_t i = 0; i < arenas_[k]->size(); ++i)
      if (!arenas_[k]->DamagedGuard(i, 1).empty()) {
        Fault(k, "it wrote outside a tensor while being timed");
        return false;
      }
    return true;
  }

  Machine& machine_;
  const Task& task_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Reference> reference_;  ///< null for a task without a built-in reference
  const SpeedOptions& options_;
  const Case& kase_;
  std::vector<ArenaTensor> layout_;
  size_t n_in_;
  std::vector<std::unique_ptr<TensorArena>> arenas_;  ///< process k's
  CompilerOptions copts_;
  std::vector<std::string> inputs_;  ///< this round's, as bytes
  std::vector<RefTensor> ref_in_;    ///< and as the reference takes them
  std::vector<Speed> speeds_;
  std::vector<std::unique_ptr<CandidateProcess>> procs_;
};

}  // namespace

std::vector<Speed> MeasureSpeeds(Machine& machine, const Task& task, BackendKind backend,
                                 const std::vector<std::string>& sources, const SpeedOptions& options) {
  if (SpeedCase(task, backend, options.cases) == nullptr)
    return std::vector<Speed>(sources.size(), NotMeasured("no case to time it on (the near-miss passed none)", false));
  SpeedSession session(machine, task, backend, options);
  for (const auto& source : sources) session.Start(source);
  if (backend == BackendKind::kCuda) {
    session.TimeOnGpu();
  } else {
    session.Start(kNoOpKernel);  // the harness's own work per call
    session.TimeOnCpu();
  }
  return session.Speeds(sources.size());
}

double SpeedRatio(const Speed& before, const Speed& after) {
  if (!before.measured() || !after.measured() || before.clock != after.clock) return 0;
  return before.median_ns / after.median_ns;
}

double ResolutionNs(SpeedClock clock) {
  switch (clock) {
    case SpeedClock::kCpuTime:
      return 20e3;
    case SpeedClock::kCpuWall:
      return 200e3;
    case SpeedClock::kCudaEvents:
      return 2e3;
    case SpeedClock::kNone:
      break;
  }
  return 0;
}

bool SlowerBeyondNoise(const Speed& before, const Speed& after, double fraction) {
  const double ratio = SpeedRatio(before, after);
  if (ratio <= 0 || ratio >= fraction || after.p10_ns <= 0) return false;
  const double resolution = std::max(ResolutionNs(after.clock), after.harness_ns);
  return before.p90_ns / after.p10_ns < fraction && after.p10_ns - before.p90_ns > resolution;
}

}  // namespace kforge
