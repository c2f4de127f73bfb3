#pragma once
// L3: performance of a verified CUDA candidate (kforge bench). The candidate is verified
// first (a wrong or cheating kernel is never timed), then it and the task's baseline (cuBLAS
// where a vendor library exists, else a straightforward kernel, from baselines/cuda) are
// timed in the same run on the task's bench shape: CUDA events on the given stream after
// warm-up, many repetitions, L2 flushed before each, inputs rotated through copies that do
// not fit in L2 together, every stream synchronised after each call. The two outputs must
// agree within the task's tolerance. The task's FLOP and byte formulas against the
// device's calibrated ceilings give the roofline floor and the achieved fraction of it.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/task.h"
#include "exec/candidate_process.h"
#include "exec/device.h"
#include "verify/compare.h"
#include "verify/perf_diagnosis.h"
#include "verify/verdict.h"

namespace kforge {

class Machine;
class CancellationToken;

struct BenchOptions {
  const CancellationToken* cancel = nullptr;  ///< stops the verification between trials
  int warmup = 10;
  int reps = 100;
  bool full = false;          ///< certify on the full set (not only the light set) before timing
  std::string case_name;      ///< a case of cases.bench or cases.full; empty: the first bench case
  std::string baseline_path;  ///< override the bundled baseline
  std::string baselines_dir;  ///< baselines/cuda of the installation (manifest.json and <task>.cu)
  std::optional<uint64_t> seed;
  std::string cache_dir;
  int64_t timeout_ms = 300000;  ///< for the whole timed loop of one kernel
  /// Timed calls (chosen at random from the seed) that get fresh inputs in the arena they
  /// would use anyway and whose outputs are checked against the baseline's on the same
  /// inputs: a kernel that skips work on most calls, or returns cached results, fails them.
  int sampled_calls = 3;
  /// KernelBench files: the reference is also timed under torch.compile (its default mode).
  bool compiled_baseline = true;
  /// Nsight Compute's CSV for the candidate (`ncu --csv --metrics <NcuMetricList()>`): its
  /// launch shape, occupancy and stalls join the diagnosis. "" none.
  std::string ncu_csv;
};

struct KernelTiming {
  std::string label;  ///< "candidate" or "baseline"
  std::string path;
  std::string kind;  ///< baseline: "cuBLAS SGEMM ..." or "straightforward kernel"
  double compile_seconds = 0;
  bool compile_cached = false;
  CaseTiming timing;
  /// Wall time per timed call by the engine's clock: from the engine's go for the timed loop
  /// to the runner's reply (CaseRun::paced_wall_ns), over reps. Includes the harness's work
  /// per call and the copy of the outputs back.
  double engine_call_ns = 0;
};

struct BenchReport {
  std::string task;
  std::string case_name;
  Bindings params;
  Verdict verdict;  ///< the verification that gated the timing
  bool timed = false;
  KernelTiming candidate, baseline;
  double speedup = 0;       ///< baseline median / candidate median
  CompareResult agreement;  ///< candidate outputs against the baseline's
  /// Sampled timed calls (BenchOptions::sampled_calls): their indices and the candidate's
  /// outputs against the baseline's on the same fresh inputs.
  std::vector<uint32_t> sampled_calls;
  std::vector<CompareResult> sample_agreement;
  bool agrees() const {
    for (const auto& s : sample_agreement)
      if (!s.passed()) return false;
    return agreement.passed();
  }
  double flops = 0, bytes = 0;
  DeviceCeilings ceilings;
  double floor_seconds = 0;      ///< max(flops / peak, bytes / bandwidth); 0 without ceilings
  std::string bound;             ///< "memory" or "compute"
  double roofline_fraction = 0;  ///< floor / candidate median
  double baseline_roofline_fraction = 0;
  /// The candidate's time per call by the engine's clock (EngineMeanNanos); 0 when unknown.
  double engine_mean_ns = 0;
  std::vector<NcuKernel> profile;     ///< the candidate's launches as ncu measured them (BenchOptions::ncu_csv)
  PerfDiagnosis diagnosis;            ///< the candidate's rates, limit and profile, in sentences
  std::vector<std::string> suspects;  ///< results that cannot be right (faster than the floor, ...)
  bool ok() const { return verdict.passed && timed && agrees() && suspects.empty(); }
  nlohmann::json ToJson() const;
  std::string Text() const;
};

/// The candidate's time per call from the engine's clock alone: its wall time per call
/// (KernelTiming::engine_call_ns) less the harness's work per call, which is what the
/// baseline's calls took beyond the baseline's own events. The candidate's process can
/// patch its timer (it shares the address space) but not this clock, and cannot start the
/// loop before the go nor reply before its last outputs are back; 0 when either wall time is
/// missing. Work skipped on calls whose outputs are not checked is what the sampled calls
/// are for; the engine's clock only bounds the loop as a whole.
double EngineMeanNanos(const KernelTiming& candidate, const KernelTiming& baseline);
/// The time the roofline judges, in seconds: the median kernel time where CUPTI recorded
/// the calls' kernels, else the median event time.
double RooflineSeconds(const CaseTiming& t);
/// The harness's work per timed call by the engine's clock, from the baseline's run.
double HarnessNanos(const KernelTiming& baseline);

/// How much longer than its events a candidate's calls may take by the engine's clock (once
/// the harness's share is taken off) before the report is a suspect: this much, plus this
/// fraction of the events' own mean, plus this fraction of the harness's share. The harness's
/// share is not the same in two processes: on the H200 (relu, 64M elements, three sampled
/// calls whose 512 MiB pageable copies dominate it) it was 7.2 ms per call over 100 calls
/// and an honest candidate's share differed from its baseline's by up to 1.1 ms (0.15 of
/// it), 5.3 ms over 20 calls. Work hidden from the events must exceed that noise to be seen.
inline constexpr double kHiddenTimeFloorNs = 50e3;
inline constexpr double kHiddenTimeFraction = 0.5;
inline constexpr double kHarnessNoiseFraction = 0.5;

/// The kernel kforge bench compares a task's candidates against (baselines/cuda/manifest.json).
struct Baseline {
  std::string path;
  std::string kind;               ///< "cuBLAS SGEMM ..." or "straightforward kernel"
  std::vector<std::string> link;  ///< extra link flags (-lcublas)
};
/// Throws UsageError when the task has none.
Baseline FindBaseline(const Task& task, const std::string& baselines_dir);

/// Compares a candidate's outputs with the baseline's at the bench shape within the task's
/// tolerance. Outputs are raw bytes in task order; `argmax_source` is the first input as
/// doubles when the task compares argmax indices.
CompareResult CompareWithBaseline(const Task& task, const Bindings& params, const std::vector<std::string>& candidate,
                                  const std::vector<std::string>& baseline, const std::vector<double>& argmax_source);

/// Speedup, roofline floor and fraction from the report's flops, bytes and timings, the
/// performance diagnosis (with the report's profile, if any), and the plausibility checks: a candidate faster than the
/// floor allows (by more than 10%), or CUDA event times that add up to more than the host's wall clock over the same
/// loop, or calls that take longer by the engine's clock than the candidate's events say (EngineMeanNanos,
/// kHiddenTimeFloorNs), is suspect.
void JudgeTiming(const DeviceCeilings& ceilings, bool low_precision, BenchReport* report);

/// Throws EnvironmentError without a GPU and UsageError for a task without a baseline or an
/// unknown case; a candidate that fails verification is a report with timed = false.
BenchReport RunBench(Machine& machine, const Task& task, const std::string& candidate_path,
                     const BenchOptions& options);

}  // namespace kforge
