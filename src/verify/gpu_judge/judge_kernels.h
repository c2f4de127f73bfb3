#pragma once
// The GPU judge's passes (judge_kernels.cu): the comparison verify/compare.cc and
// verify/kernelbench/judge.cc make on the host, made on the device for a float32 output
// against a float32 reference and, when it differs, a float64 one. Same elements, same
// chunks of kChunk elements, the same per-element arithmetic (round-to-nearest, never fused):
// counts, maxima, the quantile, the tolerance and the mismatch lists are the host's exactly;
// sums within a chunk are added in another (fixed) order, so sums agree to rounding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kforge::gpu_judge {

inline constexpr size_t kChunk = size_t{1} << 20;  ///< = kCompareChunk
inline constexpr size_t kLeafBytes = size_t{1} << 16;

/// Device pointers to one output's three forms, n elements each.
struct Source {
  const float* ref32 = nullptr;
  const double* ref64 = nullptr;  ///< null: the float32 reference is exact
  const float* got = nullptr;
  size_t n = 0;
};

struct FirstPassTotals {
  int64_t unwritten = 0;  ///< elements made of one poison byte (0xff or 0x7f)
  int64_t not_close = 0;  ///< elements torch.allclose(ref32, got, tol, tol) rejects
  double max_diff = 0, sum_diff = 0;
  double err32 = 0;  ///< max |ref32 - ref64| over elements finite in both
};
FirstPassTotals FirstPass(const Source& s, double tol);

/// The q-quantile of the finite |expected| values (MagnitudeQuantile's definition); NaN when none is finite.
double MagnitudeQuantile(const Source& s, double q);

struct ScaleTotals {
  double sum_sq = 0;
  int64_t count = 0;
};
/// Over finite expected values of magnitude <= cutoff: the sum of their squares, and how many.
ScaleTotals OrdinarySquares(const Source& s, double cutoff);

struct CompareParams {
  double allowed_abs = 0, rtol = 0, unavoidable = 0, cutoff = 0;
};
struct MismatchValue {
  int64_t index = 0;
  double got = 0, expected = 0;
};
struct CompareTotals {
  int64_t mismatches = 0, nan_inf_mismatches = 0, unwritten = 0, finite_mismatches = 0;
  double max_abs_error = 0, max_rel_error = 0, worst_ratio = 0;
  double sum_sq_err = 0, sum_sq_ordinary = 0;
  std::vector<MismatchValue> first;    ///< the first `first_cap` mismatches
  std::vector<MismatchValue> samples;  ///< the first `samples_cap` finite ones
  std::vector<int64_t> indices;        ///< the first `indices_cap` mismatches' indices
};
CompareTotals Compare(const Source& s, const CompareParams& p, size_t first_cap, size_t samples_cap,
                      size_t indices_cap);

/// The SHA-256s of `bytes`' pieces of kLeafBytes (the last one shorter), 32 bytes each, in
/// order: what the output's digest hashes again (a tree of two levels).
std::string LeafDigests(const void* device_bytes, size_t bytes);

struct ByteDifference {
  int64_t differing = 0;  ///< bytes that differ
  int64_t first = -1;     ///< the first one's offset, -1 none
};
/// Where two device buffers of `bytes` bytes differ (an input before and after a forward).
ByteDifference DifferingBytes(const void* a, const void* b, size_t bytes);

/// Throws std::runtime_error with the CUDA runtime's words when the last call failed.
void CheckLastError(const char* what);

}  // namespace kforge::gpu_judge
