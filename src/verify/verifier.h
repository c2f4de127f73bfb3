#pragma once
// The verifier: the only code that declares a candidate correct. It checks the source (L0),
// compiles it (L1), runs the light cases (L2 light) and, when asked, the full certification
// set (L2 full), each trial with fresh seeded inputs, poisoned outputs, guard regions and an
// input-mutation check, in a sandboxed child process.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/backend_kind.h"
#include "core/task.h"
#include "exec/arena.h"
#include "exec/sandbox.h"
#include "verify/kernelbench/policy.h"
#include "verify/reference.h"
#include "verify/verdict.h"

namespace kforge {

class Clock;
class Machine;
class CancellationToken;

struct VerifyOptions {
  BackendKind backend = BackendKind::kCpu;
  bool full = false;  ///< also run the full set after the light set passes
  /// KernelBench files: run KernelBench's own five trials (its procedure, its inputs drawn on
  /// the host) for the KernelBench-compatible verdict beside the certified one. Without
  /// them (--certified-only) only kforge's certified verdict is given.
  bool kernelbench_trials = true;
  /// KernelBench files: what the certified verdict lets forward run outside the candidate's
  /// kernels (KernelBench's rules by default), and which version of KernelBench's procedure the
  /// compatible verdict follows.
  KernelBenchPolicy kernelbench_policy = KernelBenchPolicy::kBenchmark;
  KernelBenchProcedure kernelbench_procedure = KernelBenchProcedure::kMain;
  /// KernelBench files: judge against the reference's kept outputs when the same reference
  /// ran the same trials before (verify/kernelbench/reference_store.h); false runs it again.
  bool reuse_reference = true;
  std::optional<uint64_t> seed;                    ///< run seed; fresh from Entropy when unset
  std::optional<Distribution> force_distribution;  ///< debugging: draw every case from this
  int64_t case_timeout_ms = 10000;                 ///< wall-clock limit for one kforge_run call
  int64_t load_timeout_ms = 10000;
  /// Wall-clock limit for all trials of one verification together (absolute: nothing a
  /// candidate does extends it); a trial never gets more than what is left.
  int64_t total_timeout_ms = 15 * 60 * 1000;
  std::string cache_dir;  ///< compile cache; empty for the default
  bool probes = false;    ///< enable KFORGE_PROBE and compare with reference intermediates
  /// After a numeric failure, run one extra "diagnostic" trial of the failing case with
  /// all-ones inputs (set "diagnostic"; it never counts towards the verdict). Indexing bugs
  /// become exact offsets there: a sum that drops 3 elements per row returns K - 3.
  bool diagnose = false;
  /// cuda: when the verdict looks like a race (a failing case re-run on identical inputs
  /// gives different results) or an out-of-bounds access, re-run that case under
  /// compute-sanitizer (racecheck or memcheck) and record its report in the verdict.
  bool sanitize = false;
  /// After the candidate passes: run one case again on identical inputs, and at several
  /// batch sizes, and record whether the outputs are bitwise identical (verdict.determinism).
  bool determinism = false;
  /// Trusted code only (kforge bench's baselines, checked against the reference in tests):
  /// skip the static integrity checks and link with these flags (e.g. -lcublas).
  bool trusted = false;
  std::vector<std::string> trusted_link_flags;
  SandboxLimits limits;
  /// Checked between trials: when cancelled, the verification stops there and throws
  /// CancelledError (a partial verdict is never returned). Not owned; may be null.
  const CancellationToken* cancel = nullptr;
};

/// The tensor-arena layout of one case of `task`: its inputs, then its outputs.
std::vector<ArenaTensor> CaseLayout(const Task& task, const Bindings& params);

class Verifier {
 public:
  /// Throws UsageError when the task names an unknown reference. Time, entropy, processes
  /// and the toolchain come from `machine` (and its environment).
  Verifier(const Task& task, Machine& machine);
  /// With a reference other than the built-in one the task names (a trusted worker's).
  Verifier(const Task& task, Machine& machine, std::unique_ptr<Reference> reference);
  /// Verifies the candidate source file at `candidate_path`. Throws UsageError when the file
  /// cannot be read and EnvironmentError when the machine cannot compile or sandbox.
  Verdict Verify(const std::string& candidate_path, const VerifyOptions& options);
  /// Same, for source text already in memory (`label` names it in the verdict).
  Verdict VerifySource(const std::string& source, const std::string& label, const VerifyOptions& options);

 private:
  const Task& task_;
  Machine& machine_;
  std::unique_ptr<Reference> reference_;
};

/// The version string recorded in verdicts.
std::string_view KforgeVersion();

}  // namespace kforge
