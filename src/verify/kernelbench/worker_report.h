#pragma once
// A KernelBench worker's entry for one trial (python/kforge_torch_worker.py, its result's
// "trials"), read once through one schema into typed values. The candidate's worker runs the
// candidate, so every field may be missing, of the wrong type or absurd: a field that does
// not fit its type is absent here (nullopt, or an output with a `problem`), never guessed,
// and the judge (judge.h) fails closed on what is absent. The other parts of a worker's
// report are read by the units that judge them, each as untrusted: the profiler's record
// (attribution.h), the launches (launches.cc), progress (worker_progress.h).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace kforge {

/// Per output, as a worker may describe it: well past 2^31 elements (a float16 output of
/// 2^33 elements is 16 GiB), within what one host holds for the three forms judged on it.
inline constexpr int64_t kMaxOutputElements = int64_t{1} << 34;

/// One output as a worker described it.
struct OutputReport {
  std::string problem;     ///< why the description cannot be used; "" when it can
  bool exact = false;      ///< a null float64 entry: the float32 output serves as its own float64 form
  bool on_device = false;  ///< handed over in GPU memory, not written to a file
  std::string file;        ///< in the worker's output directory (a name IsOutputFileName takes)
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  int64_t elements() const;
};

/// One trial as a worker reported it.
struct WorkerTrialReport {
  bool present = false;  ///< the worker wrote an entry for the trial (an object)
  bool ok = false;       ///< its forward returned (only the boolean true)
  std::string error;     ///< what the worker said went wrong (untrusted text, printable)
  std::optional<uint64_t> seed;
  std::optional<double> forward_ms;
  std::string inputs_sha256;
  /// Digests of each input: before the forward (the reference's) and after it (the
  /// candidate's). An entry that is not a string is "" (never equal to a digest).
  std::optional<std::vector<std::string>> input_digests, input_digests_after;
  /// Inputs handed over in GPU memory before the forward (gpu_judge.h), by index, with
  /// their bytes: the reference's list decides which inputs the GPU judge compares. Entries
  /// that are not a pair of non-negative integers are left out.
  std::vector<std::pair<int64_t, int64_t>> device_inputs;
  std::optional<std::vector<OutputReport>> outputs;
  /// The float64 forms of the reference's outputs; absent: the outputs are their own.
  std::optional<std::vector<OutputReport>> reference64;
};

/// Reads one trial's entry. Never throws.
WorkerTrialReport ParseWorkerTrial(const nlohmann::json& entry);

/// Reads one output's description (file, dtype, shape, device). Never throws.
OutputReport ParseOutputReport(const nlohmann::json& description);

}  // namespace kforge
