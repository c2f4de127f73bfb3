#include "service/kernel_records.h"

#include <algorithm>

#include "core/backend_kind.h"
#include "record/artifact_store.h"
#include "record/run_files.h"

namespace kforge {

KernelRecord RecordOfVerdict(const Verdict& v, RecordKind kind, int64_t time_us) {
  KernelRecord r;
  r.kind = kind;
  r.task = v.task_name;
  r.task_hash = v.task_sha256;
  r.candidate_hash = v.candidate_sha256;
  r.source_path = v.candidate_path;
  r.backend = std::string(BackendName(v.backend));
  r.device = v.device.is_object() ? v.device.value("name", "cuda") : std::string("cpu");
  r.verdict = v.passed ? "pass" : std::string(FailureClassName(v.failure));
  r.level = std::string(LevelName(v.level));
  r.integrity_failure = !v.integrity.empty() || v.failure == FailureClass::kIntegrity;
  r.kforge_version = v.kforge_version;
  r.time_us = time_us;
  return r;
}

KernelRecord RecordOfBench(const BenchReport& report, int64_t time_us) {
  KernelRecord r = RecordOfVerdict(report.verdict, RecordKind::kBench, time_us);
  if (report.timed) {
    r.median_ms = report.candidate.timing.median_ns / 1e6;
    if (report.baseline.timing.median_ns > 0) r.baseline_median_ms = report.baseline.timing.median_ns / 1e6;
    if (report.roofline_fraction > 0) r.roofline_fraction = report.roofline_fraction;
  }
  return r;
}

KernelRecord RecordOfRun(const RunResult& run, int64_t time_us) {
  const RunState& s = run.state;
  KernelRecord r;
  if (s.best) {
    ArtifactStore store(RunFiles(run.dir).artifacts());
    if (store.Has(s.best->verdict))
      r = RecordOfVerdict(Verdict::FromJson(nlohmann::json::parse(store.Get(s.best->verdict))), RecordKind::kRepair,
                          time_us);
  }
  r.kind = RecordKind::kRepair;
  r.time_us = time_us;
  if (r.task.empty()) r.task = s.task_name;
  if (r.verdict.empty()) r.verdict = "none";
  // The run's own word on certification: a candidate that passed the light set but not the
  // full one is not a certified kernel.
  if (!s.success && r.verdict == "pass") r.verdict = "not_certified";
  r.run_dir = run.dir;
  // Where the user finds the kernel: the run's final file, or the best candidate's iteration
  // log (never the scratch file it was verified from).
  if (s.success)
    r.source_path = RunFiles(run.dir).final_source(s.config.SourceExtension());
  else if (s.best)
    r.source_path =
        run.dir + "/logs/iteration_" + std::to_string(s.best->iteration) + "/candidate" + s.config.SourceExtension();
  return r;
}

double MedianCaseMs(const Verdict& verdict) {
  std::vector<double> ms;
  for (const auto& c : verdict.cases)
    if (c.passed()) ms.push_back(c.run_ms);
  if (ms.empty()) return 0;
  std::sort(ms.begin(), ms.end());
  return ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
}

}  // namespace kforge
