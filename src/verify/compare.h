#pragma once
// Comparison of one candidate output against the reference (after ggml's
// test-backend-ops): NaN positions first, then Inf positions and signs, then the error
// against the dtype's tolerance. The reference is rounded to the output dtype first.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/task.h"

namespace kforge {

struct Mismatch {
  int64_t index = -1;
  std::vector<int64_t> coords;
  double got = 0;
  double expected = 0;
};

inline constexpr size_t kSampleMismatches = 256;

struct CompareResult {
  int64_t elements = 0;
  int64_t mismatches = 0;  ///< elements outside tolerance (NaN/Inf and unwritten included)
  int64_t nan_inf_mismatches = 0;
  int64_t unwritten = 0;  ///< elements still holding the poison pattern
  double max_abs_error = 0;
  double max_rel_error = 0;
  double rel_l2_error = 0;                ///< ||got - ref|| / ||ref|| over elements finite in both
  double worst_ratio = 0;                 ///< max |got - ref| / allowed, over finite elements
  double allowed_abs = 0;                 ///< the absolute part of the tolerance for this case
  std::vector<Mismatch> first;            ///< the first few mismatches, in index order
  std::vector<Mismatch> samples;          ///< up to kSampleMismatches finite mismatches (for forensics)
  std::vector<int64_t> mismatch_indices;  ///< all of them, capped (for forensics)
  bool passed() const { return mismatches == 0; }
};

/// Writes the poison pattern (a NaN with a distinctive payload, or a sentinel integer) into
/// n elements. Unwritten outputs still hold it afterwards.
void PoisonOutput(DType dtype, void* data, int64_t n);
bool IsPoison(DType dtype, const void* data, int64_t i);

/// The reference values a comparison reads: doubles (a native task's reference), or float32
/// read in place (a KernelBench float32 output, up to 6.4 GB, never copied to doubles).
class ReferenceValues {
 public:
  ReferenceValues() = default;
  ReferenceValues(const std::vector<double>* v) : f64_(*v) {}  // NOLINT: a vector is the common case
  ReferenceValues(std::span<const double> v) : f64_(v) {}
  ReferenceValues(std::span<const float> v) : f32_(v), is_f32_(true) {}
  size_t size() const { return is_f32_ ? f32_.size() : f64_.size(); }
  double operator[](size_t i) const { return is_f32_ ? f32_[i] : f64_[i]; }
  /// fn(std::span<const float>) or fn(std::span<const double>), as held.
  template <typename Fn>
  decltype(auto) Visit(Fn&& fn) const {
    return is_f32_ ? fn(f32_) : fn(f64_);
  }

 private:
  std::span<const double> f64_;
  std::span<const float> f32_;
  bool is_f32_ = false;
};

struct CompareInput {
  const TensorSpec* spec = nullptr;
  std::vector<int64_t> shape;
  const void* got = nullptr;
  ReferenceValues reference;
  Tolerance tolerance;
  int64_t reduction_size = 1;
  Comparison comparison = Comparison::kAllClose;
  /// For sums of products: per element, the norm of the sum's terms (sqrt of the reference
  /// on squared inputs). The absolute tolerance then scales with the larger of its typical
  /// magnitude and the reference's, so an output that is a small difference of large terms
  /// is held to the float error of those terms, not to its own size. Null otherwise.
  const std::vector<double>* term_norm = nullptr;
  /// Per element, an error the inputs' conditioning makes unavoidable in float32 (see
  /// Reference::UnavoidableError), added to that element's tolerance alone. Null otherwise.
  const std::vector<double>* unavoidable = nullptr;
  /// An unavoidable error that is the same for every element (when `unavoidable` is null):
  /// what a float32 reference errs by at most, for an output judged against float64.
  double unavoidable_everywhere = 0;
  /// For kArgmax: the input the index refers into, as doubles, shape [rows, cols].
  const std::vector<double>* argmax_source = nullptr;
  int64_t argmax_cols = 0;
  /// Threads for the element-wise passes. The elements go in chunks of kCompareChunk, merged
  /// in order: the result is the same for every thread count.
  unsigned threads = 1;
};

inline constexpr size_t kCompareChunk = size_t{1} << 20;

/// The magnitude the absolute tolerance is proportional to: the RMS of the finite reference
/// values, leaving out outliers more than 1e6 times the 90th percentile of |reference| (or
/// than 1e6, if larger). Such values are still judged, by rtol * |reference| each.
double ToleranceScale(const std::vector<double>& reference);
/// The q-quantile (0 <= q <= 1) of the finite |values|: the element nth_element would put at
/// q * (count - 1) in a copy of them, found without the copy (radix selection on the bits;
/// KernelBench outputs reach 1 GiB, where the copy and nth_element took seconds). NaN when
/// no value is finite. The counting passes run on `threads` threads.
double MagnitudeQuantile(std::span<const double> values, double q, unsigned threads = 1);
double MagnitudeQuantile(std::span<const float> values, double q, unsigned threads = 1);

CompareResult CompareOutput(const CompareInput& in);

/// Coordinates of flat index i in a row-major shape.
std::vector<int64_t> Unravel(int64_t i, const std::vector<int64_t>& shape);

}  // namespace kforge
