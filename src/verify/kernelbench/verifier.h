#pragma once
// KernelBench tasks: a reference file (class Model, get_inputs(), get_init_inputs()) and a
// candidate file (class ModelNew) taken as they are, and judged twice.
//
// *KernelBench-compatible*: the benchmark's own procedure, whatever kforge's policy says:
// weights built under torch.manual_seed(42) for both models, 5 trials whose seeds are
// torch.randint(0, 2**32 - 1) draws after torch.manual_seed(42), get_inputs() under each,
// torch.allclose against the float32 reference at the chosen version's tolerance
// (KernelBenchProcedure: main's 1e-4 for float32 and 1e-2 for float16/bfloat16 by default,
// v0's 1e-2 for every dtype). Given whenever the candidate builds and runs, a cheat included
// (an integrity failure of kforge's does not change what KernelBench would say); not given
// only when it could not run, with why.
//
// *Certified*: what the benchmark misses. The same 5 trials plus inputs from other
// distributions (all-negative, -100 offset, large, small, signed rows: KernelBench draws only
// torch.rand/randn), and with --full the file's integer size constants varied to odd sizes;
// a float64 reference with a scale-aware tolerance (all-zero outputs of a tiny-output task do
// not pass); input mutation and output type checks; the wrapper's static integrity
// (python/kforge_check_modelnew.py) and the native static checks on the extension sources;
// and a policy (KernelBenchPolicy) on what forward may run outside the candidate's kernels,
// named in the verdict with the attribution it rests on.
//
// Where things run: the checker, the reference and the candidate each run in a confined
// process of their own (exec/confined_program.h); the candidate's process never holds the
// reference's outputs, and the comparison is the engine's (compare.h), never Python's.
// Extensions are built before any candidate code runs (exec/torch_extension.h).
#include <cstdint>
#include <string>

#include "core/backend_kind.h"
#include "exec/sandbox.h"
#include "verify/kernelbench/policy.h"
#include "verify/verdict.h"

namespace kforge {

class CancellationToken;
class Machine;
class WarmWorkers;
struct VerifyOptions;

struct KernelBenchOptions {
  BackendKind backend = BackendKind::kCpu;  ///< cpu, or cuda (the worker runs on the GPU)
  bool full = false;
  bool kernelbench_trials = true;  ///< VerifyOptions::kernelbench_trials
  /// What the certified verdict lets forward run outside the candidate's kernels.
  KernelBenchPolicy policy = KernelBenchPolicy::kBenchmark;
  /// The version of KernelBench's procedure the KernelBench-compatible verdict follows.
  KernelBenchProcedure procedure = KernelBenchProcedure::kMain;
  uint64_t seed = 0;  ///< seeds the certified trials' distributions (KernelBench's own are fixed)
  int64_t worker_timeout_ms = 10 * 60 * 1000;  ///< one worker process, all of its trials
  /// The candidate's import, and each of its trials (drawing inputs, one forward, writing
  /// the outputs), gets this much beyond a fixed allowance of 10 s (a hang ends there).
  int64_t call_timeout_ms = 10000;
  /// With a number of trials, a certified candidate and its reference are timed as KernelBench
  /// times them (kernelbench.timing in the verdict: mean, std, min, max, speedup).
  int timing_trials = 0;
  int timing_warmup = 3;
  /// With timing, the reference is also timed under torch.compile (timing.reference_compiled
  /// and speedup_over_compiled; timing.compiled_error says why not, e.g. a torch before 2.0).
  bool timing_compiled = false;
  std::string cache_dir;
  /// Judge against the reference's kept outputs when it ran the same trials before
  /// (reference_store.h; outputs judged in GPU memory are never kept); false: run it again.
  bool reuse_reference = true;
  /// On the GPU, outputs of at least this many bytes (float32) are handed to the engine in
  /// GPU memory and judged there by kforge-gpu-judge, not written to files; negative: never.
  int64_t device_output_bytes = int64_t{64} << 20;
  /// The candidate's limits; the address space is left unlimited (Python with torch maps far
  /// more than it uses) and files may reach 16 GiB (outputs come back as files).
  SandboxLimits limits;
  const CancellationToken* cancel = nullptr;
  /// Workers started before their jobs (kforge serve's verifiers keep them): a worker of
  /// this verdict's spec is taken from here when one waits (warm_workers.h); null: none.
  WarmWorkers* warm = nullptr;
};

/// The candidate's launches, as the worker's profiler reported them over every judged forward,
/// as integrity findings: a forward that ran no kernel on the GPU (`launch.no_kernel`), or
/// kernels on a stream other than the one PyTorch considers current (`launch.other_stream`).
/// Returns what the verdict records of the report: known fields only, typed, text made safe.
/// Fails closed: a missing report, or one whose profiler was unavailable, is
/// `launch.unaccounted`.
/// `completed`: the trials whose forward returned (none: nothing ran to account for).
nlohmann::json KernelBenchLaunchFindings(const nlohmann::json& launches, int64_t completed,
                                         std::vector<IntegrityFinding>* findings);

/// The options of a native verification, as they apply to KernelBench files (backend, --full,
/// seed, per-call limit, cache, limits, cancellation). `seed` must be set.
KernelBenchOptions KernelBenchOptionsFrom(const VerifyOptions& options);

/// The file looks like a KernelBench reference or candidate (a .py file).
bool IsKernelBenchFile(const std::string& path);

/// Verifies `candidate_path` against the reference file. Throws UsageError when a file is
/// missing or the reference is not in KernelBench's format, EnvironmentError when there is
/// no Python with PyTorch; everything the candidate does is a verdict.
Verdict VerifyKernelBench(Machine& machine, const std::string& reference_path, const std::string& candidate_path,
                          const KernelBenchOptions& options);

}  // namespace kforge
