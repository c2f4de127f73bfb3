#pragma once
// The statistics of a study (kforge experiment): Pass@k by the unbiased estimator, KernelBench's
// fast_p, McNemar's
// exact test on paired outcomes with Bonferroni's correction, and a paired bootstrap interval
// for the difference of two arms' per-task rates. Pure functions of counts; the bootstrap
// draws from a seeded generator whose sequence is fixed by the standard (mt19937_64), so a
// report is the same on every machine.
#include <cstdint>
#include <optional>
#include <vector>

namespace kforge {

/// The probability that at least one of k samples drawn without replacement from n runs, c
/// of them successes, succeeds: 1 - C(n-c, k) / C(n, k) (Chen et al. 2021). Requires
/// 0 <= c <= n and 1 <= k <= n.
double PassAtK(int n, int c, int k);

/// KernelBench's fast_p: the share of the samples that are correct and more than `p` times
/// as fast as the baseline. A sample is its speedup, or none when it is not correct (or was
/// not timed): it counts in the denominator and is never fast. fast_0 is the share correct
/// and timed.
/// An empty list gives 0.
double FastP(const std::vector<std::optional<double>>& speedups, double p);

/// McNemar's exact two-sided p-value for paired outcomes: `b` pairs where only the first arm
/// succeeded, `c` where only the second did. 1 when b + c is 0.
double McNemarExactP(int b, int c);

/// The p-value corrected for `tests` comparisons (at most 1).
double Bonferroni(double p, int tests);

struct Interval {
  double estimate = 0, low = 0, high = 0;
};

/// The mean of a[i] - b[i] over paired items (tasks) and its percentile interval at `level`
/// (0.95) from `resamples` bootstrap resamples of the items, drawn from `seed`. Requires
/// a.size() == b.size(); an empty pair of lists gives {0, 0, 0}.
Interval PairedBootstrap(const std::vector<double>& a, const std::vector<double>& b, int resamples, uint64_t seed,
                         double level = 0.95);

}  // namespace kforge
