#pragma once
// Statistics of one KFORGE_PROBE buffer (include/kforge/probe.h) as the candidate's process
// reported them.
#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

struct ProbeStats {
  std::string name;
  int64_t count = 0, nan_count = 0, inf_count = 0;
  double min = 0, max = 0, mean = 0, stddev = 0;  ///< over finite values
  std::vector<float> sample;
};

}  // namespace kforge
