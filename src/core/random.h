#pragma once
// Seeded randomness the project owns, so that a seed means the same numbers everywhere.
//
// std::normal_distribution and std::student_t_distribution are not specified exactly: the
// same seed gives different inputs under libstdc++ and libc++. A verdict names its seed so
// that anyone can reproduce its inputs, so the inputs are drawn here instead:
//
//   bits     xoshiro256** (Blackman and Vigna, 2018), its state filled from the seed with
//            SplitMix64, as its authors recommend.
//   uniform  the top 53 bits of one draw, times 2^-53: a double in [0, 1).
//   normal   Marsaglia's polar method: pairs (u, v) uniform in (-1, 1) until
//            s = u^2 + v^2 lies in (0, 1), then u * sqrt(-2 ln s / s) and, for the next
//            call, v * sqrt(-2 ln s / s).
//   student  t with nu degrees of freedom as Z / sqrt(X / nu), X a sum of nu squared
//            normals (nu a small integer, which is what tasks use).
//
// Only +, *, /, sqrt (exact under IEEE 754) and log appear; this file is compiled with
// -ffp-contract=off so no compiler fuses a multiply and an add differently. The golden test
// (random_test.cc) pins the first values of a few seeds; the same test compiled by a second
// compiler must print the same bits.
#include <cstdint>

namespace kforge {

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed);
  uint64_t NextU64();
  /// Uniform in [0, 1).
  double Uniform01();
  /// Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform01(); }
  /// Uniform integer in [0, n), n > 0 (the remainder of one draw; the bias is below 2^-50
  /// for the small n used here).
  uint64_t Below(uint64_t n) { return NextU64() % n; }
  /// Standard normal.
  double Normal();
  /// Student's t with `nu` >= 1 degrees of freedom.
  double StudentT(int nu);

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace kforge
