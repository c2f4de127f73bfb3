#include "verify/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <type_traits>

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

/// |v|'s bits: non-negative doubles order as their bit patterns do; finite ones lie below kInfBits.
uint64_t MagnitudeBits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b & ~(uint64_t{1} << 63);
}
constexpr uint64_t kInfBits = 0x7FF0000000000000ULL;

/// The pieces a counting pass splits `n` values into: fixed by n, never by the thread count.
size_t CountingPieces(size_t n) { return std::min<size_t>(64, std::max<size_t>(1, ChunkCount(n, kCompareChunk))); }

/// The finite magnitudes' 16-bit digits at `shift` (of their bits as doubles), counted among
/// those whose bits above shift + 16 are `prefix` (all of them when `shift` is 48), in fixed
/// pieces on `threads` threads (counts do not depend on how the work is split).
template <typename T>
std::vector<size_t> CountDigits(std::span<const T> values, int shift, uint64_t prefix, unsigned threads) {
  const size_t pieces = CountingPieces(values.size());
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

/// The finite magnitudes whose bits above `shift` are `prefix`, gathered in fixed pieces.
template <typename T>
std::vector<double> Gather(std::span<const T> values, int shift, uint64_t prefix, unsigned threads) {
  const size_t pieces = CountingPieces(values.size());
  std::vector<std::vector<double>> found(pieces);
  ParallelChunks(pieces, threads, [&](size_t p) {
    for (size_t i = values.size() * p / pieces, end = values.size() * (p + 1) / pieces; i < end; ++i)
      if (uint64_t b = MagnitudeBits(values[i]); b < kInfBits && (b >> shift) == prefix)
        found[p].push_back(std::fabs(static_cast<double>(values[i])));
  });
  for (size_t p = 1; p < pieces; ++p) found[0].insert(found[0].end(), found[p].begin(), found[p].end());
  return std::move(found[0]);
}

template <typename T>
double Quantile(std::span<const T> values, double q, unsigned threads) {
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
      std::vector<double> candidates = Gather(values, shift, prefix, threads);
      std::nth_element(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(k), candidates.end());
      return candidates[k];
    }
    count = CountDigits(values, shift - 16, prefix, threads);
  }
}

template <typename T>
Scale OrdinaryScale(std::span<const T> reference, unsigned threads) {
  double q90 = Quantile(reference, 0.9, threads);
  if (std::isnan(q90)) return {};
  // Never below 1e6: outputs that are mostly (near) zero, like a softmax of large inputs,
  // keep their ordinary values (the 1.0 beside the 1e-40s) in the scale.
  double cutoff = kOutlierFactor * std::max(1.0, q90);
  // Summed in fixed chunks, merged in order: the same on every thread count.
  const size_t chunks = ChunkCount(reference.size(), kCompareChunk);
  std::vector<double> sums(chunks);
  std::vector<int64_t> counts(chunks);
  ParallelRanges(reference.size(), kCompareChunk, threads, [&](size_t c, size_t begin, size_t end) {
    double sum = 0;
    int64_t count = 0;
    for (size_t i = begin; i < end; ++i)
      if (double v = reference[i], m = std::fabs(v); std::isfinite(v) && m <= cutoff) {
        sum += m * m;
        ++count;
      }
    sums[c] = sum;
    counts[c] = count;
  });
  double sum_sq = 0;
  int64_t ordinary = 0;
  for (size_t c = 0; c < chunks; ++c) {
    sum_sq += sums[c];
    ordinary += counts[c];
  }
  return {ordinary ? std::sqrt(sum_sq / static_cast<double>(ordinary)) : 0.0, cutoff};
}

}  // namespace

double ToleranceScale(const std::vector<double>& reference) {
  return OrdinaryScale(std::span<const double>(reference), 1).rms;
}

double MagnitudeQuantile(std::span<const double> values, double q, unsigned threads) {
  return Quantile(values, q, threads);
}
double MagnitudeQuantile(std::span<const float> values, double q, unsigned threads) {
  return Quantile(values, q, threads);
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

/// IsPoison for an element type known at compile time: one integer comparison.
template <DType D>
bool IsPoisonAt(const void* data, size_t i) {
  if constexpr (D == DType::kFloat32) return std::memcmp(static_cast<const uint32_t*>(data) + i, &kPoison32, 4) == 0;
  if constexpr (D == DType::kFloat64) return std::memcmp(static_cast<const uint64_t*>(data) + i, &kPoison64, 8) == 0;
  if constexpr (D == DType::kFloat16) return static_cast<const uint16_t*>(data)[i] == kPoison16;
  if constexpr (D == DType::kBFloat16) return static_cast<const uint16_t*>(data)[i] == kPoisonBf16;
  if constexpr (D == DType::kInt32) return static_cast<const int32_t*>(data)[i] == kPoisonI32;
  if constexpr (D == DType::kInt64) return static_cast<const int64_t*>(data)[i] == kPoisonI64;
}

}  // namespace

namespace {

/// One chunk's share of a comparison, merged in chunk order.
struct Partial {
  CompareResult r;
  double sum_sq_ordinary = 0, sum_sq_err = 0;
};

/// Compares elements [begin, end) of an output of type D with the rounded reference.
template <DType D, typename R>
void CompareRange(const CompareInput& in, std::span<const R> rounded, const Scale& scale, double allowed_abs,
                  size_t begin, size_t end, Partial* p) {
  CompareResult* r = &p->r;
  for (size_t i = begin; i < end; ++i) {
    const auto index = static_cast<int64_t>(i);
    double expected = rounded[i];
    if (IsPoisonAt<D>(in.got, i) && !std::isnan(expected)) {
      ++r->unwritten;
      Record(r, in, index, NAN, expected);
      continue;
    }
    double got = LoadAs<D>(in.got, i);
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

namespace {

/// The element-wise comparison once the reference is rounded to the output's type D.
template <DType D, typename R>
void CompareRounded(const CompareInput& in, std::span<const R> rounded, CompareResult* out) {
  CompareResult& r = *out;
  // The absolute tolerance scales with the reference's typical magnitude, not its plain RMS:
  // one planted +-FLT_MAX/2 would otherwise allow an error of ~1e31 on every other element.
  Scale scale = OrdinaryScale(rounded, in.threads);
  if (in.term_norm != nullptr)
    scale.rms = std::max(scale.rms, OrdinaryScale(std::span<const double>(*in.term_norm), in.threads).rms);
  r.allowed_abs =
      std::max(in.tolerance.atol * std::sqrt(static_cast<double>(std::max<int64_t>(1, in.reduction_size))) * scale.rms,
               in.tolerance.floor);
  // The relative L2 error (which tells precision loss from a wrong result) leaves the
  // outliers out too, or one huge value would make every other error look negligible.
  std::vector<Partial> parts(ChunkCount(rounded.size(), kCompareChunk));
  ParallelRanges(rounded.size(), kCompareChunk, in.threads, [&](size_t c, size_t begin, size_t end) {
    CompareRange<D>(in, rounded, scale, r.allowed_abs, begin, end, &parts[c]);
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
}

/// The reference rounded to the output's type D: a kernel cannot be asked for more precision
/// than its output can hold. Held as float where D's values all are floats (float32, fp16,
/// bf16: half the memory of doubles), and not copied at all for a float32 reference of a
/// float32 output (rounding is then the identity).
template <DType D>
void CompareTyped(const CompareInput& in, CompareResult* r) {
  constexpr bool kFloatHolds = D == DType::kFloat32 || D == DType::kFloat16 || D == DType::kBFloat16;
  using Rounded = std::conditional_t<kFloatHolds, float, double>;
  in.reference.Visit([&](auto ref) {
    using T = typename decltype(ref)::value_type;
    if constexpr (D == DType::kFloat32 && std::is_same_v<std::remove_const_t<T>, float>) {
      CompareRounded<D>(in, ref, r);
    } else {
      std::vector<Rounded> rounded(ref.size());
      ParallelRanges(ref.size(), kCompareChunk, in.threads, [&](size_t, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) rounded[i] = static_cast<Rounded>(RoundTo<D>(ref[i]));
      });
      CompareRounded<D>(in, std::span<const Rounded>(rounded), r);
    }
  });
}

}  // namespace

CompareResult CompareOutput(const CompareInput& in) {
  CompareResult r;
  DType dtype = in.spec->dtype;
  const ReferenceValues& ref = in.reference;
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

  WithDType(dtype, [&](auto d) { CompareTyped<decltype(d)::value>(in, &r); });
  return r;
}

}  // namespace kforge
