#pragma once
// Why a kernel is as fast as it is, in sentences a repairer can act on: its achieved memory
// and arithmetic rates against the device's calibrated ceilings (the roofline), what limits
// it, and, when Nsight Compute measured it (verify/ncu_csv.h), its launch shape, occupancy
// and the reasons its warps stalled. The repair loop puts it in the verdict of a repair
// refused as a degeneration (the repairer's prompt and the report show that verdict), and
// `kforge bench` prints it.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "exec/device.h"
#include "verify/ncu_csv.h"

namespace kforge {

/// What holds the kernel back.
enum class PerfLimit {
  kUnknown,       ///< no ceilings and no profile: only its rates are known
  kNearRoofline,  ///< at 60% or more of the ceiling that binds it
  kMemory,        ///< memory traffic dominates, well below the bandwidth ceiling
  kCompute,       ///< arithmetic dominates, well below the compute ceiling
  kLatency,       ///< neither memory nor arithmetic is busy: too little parallelism or serial work
};
std::string_view PerfLimitName(PerfLimit limit);

struct PerfInputs {
  double bytes = 0, flops = 0;  ///< the timed case's (the task's expressions); 0 unknown
  double median_ns = 0;
  DeviceCeilings ceilings;     ///< present only for a calibrated GPU
  bool low_precision = false;  ///< 16-bit inputs: the bf16 matrix rate is the compute ceiling
  std::vector<NcuKernel> ncu;  ///< the kernels' profile, when ncu ran (the longest one is read)
};

struct PerfDiagnosis {
  double gbps = 0, gflops = 0;                          ///< achieved; 0 unknown
  double bandwidth_fraction = 0, compute_fraction = 0;  ///< of the ceilings (or ncu's peaks); 0 unknown
  PerfLimit limit = PerfLimit::kUnknown;
  std::vector<std::string> findings;  ///< one sentence each, the limit's first
  std::string Text() const;           ///< the findings as one paragraph ("" when there are none)
  nlohmann::json ToJson() const;
};

PerfDiagnosis DiagnosePerformance(const PerfInputs& in);

}  // namespace kforge
