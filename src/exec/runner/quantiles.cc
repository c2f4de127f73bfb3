#include "exec/runner/quantiles.h"

#include <algorithm>

namespace kforge {

LoopQuantiles QuantilesOf(std::vector<double> ns) {
  LoopQuantiles q;
  if (ns.empty()) return q;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double f) { return ns[static_cast<size_t>(f * (ns.size() - 1) + 0.5)]; };
  double sum = 0;
  for (double v : ns) sum += v;
  q.median = at(0.5);
  q.p10 = at(0.1);
  q.p90 = at(0.9);
  q.min = ns.front();
  q.max = ns.back();
  q.mean = sum / ns.size();
  return q;
}

}  // namespace kforge
