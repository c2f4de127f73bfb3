#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <stdexcept>

#include "verify/gpu_judge/judge_kernels.h"

namespace kforge::gpu_judge {
namespace {

constexpr int kThreads = 512;
constexpr uint32_t kPoison32 = 0x7FC0DEAD;  // compare.cc's float32 poison
constexpr uint32_t kFiniteBits = 0x7F800000;

size_t Chunks(size_t n) { return (n + kChunk - 1) / kChunk; }

/// Device memory of a kernel's results, copied back after it ran.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n) : n_(n) {
    if (cudaMalloc(&p_, sizeof(T) * (n ? n : 1)) != cudaSuccess) CheckLastError("cudaMalloc");
    cudaMemset(p_, 0, sizeof(T) * (n ? n : 1));
  }
  ~DeviceArray() { cudaFree(p_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() { return p_; }
  std::vector<T> Copy(size_t count) const {
    std::vector<T> out(count);
    if (count && cudaMemcpy(out.data(), p_, sizeof(T) * count, cudaMemcpyDeviceToHost) != cudaSuccess)
      CheckLastError("cudaMemcpy");
    return out;
  }
  std::vector<T> Copy() const { return Copy(n_); }

 private:
  T* p_ = nullptr;
  size_t n_;
};

__device__ inline uint32_t Bits(float v) { return __float_as_uint(v); }

/// The value the output is judged against, rounded to float32 (RoundTo<kFloat32>).
__device__ inline float Expected(const Source& s, size_t i) {
  return s.ref64 != nullptr ? __double2float_rn(s.ref64[i]) : s.ref32[i];
}

template <typename T>
using Reduce = cub::BlockReduce<T, kThreads>;

struct MaxOp {
  __device__ double operator()(double a, double b) const { return a > b ? a : b; }
};

// ---- KernelBench's allclose, poison bytes, float32's own error -----------------------------

struct FirstPart {
  long long unwritten, not_close;
  double max_diff, sum_diff, err32;
};

__global__ void FirstPassKernel(Source s, double tol, FirstPart* parts) {
  const size_t begin = blockIdx.x * kChunk, end = min(s.n, begin + kChunk);
  long long unwritten = 0, not_close = 0;
  double max_diff = 0, sum_diff = 0, err32 = 0;
  for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const uint32_t b = Bits(s.got[i]);
    unwritten += (b == 0xFFFFFFFFu || b == 0x7F7F7F7Fu);
    const double gx = s.got[i], ex = s.ref32[i];
    const double d = fabs(__dsub_rn(gx, ex));
    bool ok = (gx == ex) || d <= __dadd_rn(tol, __dmul_rn(tol, fabs(ex)));
    if (isnan(gx) || isnan(ex)) ok = false;
    not_close += !ok;
    if (isfinite(d)) {
      max_diff = fmax(max_diff, d);
      sum_diff = __dadd_rn(sum_diff, d);
    }
    if (s.ref64 != nullptr && isfinite(ex) && isfinite(s.ref64[i]))
      err32 = fmax(err32, fabs(__dsub_rn(ex, s.ref64[i])));
  }
  __shared__ union {
    typename Reduce<long long>::TempStorage i;
    typename Reduce<double>::TempStorage d;
  } tmp;
  FirstPart p;
  p.unwritten = Reduce<long long>(tmp.i).Sum(unwritten);
  __syncthreads();
  p.not_close = Reduce<long long>(tmp.i).Sum(not_close);
  __syncthreads();
  p.max_diff = Reduce<double>(tmp.d).Reduce(max_diff, MaxOp());
  __syncthreads();
  p.sum_diff = Reduce<double>(tmp.d).Sum(sum_diff);
  __syncthreads();
  p.err32 = Reduce<double>(tmp.d).Reduce(err32, MaxOp());
  if (threadIdx.x == 0) parts[blockIdx.x] = p;
}

// ---- The quantile: radix selection on the magnitudes' bits, 8 at a time -----------------

__global__ void HistogramKernel(Source s, int shift, uint32_t prefix, unsigned long long* histogram) {
  __shared__ unsigned int local[256];
  for (int d = threadIdx.x; d < 256; d += blockDim.x) local[d] = 0;
  __syncthreads();
  const size_t begin = blockIdx.x * kChunk, end = min(s.n, begin + kChunk);
  for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const uint32_t m = Bits(Expected(s, i)) & 0x7FFFFFFFu;
    if (m < kFiniteBits && (shift == 24 || (m >> (shift + 8)) == prefix)) atomicAdd(&local[(m >> shift) & 0xFF], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < 256; d += blockDim.x)
    if (local[d] != 0) atomicAdd(&histogram[d], static_cast<unsigned long long>(local[d]));
}

std::vector<unsigned long long> Histogram(const Source& s, int shift, uint32_t prefix) {
  DeviceArray<unsigned long long> h(256);
  HistogramKernel<<<Chunks(s.n), kThreads>>>(s, shift, prefix, h.get());
  CheckLastError("the quantile's counting pass");
  return h.Copy();
}

// ---- The tolerance's scale ------------------------------------------------------------

struct ScalePart {
  double sum;
  long long count;
};

__global__ void ScaleKernel(Source s, double cutoff, ScalePart* parts) {
  const size_t begin = blockIdx.x * kChunk, end = min(s.n, begin + kChunk);
  double sum = 0;
  long long count = 0;
  for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const double v = Expected(s, i), m = fabs(v);
    if (isfinite(v) && m <= cutoff) {
      sum = __dadd_rn(sum, __dmul_rn(m, m));
      ++count;
    }
  }
  __shared__ union {
    typename Reduce<long long>::TempStorage i;
    typename Reduce<double>::TempStorage d;
  } tmp;
  ScalePart p;
  p.sum = Reduce<double>(tmp.d).Sum(sum);
  __syncthreads();
  p.count = Reduce<long long>(tmp.i).Sum(count);
  if (threadIdx.x == 0) parts[blockIdx.x] = p;
}

// ---- The element-wise comparison (compare.cc's CompareRange) ----------------------------

enum Kind : int { kOk = 0, kFinite = 1, kNanInf = 2, kUnwritten = 3 };

struct Element {
  int kind = kOk;
  bool measured = false;  ///< both finite: diff and allowed are set
  double got = 0, expected = 0, diff = 0, allowed = 0;
};

__device__ Element Classify(const Source& s, const CompareParams& p, size_t i) {
  Element e;
  e.expected = Expected(s, i);
  if (Bits(s.got[i]) == kPoison32 && !isnan(e.expected)) {
    e.kind = kUnwritten;
    e.got = NAN;
    return e;
  }
  e.got = s.got[i];
  const bool got_nan = isnan(e.got), exp_nan = isnan(e.expected);
  if (got_nan || exp_nan) {
    e.kind = got_nan != exp_nan ? kNanInf : kOk;
    return e;
  }
  if (isinf(e.got) || isinf(e.expected)) {
    e.kind = e.got != e.expected ? kNanInf : kOk;
    return e;
  }
  e.measured = true;
  e.diff = fabs(__dsub_rn(e.got, e.expected));
  e.allowed = __dadd_rn(__dadd_rn(p.allowed_abs, __dmul_rn(p.rtol, fabs(e.expected))), p.unavoidable);
  e.kind = e.diff > e.allowed ? kFinite : kOk;
  return e;
}

struct ComparePart {
  long long mismatches, nan_inf, unwritten, finite;
  double max_abs, max_rel, worst, sum_sq_err, sum_sq_ordinary;
};

__global__ void CompareKernel(Source s, CompareParams p, ComparePart* parts) {
  const size_t begin = blockIdx.x * kChunk, end = min(s.n, begin + kChunk);
  long long mismatches = 0, nan_inf = 0, unwritten = 0, finite = 0;
  double max_abs = 0, max_rel = 0, worst = 0, sum_sq_err = 0, sum_sq_ordinary = 0;
  for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const Element e = Classify(s, p, i);
    mismatches += e.kind != kOk;
    nan_inf += e.kind == kNanInf;
    unwritten += e.kind == kUnwritten;
    finite += e.kind == kFinite;
    if (!e.measured) continue;
    if (fabs(e.expected) <= p.cutoff) {
      sum_sq_err = __dadd_rn(sum_sq_err, __dmul_rn(e.diff, e.diff));
      sum_sq_ordinary = __dadd_rn(sum_sq_ordinary, __dmul_rn(e.expected, e.expected));
    }
    max_abs = fmax(max_abs, e.diff);
    if (e.expected != 0) max_rel = fmax(max_rel, __ddiv_rn(e.diff, fabs(e.expected)));
    if (e.kind == kFinite)
      worst = fmax(worst, e.allowed > 0 ? __ddiv_rn(e.diff, e.allowed) : INFINITY);
    else if (e.allowed > 0)
      worst = fmax(worst, __ddiv_rn(e.diff, e.allowed));
  }
  __shared__ union {
    typename Reduce<long long>::TempStorage i;
    typename Reduce<double>::TempStorage d;
  } tmp;
  ComparePart out;
  long long* counts[] = {&out.mismatches, &out.nan_inf, &out.unwritten, &out.finite};
  const long long values[] = {mismatches, nan_inf, unwritten, finite};
  for (int k = 0; k < 4; ++k) {
    *counts[k] = Reduce<long long>(tmp.i).Sum(values[k]);
    __syncthreads();
  }
  out.max_abs = Reduce<double>(tmp.d).Reduce(max_abs, MaxOp());
  __syncthreads();
  out.max_rel = Reduce<double>(tmp.d).Reduce(max_rel, MaxOp());
  __syncthreads();
  out.worst = Reduce<double>(tmp.d).Reduce(worst, MaxOp());
  __syncthreads();
  out.sum_sq_err = Reduce<double>(tmp.d).Sum(sum_sq_err);
  __syncthreads();
  out.sum_sq_ordinary = Reduce<double>(tmp.d).Sum(sum_sq_ordinary);
  if (threadIdx.x == 0) parts[blockIdx.x] = out;
}

/// The indices of chunk blockIdx.x's mismatches (finite ones only, with `finite_only`), in
/// order, from offsets[blockIdx.x] on.
__global__ void CollectKernel(Source s, CompareParams p, bool finite_only, const long long* offsets, long long* out) {
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  const size_t begin = blockIdx.x * kChunk, end = min(s.n, begin + kChunk);
  long long at = offsets[blockIdx.x];
  for (size_t tile = begin; tile < end; tile += kThreads) {
    const size_t i = tile + threadIdx.x;
    int flag = 0;
    if (i < end) {
      const int kind = Classify(s, p, i).kind;
      flag = finite_only ? kind == kFinite : kind != kOk;
    }
    int position, total;
    Scan(tmp).ExclusiveSum(flag, position, total);
    if (flag) out[at + position] = static_cast<long long>(i);
    at += total;
    __syncthreads();
  }
}

__global__ void GatherKernel(Source s, CompareParams p, const long long* indices, size_t count, double* got,
                             double* expected) {
  const size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  const Element e = Classify(s, p, static_cast<size_t>(indices[k]));
  got[k] = e.got;
  expected[k] = e.expected;
}

/// The first `cap` mismatches' indices (finite ones only, with `finite_only`), given how
/// many each chunk holds.
std::vector<long long> Collect(const Source& s, const CompareParams& p, bool finite_only,
                               const std::vector<long long>& per_chunk, size_t cap) {
  std::vector<long long> offsets;
  long long total = 0;
  for (size_t c = 0; c < per_chunk.size() && static_cast<size_t>(total) < cap; ++c) {
    offsets.push_back(total);
    total += per_chunk[c];
  }
  if (total == 0 || cap == 0) return {};
  DeviceArray<long long> d_offsets(offsets.size());
  cudaMemcpy(d_offsets.get(), offsets.data(), sizeof(long long) * offsets.size(), cudaMemcpyHostToDevice);
  DeviceArray<long long> d_out(static_cast<size_t>(total));
  CollectKernel<<<offsets.size(), kThreads>>>(s, p, finite_only, d_offsets.get(), d_out.get());
  CheckLastError("collecting the mismatches");
  return d_out.Copy(std::min(cap, static_cast<size_t>(total)));
}

std::vector<MismatchValue> Values(const Source& s, const CompareParams& p, const std::vector<long long>& indices,
                                  size_t count) {
  count = std::min(count, indices.size());
  if (count == 0) return {};
  DeviceArray<long long> d_indices(count);
  cudaMemcpy(d_indices.get(), indices.data(), sizeof(long long) * count, cudaMemcpyHostToDevice);
  DeviceArray<double> got(count), expected(count);
  GatherKernel<<<(count + 255) / 256, 256>>>(s, p, d_indices.get(), count, got.get(), expected.get());
  CheckLastError("reading the mismatches' values");
  std::vector<double> g = got.Copy(), e = expected.Copy();
  std::vector<MismatchValue> out(count);
  for (size_t k = 0; k < count; ++k) out[k] = {indices[k], g[k], e[k]};
  return out;
}

// ---- SHA-256 of each leaf (FIPS 180-4) ----------------------------------------------------

__constant__ uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

__device__ inline uint32_t Rotr(uint32_t x, int n) { return __funnelshift_r(x, x, n); }

__device__ void Compress(uint32_t h[8], const uint32_t block[16]) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) w[t] = block[t];
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = Rotr(w[t - 15], 7) ^ Rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = Rotr(w[t - 2], 17) ^ Rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t t1 = k + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
    const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

/// Thread k hashes leaf k of `bytes` (a whole number of 32-bit words: float32 outputs).
__global__ void LeafKernel(const uint32_t* words, size_t bytes, unsigned char* digests) {
  const size_t leaf = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t begin = leaf * kLeafBytes;
  if (begin >= bytes) return;
  const size_t length = min(kLeafBytes, bytes - begin);
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint32_t block[16];
  const uint32_t* w = words + begin / 4;
  const size_t whole = length / 64;
  for (size_t b = 0; b < whole; ++b) {
    for (int t = 0; t < 16; ++t) block[t] = __byte_perm(w[b * 16 + t], 0, 0x0123);
    Compress(h, block);
  }
  // The tail: the words left, the 0x80 byte, zeros, the length in bits (big-endian).
  const size_t left_words = (length - whole * 64) / 4;
  for (int t = 0; t < 16; ++t)
    block[t] = t < static_cast<int>(left_words) ? __byte_perm(w[whole * 16 + t], 0, 0x0123) : 0;
  block[left_words] = 0x80000000u;
  if (left_words >= 14) {
    Compress(h, block);
    for (int t = 0; t < 16; ++t) block[t] = 0;
  }
  const unsigned long long bits = static_cast<unsigned long long>(length) * 8;
  block[14] = static_cast<uint32_t>(bits >> 32);
  block[15] = static_cast<uint32_t>(bits);
  Compress(h, block);
  for (int t = 0; t < 8; ++t)
    for (int k = 0; k < 4; ++k) digests[leaf * 32 + t * 4 + k] = static_cast<unsigned char>(h[t] >> (24 - 8 * k));
}

}  // namespace

void CheckLastError(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

FirstPassTotals FirstPass(const Source& s, double tol) {
  FirstPassTotals t;
  if (s.n == 0) return t;
  DeviceArray<FirstPart> parts(Chunks(s.n));
  FirstPassKernel<<<Chunks(s.n), kThreads>>>(s, tol, parts.get());
  CheckLastError("the first pass");
  for (const FirstPart& p : parts.Copy()) {  // merged in chunk order
    t.unwritten += p.unwritten;
    t.not_close += p.not_close;
    t.max_diff = std::max(t.max_diff, p.max_diff);
    t.sum_diff += p.sum_diff;
    t.err32 = std::max(t.err32, p.err32);
  }
  return t;
}

double MagnitudeQuantile(const Source& s, double q) {
  if (s.n == 0) return NAN;
  std::vector<unsigned long long> count = Histogram(s, 24, 0);
  unsigned long long finite = 0;
  for (auto c : count) finite += c;
  if (finite == 0) return NAN;
  auto k = static_cast<unsigned long long>(q * static_cast<double>(finite - 1));
  uint32_t prefix = 0;
  for (int shift = 24;; shift -= 8) {
    size_t digit = 0;
    while (k >= count[digit]) k -= count[digit++];
    prefix = (prefix << 8) | static_cast<uint32_t>(digit);
    if (shift == 0) {
      float v;
      std::memcpy(&v, &prefix, sizeof v);
      return v;
    }
    count = Histogram(s, shift - 8, prefix);
  }
}

ScaleTotals OrdinarySquares(const Source& s, double cutoff) {
  ScaleTotals t;
  if (s.n == 0) return t;
  DeviceArray<ScalePart> parts(Chunks(s.n));
  ScaleKernel<<<Chunks(s.n), kThreads>>>(s, cutoff, parts.get());
  CheckLastError("the scale pass");
  for (const ScalePart& p : parts.Copy()) {
    t.sum_sq += p.sum;
    t.count += p.count;
  }
  return t;
}

CompareTotals Compare(const Source& s, const CompareParams& p, size_t first_cap, size_t samples_cap,
                      size_t indices_cap) {
  CompareTotals t;
  if (s.n == 0) return t;
  DeviceArray<ComparePart> parts(Chunks(s.n));
  CompareKernel<<<Chunks(s.n), kThreads>>>(s, p, parts.get());
  CheckLastError("the comparison");
  std::vector<long long> mismatches_per_chunk, finite_per_chunk;
  for (const ComparePart& c : parts.Copy()) {
    t.mismatches += c.mismatches;
    t.nan_inf_mismatches += c.nan_inf;
    t.unwritten += c.unwritten;
    t.finite_mismatches += c.finite;
    t.max_abs_error = std::max(t.max_abs_error, c.max_abs);
    t.max_rel_error = std::max(t.max_rel_error, c.max_rel);
    t.worst_ratio = std::max(t.worst_ratio, c.worst);
    t.sum_sq_err += c.sum_sq_err;
    t.sum_sq_ordinary += c.sum_sq_ordinary;
    mismatches_per_chunk.push_back(c.mismatches);
    finite_per_chunk.push_back(c.finite);
  }
  if (t.mismatches == 0) return t;
  std::vector<long long> all = Collect(s, p, false, mismatches_per_chunk, std::max(first_cap, indices_cap));
  t.first = Values(s, p, all, first_cap);
  for (size_t k = 0; k < all.size() && k < indices_cap; ++k) t.indices.push_back(all[k]);
  t.samples = Values(s, p, Collect(s, p, true, finite_per_chunk, samples_cap), samples_cap);
  return t;
}

std::string LeafDigests(const void* device_bytes, size_t bytes) {
  const size_t leaves = (bytes + kLeafBytes - 1) / kLeafBytes;
  if (leaves == 0) return {};
  DeviceArray<unsigned char> digests(leaves * 32);
  LeafKernel<<<(leaves + 127) / 128, 128>>>(static_cast<const uint32_t*>(device_bytes), bytes, digests.get());
  CheckLastError("hashing the output");
  std::vector<unsigned char> d = digests.Copy();
  return std::string(d.begin(), d.end());
}

namespace {

/// Counts the bytes that differ between a and b, and the first one's offset (atomicMin).
__global__ void DifferingBytesKernel(const unsigned char* a, const unsigned char* b, size_t bytes,
                                     unsigned long long* count, unsigned long long* first) {
  const size_t words = bytes / 4;
  const auto* wa = reinterpret_cast<const uint32_t*>(a);
  const auto* wb = reinterpret_cast<const uint32_t*>(b);
  unsigned long long mine = 0, lowest = ~0ull;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride) {
    const uint32_t x = wa[i] ^ wb[i];
    if (x == 0) continue;
    for (int k = 0; k < 4; ++k)
      if ((x >> (8 * k)) & 0xffu) {
        ++mine;
        lowest = min(lowest, static_cast<unsigned long long>(4 * i + k));
      }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (size_t i = words * 4; i < bytes; ++i)
      if (a[i] != b[i]) {
        ++mine;
        lowest = min(lowest, static_cast<unsigned long long>(i));
      }
  if (mine) {
    atomicAdd(count, mine);
    atomicMin(first, lowest);
  }
}

}  // namespace

ByteDifference DifferingBytes(const void* a, const void* b, size_t bytes) {
  DeviceArray<unsigned long long> out(2);
  const unsigned long long none = ~0ull;
  cudaMemcpy(out.get() + 1, &none, sizeof none, cudaMemcpyHostToDevice);
  const size_t words = bytes / 4;
  const unsigned blocks = static_cast<unsigned>(std::min<size_t>((words + kThreads - 1) / kThreads + 1, 4096));
  DifferingBytesKernel<<<blocks, kThreads>>>(static_cast<const unsigned char*>(a), static_cast<const unsigned char*>(b),
                                             bytes, out.get(), out.get() + 1);
  CheckLastError("comparing the inputs' bytes");
  std::vector<unsigned long long> r = out.Copy();
  ByteDifference d;
  d.differing = static_cast<int64_t>(r[0]);
  d.first = r[0] ? static_cast<int64_t>(r[1]) : -1;
  return d;
}

}  // namespace kforge::gpu_judge
