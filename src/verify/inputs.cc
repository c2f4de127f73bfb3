#include "verify/inputs.h"

#include <cmath>
#include <limits>
#include <random>

namespace kforge {

uint64_t MixSeed(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9E3779B97F4A7C15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::vector<double> FillInput(Distribution d, uint64_t seed, DType dtype, void* data, int64_t n) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::student_t_distribution<double> heavy(2.0);
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    switch (d) {
      case Distribution::kNormal: v = normal(rng); break;
      case Distribution::kUniform: v = uniform(rng); break;
      case Distribution::kHeavyTailed: v = heavy(rng); break;
      case Distribution::kAllNegative: v = -std::fabs(normal(rng)) - 0.01; break;
      case Distribution::kLargeMagnitude: v = normal(rng) * 1000.0; break;
      case Distribution::kLargeOffset: v = 100.0 + normal(rng); break;
      case Distribution::kSmallMagnitude: v = normal(rng) * 0.001; break;
      case Distribution::kArange: v = static_cast<double>(i % 1024) / 64.0; break;
      case Distribution::kOnes: v = 1.0; break;
      case Distribution::kSpecial: {
        v = normal(rng);
        // About one element in eight is special, spread over the whole tensor.
        switch (rng() % 64) {
          case 0: v = std::numeric_limits<double>::quiet_NaN(); break;
          case 1: v = std::numeric_limits<double>::infinity(); break;
          case 2: v = -std::numeric_limits<double>::infinity(); break;
          case 3: v = 0.0; break;
          case 4: v = -0.0; break;
          case 5: v = std::numeric_limits<float>::denorm_min() * 3.0; break;
          case 6: v = std::numeric_limits<float>::max() / 2; break;
          case 7: v = -std::numeric_limits<float>::max() / 2; break;
          default: break;
        }
        break;
      }
    }
    if (!IsFloat(dtype)) v = std::round(v * 10);
    StoreFromDouble(data, dtype, static_cast<size_t>(i), v);
    values[static_cast<size_t>(i)] = LoadAsDouble(data, dtype, static_cast<size_t>(i));
  }
  return values;
}

}  // namespace kforge
