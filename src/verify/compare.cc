#include "verify/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "core/parallel.h"

namespace kforge {
namespace {

constexpr size_t kFirstMismatches = 8;
constexpr size_t kMaxMismatchIndices = 1 << 16;

// Poison patterns: quiet NaNs with payloads that arithmetic never produces (hardware NaNs
// carry an empty payload), and a sentinel for integers.
constexpr uint32_t kPoison32 = 0x7FC0DEAD;
constexpr uint64_t kPoison64 = 0x7FF8DEADBEEFDEADULL;
constexpr uint16_t kPoison16 = 0x7E5A;  // fp16 quiet NaN, payload 0x25A
constexpr uint16_t kPoisonBf16 = 0x7FDA;
constexpr int64_t kPoisonI64 = 0x7EADBEEFDEADBEEF;
constexpr int32_t kPoisonI32 = 0x7EADBEEF;

/// The poison pattern of one element of `dtype`, as bytes.
std::string_view PoisonBytes(DType dtype) {
  auto bytes = [](const auto& v) { return std::string_view(reinterpret_cast<const char*>(&v), sizeof v); };
  switch (dtype) {
    case DType::kFloat32:
      return bytes(kPoison32);
    case DType::kFloat64:
      return bytes(kPoison64);
    case DType::kFloat16:
      return bytes(kPoison16);
    case DType::kBFloat16:
      return bytes(kPoisonBf16);
    case DType::kInt32:
      return bytes(kPoisonI32);
    case DType::kInt64:
      return bytes(kPoisonI64);
  }
  return {};
}

void Record(CompareResult* r, const CompareInput& in, int64_t i, double got, double expected) {
  ++r->mismatches;
  if (r->mismatch_indices.size() < kMaxMismatchIndices) r->mismatch_indices.push_back(i);
  if (r->first.size() < kFirstMismatches) r->first.push_back(Mismatch{i, Unravel(i, in.shape), got, expected});
  if (r->samples.size() < kSampleMismatches && std::isfinite(got) && std::isfinite(expected))
    r->samples.push_back(Mismatch{i, {}, got, expected});
}

/// Values this many times the 90th percentile of |reference| (or 1, if larger) are outliers.
constexpr double kOutlierFactor = 1e6;

}  // namespace

namespace {

struct Scale {
  double rms = 0;     ///< RMS of the ordinary values
  double cutoff = 0;  ///< magnitudes above this are outliers
};

Scale OrdinaryScale(const std::vector<double>& reference, unsigned threads = 1) {
  double q90 = MagnitudeQuantile(reference, 0.9, threads);
  if (std::isnan(q90)) return {};
  // Never below 1e6: outputs that are mostly (near) zero, like a softmax of large inputs,
  // keep their ordinary values (the 1.0 beside the 1e-40s) in the scale.
  double cutoff = kOutlierFactor * std::max(1.0, q90);
  // Summed in fixed chunks, merged in order: the same on every thread count.
  const size_t chunks = ChunkCount(reference.size(), kCompareChunk);
  std::vector<double> sums(chunks);
  std::vector<int64_t> counts(chunks);
  ParallelRanges(reference.size(), kCompareChunk, threads, [&](size_t c, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      if (double v = reference[i], m = std::fabs(v); std::isfinite(v) && m <= cutoff) {
        sums[c] += m * m;
        ++counts[c];
      }
  });
  double sum_sq = 0;
  int64_t ordinary = 0;
  for (size_t c = 0; c < chunks; ++c) {
    sum_sq += sums[c];
    ordinary += counts[c];
  }
  return {ordinary ? std::sqrt(sum_sq / static_cast<double>(ordinary)) : 0.0, cutoff};
}

/// |v|'s bits: non-negative doubles order as their bit patterns do; finite ones lie below kInfBits.
uint64_t MagnitudeBits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b & ~(uint64_t{1} << 63);
}
constexpr uint64_t kInfBits = 0x7FF0000000000000ULL;

}  // namespace

double ToleranceScale(const std::vector<double>& reference) { return OrdinaryScale(reference).rms; }

namespace {

/// The finite magnitudes' 16-bit digits at `shift`, counted among those whose bits above
/// shift + 16 are `prefix` (all of them when `shift` is 48), in up to 64 fixed pieces on
/// `threads` threads (counts do not depend on how the work is split).
std::vector<size_t> CountDigits(const std::vector<double>& values, int shift, uint64_t prefix, unsigned threads) {
  const size_t pieces = std::min<size_t>(64, std::max<size_t>(1, ChunkCount(values.size(), kCompareChunk)));
  std::vector<std::vector<size_t>> counts(pieces);
  ParallelChunks(pieces, threads, [&](size_t p) {
    std::vector<size_t>& count = counts[p];
    count.assign(size_t{1} << 16, 0);
    for (size_t i = values.size() * p / pieces, end = values.size() * (p + 1) / pieces; i < end; ++i)
      if (uint64_t b = MagnitudeBits(values[i]); b < kInfBits && (shift == 48 || (b >> (shift + 16)) == prefix))
        ++count[(b >> shift) & 0xFFFF];
  });
  for (size_t p = 1; p < pieces; ++p)
    for (size_t d = 0; d < counts[0].size(); ++d) counts[0][d] += counts[p][d];
  return std::move(counts[0]);
}

}  // namespace

double MagnitudeQuantile(const std::vector<double>& values, double q, unsigned threads) {
  // Radix selection on the bits, a 16-bit digit at a time, each counted in one streaming
  // pass, until the candidates are few enough to select among.
  std::vector<size_t> count = CountDigits(values, 48, 0, threads);
  size_t finite = 0;
  for (size_t c : count) finite += c;
  if (finite == 0) return NAN;
  size_t k = static_cast<size_t>(q * static_cast<double>(finite - 1));
  uint64_t prefix = 0;  // the selected value's bits above `shift`
  for (int shift = 48;; shift -= 16) {
    size_t digit = 0;
    while (k >= count[digit]) k -= count[digit++];
    prefix = (prefix << 16) | digit;
    if (shift == 0) {
      double q_value;
      std::memcpy(&q_value, &prefix, sizeof q_value);
      return q_value;
    }
    if (count[digit] <= (size_t{1} << 16)) {
      std::vector<double> candidates;
      candidates.reserve(count[digit]);
      for (double v : values)
        if (uint64_t b = MagnitudeBits(v); b < kInfBits && (b >> shift) == prefix) candidates.push_back(std::fabs(v));
      std::nth_element(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(k), candidates.end());
      return candidates[k];
    }
    count = CountDigits(values, shift - 16, prefix, threads);
  }
}

std::vector<int64_t> Unravel(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> coords(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = i % shape[d];
    i /= shape[d];
  }
  return coords;
}

void PoisonOutput(DType dtype, void* data, int64_t n) {
  std::string_view poison = PoisonBytes(dtype);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(static_cast<char*>(data) + i * poison.size(), poison.data(), poison.size());
}

bool IsPoison(DType dtype, const void* data, int64_t i) {
  std::string_view poison = PoisonBytes(dtype);
  return std::memcmp(static_cast<const char*>(data) + i * poison.size(), poison.data(), poison.size()) == 0;
}

namespace {

/// One chunk's share of a comparison, merged in chunk order.
struct Partial {
  CompareResult r;
  double sum_sq_ordinary = 0, sum_sq_err = 0;
};

void CompareRange(const CompareInput& in, const std::vector<double>& rounded, const Scale& scale, double allowed_abs,
                  size_t begin, size_t end, Partial* p) {
  DType dtype = in.spec->dtype;
  CompareResult* r = &p->r;
  for (size_t i = begin; i < end; ++i) {
    const auto index = static_cast<int64_t>(i);
    double expected = rounded[i];
    if (IsPoison(dtype, in.got, index) && !std::isnan(expected)) {
      ++r->unwritten;
      Record(r, in, index, NAN, expected);
      continue;
    }
    double got = LoadAsDouble(in.got, dtype, i);
    bool got_nan = std::isnan(got), exp_nan = std::isnan(expected);
    if (got_nan || exp_nan) {
      if (got_nan != exp_nan) {
        ++r->nan_inf_mismatches;
        Record(r, in, index, got, expected);
      }
      continue;
    }
    bool got_inf = std::isinf(got), exp_inf = std::isinf(expected);
    if (got_inf || exp_inf) {
      if (got != expected) {  // also catches an Inf of the wrong sign
        ++r->nan_inf_mismatches;
        Record(r, in, index, got, expected);
      }
      continue;
    }
    double diff = std::fabs(got - expected);
    double allowed = allowed_abs + in.tolerance.rtol * std::fabs(expected);
    allowed += in.unavoidable != nullptr ? (*in.unavoidable)[i] : in.unavoidable_everywhere;
    if (std::fabs(expected) <= scale.cutoff) {
      p->sum_sq_err += diff * diff;
      p->sum_sq_ordinary += expected * expected;
    }
    r->max_abs_error = std::max(r->max_abs_error, diff);
    if (expected != 0) r->max_rel_error = std::max(r->max_rel_error, diff / std::fabs(expected));
    if (diff > allowed) {
      r->worst_ratio = std::max(r->worst_ratio, allowed > 0 ? diff / allowed : INFINITY);
      Record(r, in, index, got, expected);
    } else if (allowed > 0) {
      r->worst_ratio = std::max(r->worst_ratio, diff / allowed);
    }
  }
}

/// Appends `from` to `to` up to `cap` elements in all.
template <typename T>
void AppendCapped(std::vector<T>* to, const std::vector<T>& from, size_t cap) {
  for (size_t i = 0; i < from.size() && to->size() < cap; ++i) to->push_back(from[i]);
}

}  // namespace

CompareResult CompareOutput(const CompareInput& in) {
  CompareResult r;
  DType dtype = in.spec->dtype;
  const std::vector<double>& ref = *in.reference;
  r.elements = static_cast<int64_t>(ref.size());

  if (in.comparison == Comparison::kArgmax) {
    for (int64_t i = 0; i < r.elements; ++i) {
      if (IsPoison(dtype, in.got, i)) {
        ++r.unwritten;
        Record(&r, in, i, NAN, ref[i]);
        continue;
      }
      double got = LoadAsDouble(in.got, dtype, static_cast<size_t>(i));
      const double* row = in.argmax_source->data() + i * in.argmax_cols;
      bool ok = got >= 0 && got < static_cast<double>(in.argmax_cols) && got == std::floor(got) &&
                row[static_cast<int64_t>(got)] == row[static_cast<int64_t>(ref[i])];
      if (!ok) {
        double diff = std::fabs(got - ref[i]);
        r.max_abs_error = std::max(r.max_abs_error, diff);
        r.worst_ratio = INFINITY;
        Record(&r, in, i, got, ref[i]);
      }
    }
    r.rel_l2_error = r.mismatches ? 1.0 : 0.0;
    return r;
  }

  // Reference rounded to the output type: a kernel cannot be asked for more precision than
  // its output can hold.
  const size_t chunks = ChunkCount(ref.size(), kCompareChunk);
  std::vector<double> rounded(ref.size());
  ParallelRanges(ref.size(), kCompareChunk, in.threads, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) rounded[i] = RoundToDType(ref[i], dtype);
  });
  // The absolute tolerance scales with the reference's typical magnitude, not its plain RMS:
  // one planted +-FLT_MAX/2 would otherwise allow an error of ~1e31 on every other element.
  Scale scale = OrdinaryScale(rounded, in.threads);
  if (in.term_norm != nullptr) scale.rms = std::max(scale.rms, OrdinaryScale(*in.term_norm, in.threads).rms);
  r.allowed_abs =
      std::max(in.tolerance.atol * std::sqrt(static_cast<double>(std::max<int64_t>(1, in.reduction_size))) * scale.rms,
               in.tolerance.floor);
  // The relative L2 error (which tells precision loss from a wrong result) leaves the
  // outliers out too, or one huge value would make every other error look negligible.
  std::vector<Partial> parts(chunks);
  ParallelRanges(ref.size(), kCompareChunk, in.threads, [&](size_t c, size_t begin, size_t end) {
    CompareRange(in, rounded, scale, r.allowed_abs, begin, end, &parts[c]);
  });
  double sum_sq_ordinary = 0;
  double sum_sq_err = 0;
  for (const Partial& p : parts) {
    r.mismatches += p.r.mismatches;
    r.nan_inf_mismatches += p.r.nan_inf_mismatches;
    r.unwritten += p.r.unwritten;
    r.max_abs_error = std::max(r.max_abs_error, p.r.max_abs_error);
    r.max_rel_error = std::max(r.max_rel_error, p.r.max_rel_error);
    r.worst_ratio = std::max(r.worst_ratio, p.r.worst_ratio);
    AppendCapped(&r.first, p.r.first, kFirstMismatches);
    AppendCapped(&r.samples, p.r.samples, kSampleMismatches);
    AppendCapped(&r.mismatch_indices, p.r.mismatch_indices, kMaxMismatchIndices);
    sum_sq_ordinary += p.sum_sq_ordinary;
    sum_sq_err += p.sum_sq_err;
  }
  r.rel_l2_error = sum_sq_ordinary > 0 ? std::sqrt(sum_sq_err / sum_sq_ordinary) : std::sqrt(sum_sq_err);
  return r;
}

}  // namespace kforge
