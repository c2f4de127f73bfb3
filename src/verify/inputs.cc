#include "verify/inputs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/random.h"

namespace kforge {

uint64_t MixSeed(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9E3779B97F4A7C15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

namespace {

/// Row patterns: the whole row is drawn at once (constant, sorted, one outlier).
void FillRow(Distribution d, SeededRandom& rng, int64_t row, double* v, int64_t cols) {
  switch (d) {
    case Distribution::kSignedRows: {
      double sign = row % 2 == 0 ? 1.0 : -1.0;
      for (int64_t c = 0; c < cols; ++c) v[c] = sign * (std::fabs(rng.Normal()) + 0.01);
      break;
    }
    case Distribution::kConstantRows: {
      // A multiple of 1/8: a float sum of thousands of them is exact, so a row's mean is
      // exactly its value and its variance exactly zero in float too. An inexact value
      // would test the rounding of the mean (amplified by 1/sqrt(eps) in a normalisation),
      // not the kernel: a correct float32 layernorm failed it on the H200.
      double value = std::round(rng.Normal() * 8.0) / 8.0;
      if (value == 0) value = row % 2 == 0 ? 0.125 : -0.125;
      for (int64_t c = 0; c < cols; ++c) v[c] = value;
      break;
    }
    case Distribution::kOutlierRows: {
      // Even rows: -1e4 somewhere. Odd rows: +1e4 first, so a row loop that reads one element
      // past its end (a max over c <= cols) meets a value that wipes out its row.
      for (int64_t c = 0; c < cols; ++c) v[c] = 0.01 * rng.Normal();
      int64_t at = row % 2 == 0 ? static_cast<int64_t>(rng.Below(static_cast<uint64_t>(cols))) : 0;
      v[at] = row % 2 == 0 ? -1e4 : 1e4;
      break;
    }
    case Distribution::kSortedRows: {
      for (int64_t c = 0; c < cols; ++c) v[c] = rng.Normal();
      if (row % 2 == 0)
        std::sort(v, v + cols);
      else
        std::sort(v, v + cols, std::greater<double>());
      break;
    }
    default:
      break;
  }
}

bool IsRowPattern(Distribution d) {
  return d == Distribution::kSignedRows || d == Distribution::kConstantRows || d == Distribution::kOutlierRows ||
         d == Distribution::kSortedRows;
}

}  // namespace

namespace {

/// kSpecial: a normal draw, about one element in eight of them special, spread over the tensor.
double DrawSpecial(SeededRandom& rng) {
  const double v = rng.Normal();
  switch (rng.Below(64)) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return std::numeric_limits<double>::infinity();
    case 2:
      return -std::numeric_limits<double>::infinity();
    case 3:
      return 0.0;
    case 4:
      return -0.0;
    case 5:
      return std::numeric_limits<float>::denorm_min() * 3.0;
    case 6:
      return std::numeric_limits<float>::max() / 2;
    case 7:
      return -std::numeric_limits<float>::max() / 2;
    default:
      return v;
  }
}

/// Element `i` of a tensor of `shape` drawn from `d`; `rows` holds the row patterns' values
/// (FillRow), `input` is the tensor's position among the task's inputs.
double DrawElement(Distribution d, SeededRandom& rng, const std::vector<double>& rows,
                   const std::vector<int64_t>& shape, int64_t i, size_t input) {
  switch (d) {
    case Distribution::kSignedRows:
    case Distribution::kConstantRows:
    case Distribution::kOutlierRows:
    case Distribution::kSortedRows:
      return rows[static_cast<size_t>(i)];
    case Distribution::kNegativeOffset:
      return -100.0 + rng.Normal();
    case Distribution::kDeepNegative:
      return -1000.0 + rng.Normal();
    case Distribution::kTies:
      return static_cast<double>(static_cast<int64_t>(rng.Below(5)) - 2);
    case Distribution::kLargeMean:
      return 1000.0 + 0.001 * rng.Normal();
    case Distribution::kIntegers:
      return static_cast<double>(static_cast<int64_t>(rng.Below(17)) - 8);
    case Distribution::kRisingKeys: {
      // Inputs [..., s, d]: q, k, v of attention. Key j's row is j * 2^p, exact in
      // bfloat16 for j <= 256, with 2^p the power of two that puts sqrt(d) * 2^p, the gap
      // between scores, in [150, 300): far above exp's float range (~88).
      int64_t d_model = shape.empty() ? 1 : std::max<int64_t>(1, shape.back());
      int64_t seq = shape.size() < 2 ? 1 : std::max<int64_t>(1, shape[shape.size() - 2]);
      int64_t key = (i / d_model) % seq;
      double step = std::exp2(std::ceil(std::log2(150.0 / std::sqrt(static_cast<double>(d_model)))));
      return input == 0 ? 1.0 : input == 1 ? step * static_cast<double>(key) : rng.Normal();
    }
    case Distribution::kOpposedSigns:
      return input == 0 ? 10.0 + std::fabs(rng.Normal()) : input == 1 ? -10.0 - std::fabs(rng.Normal()) : rng.Normal();
    case Distribution::kNormal:
      return rng.Normal();
    case Distribution::kUniform:
      return rng.Uniform(-1.0, 1.0);
    case Distribution::kHeavyTailed:
      return rng.StudentT(2);
    case Distribution::kAllNegative:
      return -std::fabs(rng.Normal()) - 0.01;
    case Distribution::kLargeMagnitude:
      return rng.Normal() * 1000.0;
    case Distribution::kLargeOffset:
      return 100.0 + rng.Normal();
    case Distribution::kSmallMagnitude:
      return rng.Normal() * 0.001;
    case Distribution::kArange:
      return static_cast<double>(i % 1024) / 64.0;
    case Distribution::kOnes:
      return 1.0;
    case Distribution::kSpecial:
      return DrawSpecial(rng);
  }
  return 0;
}

}  // namespace

std::vector<double> FillInput(Distribution d, uint64_t seed, DType dtype, void* data, const std::vector<int64_t>& shape,
                              size_t input) {
  int64_t n = NumElements(shape);
  SeededRandom rng(seed);
  std::vector<double> values(static_cast<size_t>(n));
  if (IsRowPattern(d) && n > 0) {
    int64_t cols = shape.empty() ? 1 : std::max<int64_t>(1, shape.back());
    for (int64_t r = 0; r * cols < n; ++r) FillRow(d, rng, r, values.data() + r * cols, std::min(cols, n - r * cols));
  }
  const bool integral = d == Distribution::kTies || d == Distribution::kIntegers;
  for (int64_t i = 0; i < n; ++i) {
    double v = DrawElement(d, rng, values, shape, i, input);
    if (!IsFloat(dtype) && !integral) v = std::round(v * 10);
    StoreFromDouble(data, dtype, static_cast<size_t>(i), v);
    values[static_cast<size_t>(i)] = LoadAsDouble(data, dtype, static_cast<size_t>(i));
  }
  return values;
}

}  // namespace kforge
