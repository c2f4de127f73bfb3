#pragma once
// The figures a timed loop reports of its per-call times (WireTiming's event and kernel
// times): median, mean, extremes and the 10th and 90th percentiles, nearest-rank.
#include <vector>

namespace kforge {

struct LoopQuantiles {
  double median = 0, mean = 0, min = 0, max = 0, p10 = 0, p90 = 0;
};

/// The quantiles of `ns` (all zero when empty).
LoopQuantiles QuantilesOf(std::vector<double> ns);

}  // namespace kforge
