// kforge-gpu-judge: the engine's comparison of a KernelBench trial's outputs where they lie,
// in GPU memory, so 6.4 GB outputs are judged without a round trip through files. A trusted
// kforge program: it decides nothing either. It maps the memory the workers exported, runs
// the passes (judge_kernels.h) and sends back the numbers; the engine makes the verdict from
// them exactly as from its own host passes.
//
// Protocol (core/frames.h on the socket at the descriptor named by its one argument): the
// engine sends a request frame, JSON
//     {"n": elements, "exact": bool, "kb_tol", "atol", "rtol", "floor", "reduction_size",
//      "unavoidable_factor"}
// with descriptors [float32 reference, float64 reference (unless exact), candidate], each a
// CUDA memory export (cuMemExportToShareableHandle, POSIX file descriptor) of at least the
// bytes its form needs. The reply frame is {"ok": true, "first": {...}, "compare": {...},
// "digest": "tree:<hex>"} (first: KernelBench's allclose and the poison bytes; compare: the
// certified comparison's numbers, non-finite numbers as the strings "nan", "inf", "-inf";
// digest: SHA-256 over the SHA-256s of the candidate output's 64 KiB pieces), or {"ok":
// false, "which": "reference" | "candidate", "error"} when a descriptor cannot be mapped. The
// candidate's memory is copied before it is read: its process may still be writing to it.
//
// The second request, {"op": "same_bytes", "bytes": N} with descriptors [reference's copy of
// an input taken before its forward, the memory the candidate's forward was given], is
// answered {"ok": true, "differing": bytes that differ, "first": the first one's offset or -1}
// (input mutation, seen where the input lies), or the same {"ok": false, ...} as above.
// The judge ends when the engine closes the socket.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/clock.h"
#include "core/frames.h"
#include "core/hash.h"
#include "verify/gpu_judge/judge_kernels.h"

namespace kforge::gpu_judge {
namespace {

using nlohmann::json;

json Number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

std::string DriverError(CUresult r) {
  const char* s = nullptr;
  cuGetErrorString(r, &s);
  return s != nullptr ? s : "CUDA driver error " + std::to_string(static_cast<int>(r));
}

CUmemAllocationProp DeviceProp(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

/// Another process's exported memory, mapped here for reading until destroyed.
class Mapping {
 public:
  Mapping(int fd, size_t bytes, int device) {
    size_t granularity = 0;
    CUmemAllocationProp prop = DeviceProp(device);
    Check(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity");
    size_ = (std::max<size_t>(bytes, 1) + granularity - 1) / granularity * granularity;
    CUmemGenericAllocationHandle handle;
    Check(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          "import");
    CUresult r = cuMemAddressReserve(&ptr_, size_, 0, 0, 0);
    if (r == CUDA_SUCCESS) {
      r = cuMemMap(ptr_, size_, 0, handle, 0);  // fails when the allocation is smaller
      mapped_ = r == CUDA_SUCCESS;
    }
    cuMemRelease(handle);  // the mapping holds it
    Check(r, "map");
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    Check(cuMemSetAccess(ptr_, size_, &access, 1), "access");
  }
  ~Mapping() { Unmap(); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(ptr_);
  }

 private:
  void Unmap() {
    if (mapped_) cuMemUnmap(ptr_, size_);
    if (ptr_ != 0) cuMemAddressFree(ptr_, size_);
    mapped_ = false;
    ptr_ = 0;
  }
  void Check(CUresult r, const char* step) {
    if (r == CUDA_SUCCESS) return;
    Unmap();
    throw std::invalid_argument(std::string(step) + ": " + DriverError(r));
  }
  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
  bool mapped_ = false;
};

/// The judge's own copy of the candidate's output, grown as needed and kept between trials.
class Private {
 public:
  float* Copy(const float* from, size_t n) {
    if (n > capacity_) {
      cudaFree(data_);
      data_ = nullptr;
      if (cudaMalloc(&data_, n * sizeof(float)) != cudaSuccess) CheckLastError("allocating the judge's copy");
      capacity_ = n;
    }
    // A copy between device buffers does not wait for itself: it must be over before the
    // caller unmaps `from`.
    if (n) cudaMemcpy(data_, from, n * sizeof(float), cudaMemcpyDeviceToDevice);
    CheckLastError("copying the candidate's output");
    return data_;
  }

 private:
  float* data_ = nullptr;
  size_t capacity_ = 0;
};

json Mismatches(const std::vector<MismatchValue>& list) {
  json out = json::array();
  for (const auto& m : list) out.push_back({m.index, Number(m.got), Number(m.expected)});
  return out;
}

json Judge(const json& req, std::vector<ScopedFd>& fds, int device, Private* own) {
  const auto n = req.at("n").get<size_t>();
  const bool exact = req.at("exact").get<bool>();
  if (fds.size() != (exact ? 2u : 3u))
    return {{"ok", false}, {"which", "reference"}, {"error", "wrong descriptor count"}};
  std::unique_ptr<Mapping> ref32, ref64, got;
  try {
    ref32 = std::make_unique<Mapping>(fds[0].get(), n * sizeof(float), device);
    if (!exact) ref64 = std::make_unique<Mapping>(fds[1].get(), n * sizeof(double), device);
  } catch (const std::invalid_argument& e) {
    return {{"ok", false}, {"which", "reference"}, {"error", e.what()}};
  }
  try {
    got = std::make_unique<Mapping>(fds.back().get(), n * sizeof(float), device);
  } catch (const std::invalid_argument& e) {
    return {{"ok", false}, {"which", "candidate"}, {"error", e.what()}};
  }
  fds.clear();
  // One word of each, read first: memory mapped and still not readable is named, not met in
  // the middle of a pass.
  for (auto [m, which] : {std::pair<const Mapping*, const char*>{ref32.get(), "reference"}, {got.get(), "candidate"}}) {
    float word;
    if (n > 0 && cudaMemcpy(&word, m->as<float>(), sizeof word, cudaMemcpyDeviceToHost) != cudaSuccess)
      throw std::runtime_error(std::string("the ") + which +
                               "'s memory is mapped and cannot be read: " + cudaGetErrorString(cudaGetLastError()));
  }
  Source s{ref32->as<float>(), exact ? nullptr : ref64->as<double>(), own->Copy(got->as<float>(), n), n};
  got.reset();

  const FirstPassTotals first = FirstPass(s, req.at("kb_tol").get<double>());
  // compare.cc's OrdinaryScale and CompareRounded, the same arithmetic on the host.
  double rms = 0, cutoff = 0;
  if (double q90 = MagnitudeQuantile(s, 0.9); !std::isnan(q90)) {
    cutoff = 1e6 * std::max(1.0, q90);
    ScaleTotals sq = OrdinarySquares(s, cutoff);
    rms = sq.count ? std::sqrt(sq.sum_sq / static_cast<double>(sq.count)) : 0.0;
  }
  CompareParams p;
  p.allowed_abs =
      std::max(req.at("atol").get<double>() *
                   std::sqrt(static_cast<double>(std::max<int64_t>(1, req.at("reduction_size").get<int64_t>()))) * rms,
               req.at("floor").get<double>());
  p.rtol = req.at("rtol").get<double>();
  p.unavoidable = req.at("unavoidable_factor").get<double>() * first.err32;
  p.cutoff = cutoff;
  const CompareTotals c = Compare(s, p, 8, 256, size_t{1} << 16);
  const double rel_l2 = c.sum_sq_ordinary > 0 ? std::sqrt(c.sum_sq_err / c.sum_sq_ordinary) : std::sqrt(c.sum_sq_err);
  return {{"ok", true},
          {"first",
           {{"unwritten", first.unwritten},
            {"not_close", first.not_close},
            {"max_diff", Number(first.max_diff)},
            {"sum_diff", Number(first.sum_diff)},
            {"err32", Number(first.err32)}}},
          {"compare",
           {{"mismatches", c.mismatches},
            {"nan_inf_mismatches", c.nan_inf_mismatches},
            {"unwritten", c.unwritten},
            {"max_abs_error", Number(c.max_abs_error)},
            {"max_rel_error", Number(c.max_rel_error)},
            {"rel_l2_error", Number(rel_l2)},
            {"worst_ratio", Number(c.worst_ratio)},
            {"allowed_abs", Number(p.allowed_abs)},
            {"first", Mismatches(c.first)},
            {"samples", Mismatches(c.samples)},
            {"mismatch_indices", c.indices}}},
          {"digest", "tree:" + Sha256Hex(LeafDigests(s.got, n * sizeof(float)))}};
}

json SameBytes(const json& req, std::vector<ScopedFd>& fds, int device) {
  const auto bytes = req.at("bytes").get<size_t>();
  if (fds.size() != 2u) return {{"ok", false}, {"which", "reference"}, {"error", "wrong descriptor count"}};
  std::unique_ptr<Mapping> before, after;
  try {
    before = std::make_unique<Mapping>(fds[0].get(), bytes, device);
  } catch (const std::invalid_argument& e) {
    return {{"ok", false}, {"which", "reference"}, {"error", e.what()}};
  }
  try {
    after = std::make_unique<Mapping>(fds[1].get(), bytes, device);
  } catch (const std::invalid_argument& e) {
    return {{"ok", false}, {"which", "candidate"}, {"error", e.what()}};
  }
  fds.clear();
  const ByteDifference d = DifferingBytes(before->as<unsigned char>(), after->as<unsigned char>(), bytes);
  return {{"ok", true}, {"differing", d.differing}, {"first", d.first}};
}

int Serve(int socket) {
  int device = 0;
  if (cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "kforge-gpu-judge: no usable CUDA device: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 3;
  }
  LiveClock clock;
  Private own;
  for (;;) {
    Frame f;
    FrameStatus st = ReceiveFrame(socket, clock, -1, FrameLimits{1 << 16, 3}, &f);
    if (st == FrameStatus::kClosed) return 0;
    if (st != FrameStatus::kOk) {
      std::fprintf(stderr, "kforge-gpu-judge: the engine's request was %s\n", FrameStatusName(st));
      return 2;
    }
    json reply;
    bool fatal = false;
    try {
      const json req = json::parse(f.bytes);
      reply =
          req.value("op", "judge") == "same_bytes" ? SameBytes(req, f.fds, device) : Judge(req, f.fds, device, &own);
    } catch (const std::runtime_error& e) {  // CUDA failed: the context cannot be trusted after
      reply = {{"ok", false}, {"which", "judge"}, {"error", e.what()}};
      fatal = true;
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"which", "judge"}, {"error", std::string("bad request: ") + e.what()}};
    }
    if (!SendFrame(socket, reply.dump()) || fatal) return fatal ? 4 : 0;
  }
}

}  // namespace
}  // namespace kforge::gpu_judge

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kforge-gpu-judge SOCKET_FD (kforge runs this; it is not meant for hand use)\n");
    return 2;
  }
  return kforge::gpu_judge::Serve(std::atoi(argv[1]));
}
