#pragma once
// What a verification, a repair or a bench puts in the kernel database (record/kernel_db.h).
#include <cstdint>

#include "record/kernel_db.h"
#include "service/service.h"

namespace kforge {

/// A verification's record: task, candidate, backend, device, verdict and level.
KernelRecord RecordOfVerdict(const Verdict& verdict, RecordKind kind, int64_t time_us);
/// A bench's: its verdict's, with the candidate's and baseline's medians and the roofline.
KernelRecord RecordOfBench(const BenchReport& report, int64_t time_us);
/// A repair's: the verdict of its final candidate (certified) or of its best one.
KernelRecord RecordOfRun(const RunResult& run, int64_t time_us);
/// The median time per case of a verdict's passing cases, in ms (0 when none ran): the
/// coarse CPU timing `kforge regress` compares when there is no GPU bench.
double MedianCaseMs(const Verdict& verdict);

}  // namespace kforge
