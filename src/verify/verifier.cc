#include "verify/verifier.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "core/cancel.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/text.h"
#include "exec/arena.h"
#include "exec/candidate_process.h"
#include "exec/compiler.h"
#include "exec/device.h"
#include "exec/machine.h"
#include "verify/backend.h"
#include "verify/certification.h"
#include "verify/determinism.h"
#include "verify/expected_outputs.h"
#include "verify/failed_cases.h"
#include "verify/inputs.h"
#include "verify/reference.h"
#include "verify/static_checks.h"
#include "verify/trial_checks.h"

namespace kforge {
namespace {

/// Candidates larger than this are refused at L0: no kernel needs a megabyte of source.
constexpr size_t kMaxSourceBytes = 1 << 20;
/// A set stops after this many process deaths; each later case would need a new process.
constexpr int kMaxRestarts = 3;
/// Shapes drawn at random (from the run seed) on every --full run.
constexpr int kRandomShapes = 2;
/// Trial ids seed a trial's inputs. The extra runs that gather evidence (the all-ones
/// diagnostic, the sanitizer's re-runs) use ids far past any set's trial count, so their
/// inputs never coincide with a judged trial's.
constexpr uint64_t kDiagnosticTrial = 999999;
constexpr uint64_t kSanitizerTrial = 777777;

/// Whether a trial's findings count towards the verdict, or are evidence for forensics
/// only (re-runs under a tool).
enum class TrialUse { kJudged, kEvidence };

double Seconds(Clock& clock, int64_t since_ns) { return (clock.MonotonicNanos() - since_ns) / 1e9; }

/// A probe's statistics beside the reference intermediate of the same name.
ProbeEvidence CompareProbe(const ProbeStats& p, const Intermediates& inter) {
  ProbeEvidence e;
  e.stats = p;
  auto it = inter.find(p.name);
  if (it == inter.end() || it->second.empty()) {
    e.matches = p.nan_count == 0 && p.inf_count == 0;
    return e;
  }
  e.has_reference = true;
  double sum = 0;
  e.ref_min = INFINITY;
  e.ref_max = -INFINITY;
  for (double v : it->second) {
    sum += v;
    e.ref_min = std::min(e.ref_min, v);
    e.ref_max = std::max(e.ref_max, v);
  }
  e.ref_mean = sum / static_cast<double>(it->second.size());
  auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-3 * (std::fabs(a) + std::fabs(b)) + 1e-6; };
  e.matches = p.nan_count == 0 && p.inf_count == 0 && p.count == static_cast<int64_t>(it->second.size()) &&
              close(p.mean, e.ref_mean) && close(p.min, e.ref_min) && close(p.max, e.ref_max);
  return e;
}

FailureClass ClassifyOutcome(CaseRun::Outcome o) {
  switch (o) {
    case CaseRun::Outcome::kReturned:
      return FailureClass::kNone;
    case CaseRun::Outcome::kTimedOut:
      return FailureClass::kTimeout;
    case CaseRun::Outcome::kOutOfMemory:
    case CaseRun::Outcome::kFileSizeLimit:
      return FailureClass::kResourceLimit;
    case CaseRun::Outcome::kForbiddenSyscall:
    case CaseRun::Outcome::kProtocolViolation:
      return FailureClass::kIntegrity;
    case CaseRun::Outcome::kCrashed:
    case CaseRun::Outcome::kDeviceError:
    case CaseRun::Outcome::kRunnerLost:
      return FailureClass::kRuntimeError;
  }
  return FailureClass::kRuntimeError;
}

/// The sandbox rule a trapped system call broke. A call trapped while signals were blocked
/// (posix_spawn blocks them around its clone) arrives without a number.
std::string ForbiddenSyscallCheck(int syscall_nr) {
  if (syscall_nr < 0) return "sandbox.process_spawn";
  std::string name = SyscallName(syscall_nr);
  if (name == "socket" || name == "connect") return "sandbox.network";
  for (const char* proc : {"fork", "vfork", "clone", "clone3", "execve", "execveat"})
    if (name == proc) return "sandbox.process_spawn";
  return "sandbox.forbidden_syscall";
}

class Run {
 public:
  Run(Machine& machine, const Backend& backend, Reference& reference, const Task& task, const VerifyOptions& options,
      Verdict* verdict)
      : machine_(machine),
        backend_(backend),
        clock_(machine.env().clock()),
        task_(task),
        options_(options),
        verdict_(verdict),
        reference_(reference),
        deadline_ns_(clock_.MonotonicNanos() + options.total_timeout_ms * 1000000) {}

  /// Runs every trial of one set; returns true when all passed.
  bool RunSet(const std::string& so_path, const std::vector<Case>& cases, TrialSet set) {
    size_t max_arena = 0;
    for (const auto& c : cases) max_arena = std::max(max_arena, ArenaBytes(c.params));
    std::unique_ptr<CandidateProcess> proc;
    int restarts = 0;
    bool all_passed = true;
    uint64_t trial = 0;
    // Every process ends here: scanned once more after it has exited (a static destructor
    // may write late), and its directories removed, loudly.
    auto retire = [&]() -> bool {
      if (!proc) return true;
      proc->Finish(2000, 0);
      bool clean = CheckEscapes(*proc);
      std::string error = proc->Cleanup();
      if (!error.empty()) verdict_->cleanup_errors.push_back(error);
      proc.reset();
      return clean;
    };
    for (const auto& kase : cases) {
      std::vector<Distribution> dists = kase.distributions;
      if (options_.force_distribution) dists = {*options_.force_distribution};
      for (Distribution dist : dists) {
        ++trial;
        if (options_.cancel != nullptr && options_.cancel->cancelled()) {
          retire();
          options_.cancel->ThrowIfCancelled();
        }
        if (OutOfTime()) {
          CaseEvidence ev = NewEvidence(set, kase, dist, trial);
          ev.failure = FailureClass::kTimeout;
          ev.outcome = "not_run";
          ev.message = "the verification's time limit (" + std::to_string(options_.total_timeout_ms / 1000) +
                       " s) ran out before this case";
          Finish(std::move(ev));
          retire();
          return false;
        }
        if (!proc || !proc->alive()) {
          if (!retire()) return false;
          if (restarts++ > kMaxRestarts) return false;
          proc = backend_.NewProcess(machine_, so_path, options_.limits, max_arena);
          proc->set_cancel(options_.cancel);
          LoadResult load = proc->Start(std::min(options_.load_timeout_ms, MillisLeft()));
          if (verdict_->sandbox_layers.empty()) verdict_->sandbox_layers = proc->Layers();
          if (!load.ok) {
            CaseEvidence ev = NewEvidence(set, kase, dist, trial);
            ev.failure = load.timed_out ? FailureClass::kTimeout : FailureClass::kRuntimeError;
            ev.outcome = "load_failed";
            ev.message = load.message;
            Finish(std::move(ev));
            retire();
            return false;
          }
          if (load.threads_started > 0)
            AddIntegrity("runtime.thread_at_load",
                         std::to_string(load.threads_started) +
                             " thread(s) started by the candidate's static constructors were still running when "
                             "it finished loading (work outside any call)");
        }
        CaseEvidence ev = RunTrial(*proc, set, kase, dist, trial, TrialUse::kJudged);
        bool passed = ev.passed();
        // A timeout would likely repeat at full cost in every later trial, and a sandbox
        // violation already decides the verdict: stop the set on either.
        bool stop = ev.failure == FailureClass::kTimeout || ev.failure == FailureClass::kIntegrity;
        Finish(std::move(ev));
        all_passed &= passed;
        if (!CheckEscapes(*proc)) stop = true;
        if (stop) {
          retire();
          return false;
        }
      }
    }
    bool clean = retire();
    return all_passed && clean && verdict_->integrity.empty();
  }

  /// One trial with its outputs' bytes (verify --determinism), in a new process or in the
  /// previous call's.
  TrialBytes OutputsOf(const std::string& so_path, const Bindings& params, Distribution dist, uint64_t trial,
                       bool fresh) {
    Case kase{"determinism", params, {dist}};
    TrialBytes out;
    if (fresh || !determinism_proc_ || !determinism_proc_->alive()) {
      if (determinism_proc_) {
        determinism_proc_->Finish(2000, 0);
        if (std::string e = determinism_proc_->Cleanup(); !e.empty()) verdict_->cleanup_errors.push_back(e);
      }
      determinism_proc_ = backend_.NewProcess(machine_, so_path, options_.limits, ArenaBytes(params));
      determinism_proc_->set_cancel(options_.cancel);
      LoadResult load = determinism_proc_->Start(options_.load_timeout_ms);
      if (!load.ok) {
        out.failure = load.message;
        return out;
      }
    }
    CaseEvidence ev =
        RunTrial(*determinism_proc_, TrialSet::kDeterminism, kase, dist, trial, TrialUse::kEvidence, 1, &out.outputs);
    out.ok = ev.passed();
    if (!out.ok) out.failure = ev.message.empty() ? std::string(FailureClassName(ev.failure)) : ev.message;
    return out;
  }
  void EndDeterminism() {
    if (!determinism_proc_) return;
    determinism_proc_->Finish(2000, 0);
    if (std::string e = determinism_proc_->Cleanup(); !e.empty()) verdict_->cleanup_errors.push_back(e);
    determinism_proc_.reset();
  }

  /// The sanitizer pass (VerifyOptions::sanitize): re-runs a failing case twice on identical
  /// inputs, each in a fresh process; results that differ point to a race (racecheck), an
  /// out-of-bounds write or a device error to memcheck. Runs that tool on the case.
  nlohmann::json RunSanitizer(const std::string& so_path, const Case& kase, Distribution dist, FailureClass failure) {
    return SanitizerPass(so_path, kase, dist, failure);
  }

  /// One extra trial of `kase` with all-ones inputs, recorded in set "diagnostic".
  void RunDiagnostic(const std::string& so_path, const Case& kase) {
    auto proc = backend_.NewProcess(machine_, so_path, options_.limits, ArenaBytes(kase.params));
    proc->set_cancel(options_.cancel);
    if (!proc->Start(options_.load_timeout_ms).ok) return;
    CaseEvidence ev =
        RunTrial(*proc, TrialSet::kDiagnostic, kase, Distribution::kOnes, kDiagnosticTrial, TrialUse::kJudged);
    verdict_->cases.push_back(std::move(ev));
  }

 private:
  nlohmann::json SanitizerPass(const std::string& so_path, const Case& kase, Distribution dist, FailureClass failure) {
    nlohmann::json j;
    auto once = [&]() -> std::optional<CaseEvidence> {
      auto proc = backend_.NewProcess(machine_, so_path, options_.limits, ArenaBytes(kase.params));
      proc->set_cancel(options_.cancel);
      if (!proc->Start(options_.load_timeout_ms).ok) return std::nullopt;
      return RunTrial(*proc, TrialSet::kSanitizer, kase, dist, kSanitizerTrial, TrialUse::kEvidence);
    };
    auto stats = [](const CaseEvidence& e) {
      std::string s = e.outcome;
      for (const auto& o : e.outputs)
        s += fmt::format("|{} {} {} {:.17g} {:.17g}", o.compare.mismatches, o.compare.unwritten,
                         o.compare.nan_inf_mismatches, o.compare.max_abs_error, o.compare.rel_l2_error);
      return s;
    };
    auto a = once(), b = once();
    bool nondeterministic = a && b && stats(*a) != stats(*b);
    j["case"] = kase.name;
    j["distribution"] = std::string(DistributionName(dist));
    j["nondeterministic"] = nondeterministic;
    std::optional<std::string> tool = SanitizerToolFor(nondeterministic, failure);
    if (!tool) {
      j["skipped"] =
          "identical inputs gave identical results and nothing was written out of bounds: neither a race "
          "nor a memory error is indicated";
      return j;
    }
    j["tool"] = *tool;
    std::string sanitizer;
    try {
      sanitizer = machine_.ComputeSanitizer();
    } catch (const EnvironmentError& e) {
      j["skipped"] = e.what();
      return j;
    }
    auto owned = backend_.NewProcess(machine_, so_path, options_.limits, ArenaBytes(kase.params));
    CandidateProcess& proc = *owned;
    proc.set_cancel(options_.cancel);
    proc.set_tool({sanitizer, "--tool", *tool, "--print-limit", "20", "--show-backtrace", "no"});
    if (!proc.Start(options_.load_timeout_ms * 6).ok) {
      j["skipped"] = "the candidate did not load under compute-sanitizer: " + proc.Finish(5000, 2048);
      return j;
    }
    RunTrial(proc, TrialSet::kSanitizer, kase, dist, kSanitizerTrial, TrialUse::kEvidence,
             /*timeout_scale=*/30);  // slow
    SanitizerReport report = ParseSanitizerReport(proc.Finish(60000));
    j["errors"] = report.errors;
    j["report"] = report.findings;
    return j;
  }

  /// The arena for a trial of `proc`: the one its last trial used when the shapes are the same
  /// (its guards restored; every input and output is written anew before the call), so that
  /// neither process pays for fresh pages again and the runner keeps its mapping; else a new
  /// one. An arena serves one process alone.
  TensorArena& ArenaFor(const CandidateProcess& proc, const Bindings& params) {
    std::vector<ArenaTensor> layout = CaseLayout(task_, params);
    if (arena_ && arena_pid_ == proc.pid() && arena_->Fits(layout)) {
      arena_->RestoreGuards();
      return *arena_;
    }
    arena_.reset();
    arena_ = std::make_unique<TensorArena>(std::move(layout));
    arena_->set_keep_mapped(true);
    arena_pid_ = proc.pid();
    return *arena_;
  }

  size_t ArenaBytes(const Bindings& params) const {
    std::vector<size_t> sizes;
    for (const auto& t : CaseLayout(task_, params))
      sizes.push_back(static_cast<size_t>(NumElements(t.shape)) * DTypeSize(t.dtype));
    return TensorArena::BytesFor(sizes);
  }

  CaseEvidence NewEvidence(TrialSet set, const Case& kase, Distribution dist, uint64_t trial) const {
    CaseEvidence ev;
    ev.set = set;
    ev.name = kase.name;
    ev.params = kase.params;
    ev.distribution = std::string(DistributionName(dist));
    ev.seed = MixSeed(verdict_->seed, (set == TrialSet::kFull ? 1ULL << 32 : 0) + trial);
    return ev;
  }

  void Finish(CaseEvidence ev) {
    verdict_->run_seconds += ev.run_ms / 1000;
    verdict_->reference_seconds += ev.reference_ms / 1000;
    verdict_->cases.push_back(std::move(ev));
  }

  void AddIntegrity(const std::string& check, const std::string& detail, TrialUse use = TrialUse::kJudged) {
    if (use == TrialUse::kEvidence) return;  // re-runs under a tool are evidence for forensics, not the verdict
    AddFinding(&verdict_->integrity, check, detail);
  }

  /// Looks for writes outside scratch; false (and an integrity finding) when there are any.
  bool CheckEscapes(const CandidateProcess& proc) {
    Clock& clock = clock_;
    int64_t deadline = std::min(deadline_ns_, clock.MonotonicNanos() + kEscapeScanMillis * 1000000);
    EscapeScan scan = proc.EscapedWrites(deadline);
    if (scan.count == 0 && scan.incomplete.empty()) return true;
    std::string detail;
    if (scan.count > 0) {
      detail = "the candidate created or replaced " + std::to_string(scan.count) +
               " path(s) outside its scratch directory: ";
      for (size_t i = 0; i < scan.first.size(); ++i) detail += (i ? ", " : "") + scan.first[i];
      if (scan.count > static_cast<int64_t>(scan.first.size())) detail += ", ...";
    }
    if (!scan.incomplete.empty())
      detail +=
          std::string(detail.empty() ? "" : "; ") + "the jail could not be fully inspected (" + scan.incomplete + ")";
    AddIntegrity("sandbox.write_outside_scratch", CutText(detail, 1000));
    return false;
  }

  bool OutOfTime() const { return clock_.MonotonicNanos() >= deadline_ns_; }
  int64_t MillisLeft() const { return std::max<int64_t>(1, (deadline_ns_ - clock_.MonotonicNanos()) / 1000000); }

  CaseEvidence RunTrial(CandidateProcess& proc, TrialSet set, const Case& kase, Distribution dist, uint64_t trial,
                        TrialUse use, int64_t timeout_scale = 1, std::vector<std::string>* output_bytes = nullptr) {
    Clock& clock = clock_;
    CaseEvidence ev = NewEvidence(set, kase, dist, trial);
    ev.pid = proc.pid();
    TensorArena& arena = ArenaFor(proc, kase.params);
    size_t n_in = task_.inputs.size();

    std::vector<RefTensor> ref_in(n_in);
    std::vector<std::vector<int64_t>> out_shapes;
    std::vector<std::string> input_copies(n_in);
    for (size_t i = 0; i < n_in; ++i) {
      const ArenaTensor& t = arena.tensor(i);
      ref_in[i].shape = t.shape;
      ref_in[i].data = FillInput(dist, MixSeed(ev.seed, i), t.dtype, arena.data(i), t.shape, i);
      input_copies[i].assign(static_cast<const char*>(arena.data(i)), t.bytes);
    }
    for (size_t o = 0; o < task_.outputs.size(); ++o) {
      const ArenaTensor& t = arena.tensor(n_in + o);
      out_shapes.push_back(t.shape);
      PoisonOutput(t.dtype, arena.data(n_in + o), NumElements(t.shape));
    }
    int64_t run_start = clock.MonotonicNanos();
    CaseRun run = proc.Run(trial, arena, n_in, std::min(options_.case_timeout_ms * timeout_scale, MillisLeft()));
    ev.run_ms = Seconds(clock, run_start) * 1000;
    // The reference exists only after the candidate's call has returned (expected_outputs.h).
    int64_t ref_start = clock.MonotonicNanos();
    Intermediates inter;
    const ExpectedOutputs expected(task_, reference_, ref_in, out_shapes, options_.probes ? &inter : nullptr);
    ev.reference_ms = Seconds(clock, ref_start) * 1000;
    ev.outcome = std::string(OutcomeName(run.outcome));
    ev.threads_after = run.threads_after;
    ev.kernels_on_stream = run.kernels_on_stream;
    ev.kernels_off_stream = run.kernels_off_stream;
    bool hidden_launches = CheckKernelLaunches(run, use);
    for (const auto& p : run.probes) ev.probes.push_back(CompareProbe(p, inter));
    if (run.l2_persistence)
      AddIntegrity("runtime.l2_persistence",
                   "the candidate set a persisting-L2 limit or an access-policy window (data kept in L2 across the "
                   "timer's flush)",
                   use);
    if (run.outcome == CaseRun::Outcome::kReturned && run.threads_after > 1)
      AddIntegrity("runtime.lingering_threads",
                   "threads were still running after kforge_run returned (work hidden from the timer)", use);
    if (run.outcome != CaseRun::Outcome::kReturned) {
      ev.failure = ClassifyOutcome(run.outcome);
      ev.message = run.message;
      if (run.outcome == CaseRun::Outcome::kForbiddenSyscall)
        AddIntegrity(ForbiddenSyscallCheck(run.syscall_nr), run.message, use);
      if (run.outcome == CaseRun::Outcome::kProtocolViolation) AddIntegrity("runtime.forged_reply", run.message, use);
      std::string tail = proc.OutputTail(1024);
      if (!tail.empty()) ev.message += "\ncandidate output (tail):\n" + tail;
      return ev;
    }
    if (run.rc != 0) {
      ev.failure = FailureClass::kRuntimeError;
      ev.message = "kforge_run returned " + std::to_string(run.rc) + " (expected 0)";
      return ev;
    }
    // Evidence, strongest first: writes outside the outputs, mutated inputs, then numbers.
    for (size_t i = 0; i < n_in; ++i) {
      const ArenaTensor& t = arena.tensor(i);
      if (std::memcmp(arena.data(i), input_copies[i].data(), t.bytes) != 0)
        ev.mutated_inputs.push_back(task_.inputs[i].name);
      if (!arena.DamagedGuard(i).empty()) ev.damaged_input_guards.push_back(task_.inputs[i].name);
    }
    // Caching: identical output bytes for the same shapes but different inputs mean the
    // candidate returned an earlier call's result.
    std::string shape_key, input_digest, output_digest;
    std::vector<std::string> output_sha256;
    for (size_t i = 0; i < arena.size(); ++i)
      for (int64_t d : arena.tensor(i).shape) shape_key += std::to_string(d) + (i < n_in ? "," : ";");
    // Inputs are a function of (distribution, seed); the deterministic modes ignore the seed.
    bool seeded = dist != Distribution::kOnes && dist != Distribution::kArange;
    input_digest = std::string(DistributionName(dist)) + (seeded ? ":" + std::to_string(ev.seed) : "");
    for (size_t o = 0; o < task_.outputs.size(); ++o) {
      const std::string_view bytes(static_cast<const char*>(arena.data(n_in + o)), arena.tensor(n_in + o).bytes);
      output_sha256.push_back(Sha256Hex(bytes));
      output_digest += output_sha256.back();
      verdict_->KeepOutput(output_sha256.back(), bytes);
      if (output_bytes != nullptr) output_bytes->emplace_back(bytes);
    }
    size_t out_elements = 0;
    for (size_t o = 0; o < task_.outputs.size(); ++o)
      out_elements += static_cast<size_t>(NumElements(arena.tensor(n_in + o).shape));
    FailureClass worst = FailureClass::kNone;
    int64_t reduction = EvalExpr(task_.reduction_size, kase.params);
    for (size_t o = 0; o < task_.outputs.size(); ++o) {
      const ArenaTensor& t = arena.tensor(n_in + o);
      OutputEvidence out;
      out.name = task_.outputs[o].name;
      out.sha256 = output_sha256[o];
      out.guard_damage = arena.DamagedGuard(n_in + o);
      out.compare = expected.Compare(o, t.dtype, arena.data(n_in + o), reduction);
      if (!out.guard_damage.empty()) {
        worst = FailureClass::kOutOfBoundsWrite;
      } else if (!out.compare.passed() && worst == FailureClass::kNone) {
        worst = ClassifyNumeric(out.compare);
      }
      ev.outputs.push_back(std::move(out));
    }
    if (!ev.damaged_input_guards.empty() || worst == FailureClass::kOutOfBoundsWrite) {
      ev.failure = FailureClass::kOutOfBoundsWrite;
      ev.message = "the candidate wrote outside the bounds of a tensor";
    } else if (!ev.mutated_inputs.empty()) {
      ev.failure = FailureClass::kInputMutated;
      ev.message = "the candidate modified input '" + ev.mutated_inputs.front() + "'";
    } else {
      ev.failure = worst;
    }
    const bool stale = stale_.Observe(shape_key, input_digest, output_digest, out_elements, ev.passed());
    if (stale && worst != FailureClass::kNone) {
      AddIntegrity("runtime.stale_output",
                   "the outputs of case '" + kase.name +
                       "' are byte-identical to an earlier correct call's whose inputs differed "
                       "(results cached, or not computed from the inputs)",
                   use);
      ev.failure = FailureClass::kIntegrity;
    }
    if (run.threads_after > 1 || hidden_launches || run.l2_persistence) ev.failure = FailureClass::kIntegrity;
    return ev;
  }

  /// GPU launch accounting (trial_checks.h). Returns true on a violation.
  bool CheckKernelLaunches(const CaseRun& run, TrialUse use) {
    if (!backend_.counts_launches() || use == TrialUse::kEvidence) return false;
    LaunchJudgement j = JudgeLaunches(run);
    if (j.accounting == "cupti" || verdict_->launch_accounting.empty()) verdict_->launch_accounting = j.accounting;
    for (const auto& f : j.findings) AddIntegrity(f.check, f.detail, use);
    return j.violation();
  }

  Machine& machine_;
  const Backend& backend_;
  Clock& clock_;
  const Task& task_;
  const VerifyOptions& options_;
  Verdict* verdict_;
  Reference& reference_;
  int64_t deadline_ns_;
  static constexpr int64_t kEscapeScanMillis = 5000;
  StaleOutputs stale_;
  std::unique_ptr<CandidateProcess> determinism_proc_;  ///< the process a determinism repeat reuses
  std::unique_ptr<TensorArena> arena_;                  ///< the last trial's (ArenaFor)
  int64_t arena_pid_ = -1;                              ///< the process it was sent to
};

}  // namespace

std::vector<ArenaTensor> CaseLayout(const Task& task, const Bindings& params) {
  std::vector<ArenaTensor> layout;
  for (const auto* list : {&task.inputs, &task.outputs})
    for (const auto& t : *list) layout.push_back(ArenaTensor{t.dtype, ResolveShape(t, params)});
  return layout;
}

std::string_view KforgeVersion() { return "0.1.0"; }

Verifier::Verifier(const Task& task, Machine& machine, std::unique_ptr<Reference> reference)
    : task_(task), machine_(machine), reference_(std::move(reference)) {
  if (reference_ == nullptr) throw UsageError("task " + task.origin + ": no reference given");
}

Verifier::Verifier(const Task& task, Machine& machine)
    : task_(task), machine_(machine), reference_(MakeBuiltinReference(task.reference)) {
  if (reference_ == nullptr)
    throw UsageError("task " + task.origin + ": unknown reference '" + task.reference +
                     "'; built-in references are listed by 'kforge tasks --references'");
}

Verdict Verifier::Verify(const std::string& candidate_path, const VerifyOptions& options) {
  std::string source, error;
  if (!TryReadFile(candidate_path, &source, &error))
    throw UsageError("cannot read candidate " + candidate_path + ": " + error);
  return VerifySource(source, candidate_path, options);
}

namespace {

/// Why `source` is not a candidate for `backend` at all (empty, binary, too large, without
/// the entry point), before any other check; "" when it is one.
std::string SourceProblem(const std::string& source, const Backend& backend) {
  if (source.empty()) return "the candidate file is empty";
  if (source.size() > kMaxSourceBytes || source.find('\0') != std::string::npos)
    return "the candidate is not a C++ source file (binary data or larger than 1 MiB)";
  return backend.AbiProblem(source);
}

/// Every light case twice with different data, so a candidate that caches results across
/// calls (keyed by pointer or shape) is caught even when only the light set runs.
std::vector<Case> LightCasesTwice(const Task& task) {
  std::vector<Case> light = task.light;
  for (const auto& c : task.light) {
    Case again = c;
    again.name += "#repeat";
    light.push_back(again);
  }
  return light;
}

/// The task with its full set certified: the published full set, then what no list can be
/// tuned to: fixed adversarial inputs (whatever the seed) and shapes drawn from the verdict's
/// seed within the task's bounds, which the verdict records.
Task CertifiedCases(const Task& task, Verdict* v) {
  Task certified = task;
  for (auto& c : FixedInputCases(task)) certified.full.push_back(std::move(c));
  for (auto& c : RandomShapeCases(task, MixSeed(v->seed, 0xf0115), kRandomShapes)) {
    v->random_shapes.push_back(c.params);
    certified.full.push_back(std::move(c));
  }
  for (Distribution d : FixedInputsFor(task)) v->fixed_inputs.emplace_back(DistributionName(d));
  return certified;
}

/// A verdict's header: what is judged, from where, with which seed and backend.
Verdict NewVerdict(const Task& task, const std::string& source, const std::string& label, const VerifyOptions& options,
                   Machine& machine) {
  Verdict v;
  v.task_name = task.name;
  v.task_origin = task.origin;
  v.task_sha256 = task.sha256;
  v.candidate_path = UntrustedText(label);
  v.candidate_sha256 = Sha256Hex(source);
  v.kforge_version = std::string(KforgeVersion());
  v.seed = options.seed ? *options.seed : machine.env().entropy().FreshSeed();
  v.full_requested = options.full;
  v.backend = options.backend;
  return v;
}

/// L1: the candidate compiled in the sandbox, with the evidence in the verdict; on failure the
/// verdict says why.
CompileResult CompileCandidate(Machine& machine, Backend& backend, const std::string& source,
                               const VerifyOptions& options, Verdict* v) {
  v->sandbox = std::string(SandboxModeName(machine.Sandbox()));
  CompilerOptions copts;
  copts.cache_dir = options.cache_dir;
  copts.probes = options.probes;
  v->probes = options.probes;
  if (options.trusted) copts.extra_flags = options.trusted_link_flags;
  CompileResult compiled = backend.Build(machine, source, copts);
  v->compile = CompileEvidence{
      true,           compiled.ok,  compiled.cached, compiled.seconds, compiled.compiler, compiled.compiler_version,
      compiled.flags, compiled.log, compiled.pid};
  if (!compiled.ok) {
    v->failure = compiled.timed_out ? FailureClass::kTimeout : FailureClass::kBuildError;
    v->message = compiled.timed_out ? "compilation timed out" : "the candidate does not compile";
  }
  return compiled;
}

}  // namespace

Verdict Verifier::VerifySource(const std::string& source, const std::string& label, const VerifyOptions& options) {
  Clock& clock = machine_.env().clock();
  int64_t start = clock.MonotonicNanos();
  Verdict v = NewVerdict(task_, source, label, options, machine_);
  std::unique_ptr<Backend> backend = MakeBackend(options.backend);
  v.device = backend->Prepare(machine_);  // no GPU for cuda: an environment error, before any work
  auto done = [&]() -> Verdict {
    // A verification the user stopped returns no verdict: its last trial may have been cut.
    if (options.cancel != nullptr) options.cancel->ThrowIfCancelled();
    v.total_seconds = Seconds(clock, start);
    if (!v.integrity.empty()) {
      v.passed = false;
      v.failure = FailureClass::kIntegrity;
    }
    if (!v.passed && v.message.empty()) v.message = DescribeFailure(v);
    return v;
  };

  // L0: static checks on the source text.
  if (std::string problem = SourceProblem(source, *backend); !problem.empty()) {
    v.failure = FailureClass::kBuildError;
    v.message = problem;
    return done();
  }
  // Static integrity checks, recomputed at every validation: a cheating source is rejected
  // before it is compiled, whatever its numbers would have been.
  if (!options.trusted)
    for (auto& f : backend->StaticChecks(source, task_.allowed_libraries)) v.integrity.push_back(std::move(f));
  if (!v.integrity.empty()) return done();
  v.level = Level::kL0Static;

  if (options.cancel != nullptr) options.cancel->ThrowIfCancelled();
  const CompileResult compiled = CompileCandidate(machine_, *backend, source, options, &v);
  if (!compiled.ok) return done();

  Run run(machine_, *backend, *reference_, task_, options, &v);
  // A failed set (`cases`: the task its cases came from): the worst case's class, then a
  // diagnostic trial and the sanitizer pass where asked for.
  auto failed = [&](const Task& cases) {
    if (const CaseEvidence* worst = WorstCase(v)) v.failure = worst->failure;
    if (options.diagnose && v.integrity.empty())
      if (const Case* k = NumericFailureCase(v, cases)) run.RunDiagnostic(compiled.so_path, *k);
    Distribution dist;
    if (options.sanitize && backend->can_sanitize() && v.integrity.empty())
      if (const Case* k = FirstFailingCase(v, cases, &dist))
        v.sanitizer = run.RunSanitizer(compiled.so_path, *k, dist, v.failure);
    return done();
  };
  bool light_ok = run.RunSet(compiled.so_path, LightCasesTwice(task_), TrialSet::kLight);
  // Loading counts as part of L1: a candidate that cannot be loaded never reached it.
  bool loaded = !(v.cases.size() == 1 && v.cases[0].outcome == "load_failed");
  if (loaded) {
    v.level = Level::kL1Compile;
  } else {
    if (v.cases[0].message.find("kforge_run") != std::string::npos) v.cases[0].failure = FailureClass::kBuildError;
    v.message = "the candidate compiled but could not be loaded: " + v.cases[0].message;
  }
  if (!light_ok) return failed(task_);
  v.level = Level::kL2Light;
  if (!options.full) {
    v.passed = true;
    return done();
  }
  const Task certified = CertifiedCases(task_, &v);
  if (!run.RunSet(compiled.so_path, certified.full, TrialSet::kFull)) return failed(certified);
  v.level = Level::kL2Full;
  v.passed = true;
  if (options.determinism && !task_.light.empty()) {
    v.determinism =
        CheckDeterminism(task_, task_.light[0], 3, [&](const Bindings& p, Distribution d, uint64_t t, bool fresh) {
          return run.OutputsOf(compiled.so_path, p, d, t, fresh);
        }).ToJson();
    run.EndDeterminism();
  }
  return done();
}

}  // namespace kforge
