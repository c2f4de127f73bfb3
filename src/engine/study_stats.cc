#include "engine/study_stats.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/check.h"

namespace kforge {

double PassAtK(int n, int c, int k) {
  KF_CHECK(n >= 1 && c >= 0 && c <= n && k >= 1 && k <= n);
  if (n - c < k) return 1.0;
  // C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k / i), numerically stable.
  double miss = 1.0;
  for (int i = n - c + 1; i <= n; ++i) miss *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - miss;
}

double FastP(const std::vector<std::optional<double>>& speedups, double p) {
  if (speedups.empty()) return 0;
  int fast = 0;
  for (const auto& s : speedups) fast += s && *s > p;
  return double(fast) / speedups.size();
}

double McNemarExactP(int b, int c) {
  KF_CHECK(b >= 0 && c >= 0);
  const int n = b + c;
  if (n == 0) return 1.0;
  // Two-sided binomial test of min(b, c) under p = 1/2, in logs (n may be large).
  const int k = std::min(b, c);
  double tail = 0;
  for (int i = 0; i <= k; ++i)
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return std::min(1.0, 2 * tail);
}

double Bonferroni(double p, int tests) { return std::min(1.0, p * std::max(1, tests)); }

Interval PairedBootstrap(const std::vector<double>& a, const std::vector<double>& b, int resamples, uint64_t seed,
                         double level) {
  KF_CHECK(a.size() == b.size() && resamples > 0);
  Interval out;
  const size_t n = a.size();
  if (n == 0) return out;
  std::vector<double> diff(n);
  for (size_t i = 0; i < n; ++i) diff[i] = a[i] - b[i];
  for (double d : diff) out.estimate += d / n;
  std::mt19937_64 gen(seed);  // its sequence is fixed by the standard; the modulo below is ours
  std::vector<double> means(resamples);
  for (double& m : means) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += diff[gen() % n];
    m = sum / n;
  }
  std::sort(means.begin(), means.end());
  const double alpha = (1 - level) / 2;
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(std::floor(q * (resamples - 1) + 0.5));
    return means[std::min(i, means.size() - 1)];
  };
  out.low = at(alpha);
  out.high = at(1 - alpha);
  return out;
}

}  // namespace kforge
