#include "verify/speed.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/cancel.h"
#include "core/error.h"
#include "exec/arena.h"
#include "exec/candidate_process.h"
#include "exec/machine.h"
#include "verify/backend.h"
#include "verify/inputs.h"
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

std::string_view SpeedClockName(SpeedClock c) {
  switch (c) {
    case SpeedClock::kNone:
      return "none";
    case SpeedClock::kCpuWall:
      return "cpu_wall";
    case SpeedClock::kCudaEvents:
      return "cuda_events";
  }
  return "none";
}

nlohmann::json Speed::ToJson() const {
  if (!measured()) return {{"measured", false}, {"problem", problem}, {"fault", fault}};
  nlohmann::json j = {{"measured", true},      {"clock", SpeedClockName(clock)}, {"case", case_name},
                      {"reps", reps},          {"median_us", median_ns / 1e3},   {"p10_us", p10_ns / 1e3},
                      {"p90_us", p90_ns / 1e3}};
  if (harness_ns > 0) j["harness_us"] = harness_ns / 1e3;
  return j;
}

Speed Speed::FromJson(const nlohmann::json& j) {
  Speed s;
  if (!j.is_object()) return s;
  s.problem = j.value("problem", "");
  s.fault = j.value("fault", false);
  if (!j.value("measured", false)) return s;
  const std::string clock = j.value("clock", "");
  for (SpeedClock c : {SpeedClock::kCpuWall, SpeedClock::kCudaEvents})
    if (clock == SpeedClockName(c)) s.clock = c;
  s.case_name = j.value("case", "");
  s.reps = j.value("reps", 0);
  s.median_ns = j.value("median_us", 0.0) * 1e3;
  s.p10_ns = j.value("p10_us", 0.0) * 1e3;
  s.p90_ns = j.value("p90_us", 0.0) * 1e3;
  s.harness_ns = j.value("harness_us", 0.0) * 1e3;
  return s;
}

const Case& SpeedCase(const Task& task, BackendKind backend) {
  if (backend == BackendKind::kCuda && !task.bench.empty()) return task.bench.front();
  const Case* best = nullptr;
  for (const auto* set : {&task.full, &task.light})
    for (const auto& c : *set)
      if (best == nullptr || CaseElements(task, c) > CaseElements(task, *best)) best = &c;
  if (best == nullptr) throw UsageError("task '" + task.name + "' has no cases to time");
  return *best;
}

std::vector<Speed> MeasureSpeeds(Machine& machine, const Task& task, BackendKind backend_kind,
                                 const std::vector<std::string>& sources, const SpeedOptions& options) {
  std::unique_ptr<Backend> backend = MakeBackend(backend_kind);
  backend->Prepare(machine);
  CompilerOptions copts;
  copts.cache_dir = options.cache_dir.empty() ? machine.config().cache_dir : options.cache_dir;
  const Case& kase = SpeedCase(task, backend_kind);
  TensorArena arena(CaseLayout(task, kase.params));
  const size_t n_in = task.inputs.size();
  const Distribution dist = kase.distributions.empty() ? Distribution::kNormal : kase.distributions.front();
  for (size_t i = 0; i < n_in; ++i)
    FillInput(dist, MixSeed(options.seed, i), arena.tensor(i).dtype, arena.data(i), arena.tensor(i).shape, i);

  // One process per source; on the CPU the last one is the no-op kernel, the harness.
  std::vector<std::string> all = sources;
  if (backend_kind != BackendKind::kCuda) all.push_back(kNoOpKernel);
  std::vector<Speed> speeds(all.size());
  std::vector<std::unique_ptr<CandidateProcess>> procs(all.size());
  auto fault = [&](size_t k, std::string why) {  // what the candidate did, not the measurement
    speeds[k].problem = std::move(why);
    speeds[k].fault = true;
  };
  for (size_t k = 0; k < all.size(); ++k) {
    speeds[k].case_name = kase.name;
    CompileResult built = backend->Build(machine, all[k], copts);
    if (!built.ok) {
      speeds[k].problem = "it does not build";
      continue;
    }
    procs[k] = backend->NewProcess(machine, built.so_path, options.limits, arena.total_bytes());
    procs[k]->set_cancel(options.cancel);
    LoadResult load = procs[k]->Start(kSpeedLoadTimeoutMs);
    if (!load.ok)
      fault(k, "it does not load: " + load.message);
    else if (load.threads_started > 0)  // it would run beside the others while they are timed
      fault(k, "its static constructors left threads running");
  }
  // Every process maps the same arena: what one call writes into an input, the next one
  // would read. The inputs are compared after each call and put back.
  std::vector<std::string> inputs;
  for (size_t i = 0; i < n_in; ++i) inputs.emplace_back(static_cast<const char*>(arena.data(i)), arena.tensor(i).bytes);
  auto inputs_kept = [&] {
    bool kept = true;
    for (size_t i = 0; i < n_in; ++i) {
      if (std::memcmp(arena.data(i), inputs[i].data(), inputs[i].size()) == 0) continue;
      std::memcpy(arena.data(i), inputs[i].data(), inputs[i].size());
      kept = false;
    }
    return kept;
  };
  auto failed = [](const CaseRun& run) {
    return fmt::format("a timed call failed ({}, rc {}){}", OutcomeName(run.outcome), run.rc,
                       run.message.empty() ? "" : ": " + run.message);
  };
  auto alive = [&](size_t k) { return procs[k] != nullptr && speeds[k].problem.empty(); };
  if (backend_kind == BackendKind::kCuda) {
    for (size_t k = 0; k < all.size(); ++k) {
      if (!alive(k)) continue;
      CaseRun run =
          procs[k]->Bench(1, arena, n_in, options.warmup, options.reps, options.call_timeout_ms * options.reps);
      if (run.outcome != CaseRun::Outcome::kReturned || run.rc != 0) {
        fault(k, failed(run));
        continue;
      }
      if (!inputs_kept()) {
        fault(k, "it modified an input while being timed");
        continue;
      }
      speeds[k].clock = SpeedClock::kCudaEvents;
      speeds[k].reps = run.timing.reps;
      speeds[k].median_ns = run.timing.median_ns;
      speeds[k].p10_ns = run.timing.p10_ns;
      speeds[k].p90_ns = run.timing.p90_ns;
    }
  } else {
    // The calls of every process alternate, so a change in the machine's load while they are
    // timed reaches each of them alike instead of the one that happened to run then.
    std::vector<std::vector<double>> wall(all.size());
    for (int call = 0; call < options.warmup + options.reps; ++call)
      for (size_t k = 0; k < all.size(); ++k) {
        if (!alive(k)) continue;
        if (options.cancel != nullptr) options.cancel->ThrowIfCancelled();
        CaseRun run = procs[k]->Run(static_cast<uint64_t>(call + 1), arena, n_in, options.call_timeout_ms);
        if (run.outcome != CaseRun::Outcome::kReturned || run.rc != 0)
          fault(k, failed(run));
        else if (!inputs_kept())
          fault(k, "it modified an input while being timed");
        else if (run.threads_after > 1)
          fault(k, "it left threads running after a call");
        else if (call >= options.warmup)
          wall[k].push_back(static_cast<double>(run.engine_wall_ns));
      }
    const size_t noop = all.size() - 1;
    for (auto& w : wall) std::sort(w.begin(), w.end());
    const bool harness_timed = alive(noop) && !wall[noop].empty();
    const double harness = harness_timed ? Quantile(wall[noop], 0.5) : 0;
    for (size_t k = 0; k < noop; ++k) {
      if (alive(k) && !harness_timed) speeds[k].problem = "the harness could not be timed: " + speeds[noop].problem;
      if (alive(k) && wall[k].empty()) speeds[k].problem = "no timed call";
      if (!alive(k)) continue;
      Speed& s = speeds[k];
      s.clock = SpeedClock::kCpuWall;
      s.reps = static_cast<int>(wall[k].size());
      s.harness_ns = harness;
      auto net = [&](double q) { return std::max(0.0, Quantile(wall[k], q) - harness); };
      s.median_ns = std::max(kFloorNs, net(0.5));  // within the harness's noise: fast
      s.p10_ns = net(0.1);
      s.p90_ns = std::max(s.median_ns, net(0.9));
    }
  }
  for (auto& p : procs)
    if (p != nullptr) p->Cleanup();
  speeds.resize(sources.size());
  for (Speed& s : speeds)
    if (!s.problem.empty()) s = NotMeasured(s.problem, s.fault);
  return speeds;
}

double SpeedRatio(const Speed& before, const Speed& after) {
  if (!before.measured() || !after.measured() || before.clock != after.clock) return 0;
  return before.median_ns / after.median_ns;
}

bool SlowerBeyondNoise(const Speed& before, const Speed& after, double fraction) {
  const double ratio = SpeedRatio(before, after);
  if (ratio <= 0 || ratio >= fraction || after.p10_ns <= 0) return false;
  return before.p90_ns / after.p10_ns < fraction;
}

}  // namespace kforge
