#pragma once
// Nsight Compute's metrics for a candidate's kernels, as `ncu --csv` prints them.
//
// Design note — the format read (ncu's "details" page, the default with --csv): a header row
// of quoted column names, then one row per (kernel launch, metric):
//   "ID","Process ID","Process Name","Host Name","Kernel Name",...,"Block Size","Grid Size",
//   ...,"Section Name","Metric Name","Metric Unit","Metric Value"
// Columns are found by name (ncu versions add columns); values may carry thousands
// separators ("1,048,576") and scaled units ("usecond"; kept in nanoseconds and bytes).
// Lines before the header (ncu's "==PROF==" notes, the program's
// own output) are skipped. The text is ncu's, about a candidate: a malformed row is an
// error with its line number, never a crash, and at most kMaxNcuRows rows are read.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace kforge {

inline constexpr size_t kMaxNcuRows = 100000;

/// One kernel launch and the metrics ncu measured for it (name -> value in its unit).
struct NcuKernel {
  int id = 0;
  std::string name, block, grid;
  std::map<std::string, double> metrics;
  std::map<std::string, std::string> units;
  /// The metric's value, or `fallback` when ncu did not measure it.
  double Metric(const std::string& name, double fallback = -1) const;
};

/// The launches in `text`, in ncu's order. False with `error` naming the line when the text
/// has no header with the columns needed or a row that cannot be read.
bool ParseNcuCsv(const std::string& text, std::vector<NcuKernel>* kernels, std::string* error);

/// The metrics kforge's diagnosis reads (PerfDiagnosis): throughput against the device's
/// peaks, occupancy, the launch's shape and the warp stall reasons, as one --metrics value.
std::string NcuMetricList();

}  // namespace kforge
