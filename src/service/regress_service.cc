// Service::Regress and Service::RecordKernel: the kernel database and the golden set.
#include "core/backend_kind.h"
#include "exec/machine.h"
#include "service/kernel_records.h"
#include "service/service.h"
#include "verify/kernelbench/verifier.h"

namespace kforge {
namespace {

/// What a verdict says for the golden set; its timing is the caller's.
Measurement MeasurementOf(const Verdict& v) {
  Measurement m;
  m.verdict = v.passed ? "pass" : std::string(FailureClassName(v.failure));
  m.level = std::string(LevelName(v.level));
  m.candidate_sha256 = v.candidate_sha256;
  m.message = v.passed ? "" : v.message;
  return m;
}

}  // namespace

void Service::RecordKernel(const std::string& db_path, KernelRecord record) const {
  if (db_path.empty()) return;
  if (record.time_us == 0) record.time_us = machine_.env().clock().WallMicros();
  KernelDb::Open(db_path)->Add(record);
}

RegressReport Service::Regress(const std::string& golden_path, bool accept, const CancellationToken& cancel,
                               const std::string& db_path) {
  auto measure = [&](const GoldenKernel& k) {
    const int64_t now = machine_.env().clock().WallMicros();
    const BackendKind backend = ParseBackend(k.backend);
    if (backend == BackendKind::kCuda && !IsKernelBenchFile(k.task_path)) {
      BenchRequest request{k.task_path, k.candidate_path, {}};
      request.options.full = k.full;
      BenchReport r = Bench(request, cancel);
      Measurement m = MeasurementOf(r.verdict);
      if (r.timed) {
        m.median_ms = r.candidate.timing.median_ns / 1e6;
        m.timing = "bench";
      }
      RecordKernel(db_path, RecordOfBench(r, now));
      return m;
    }
    VerifyRequest request;
    request.task = k.task_path;
    request.candidate_path = k.candidate_path;
    request.options.backend = backend;
    request.options.full = k.full;
    VerifyResult r = Verify(request, cancel);
    Measurement m = MeasurementOf(r.verdict);
    if (r.verdict.passed) {
      m.median_ms = MedianCaseMs(r.verdict);
      m.timing = "cases";
    }
    RecordKernel(db_path, RecordOfVerdict(r.verdict, RecordKind::kVerify, now));
    return m;
  };
  return kforge::Regress(golden_path, measure, accept);
}

}  // namespace kforge
