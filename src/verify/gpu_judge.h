#pragma once
// The engine's side of judging KernelBench outputs in GPU memory: the exports a worker hands
// over (ExportInbox) and the kforge-gpu-judge process that compares them (GpuJudge; its
// protocol is in verify/gpu_judge/judge_main.cc).
//
// A worker (python/kforge_torch_worker.py, job field "output_socket") copies each large
// float32 output into exportable GPU memory and sends, before it reports the trial done, one
// frame per form on its socket: {"trial", "output", "form": "out" | "ref64"} with the
// memory's descriptor. The engine answers {"judged": trial} once it has judged a trial; the
// worker then frees that trial's memory. Each input in GPU memory (contiguous) is sent too,
// before the forward, as {"trial", "output": its index, "form": "in"}: the reference's
// worker a copy, the candidate's the very memory its forward is given, so input mutation is
// seen by kforge-gpu-judge, not reported by the candidate's process.
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/clock.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "verify/compare.h"

namespace kforge {

class Machine;

/// Which form of an output an export holds; kInput: an input (its index in "output"), the
/// reference's copy taken before its forward or the memory the candidate's forward was given.
enum class ExportForm { kOutput, kReference64, kInput };

/// The exports one worker sent, read from its socket as they are needed. The worker's bytes
/// are untrusted: a malformed frame, one export sent twice (the worker's own and one forged by
/// code in its process: which is which cannot be told), or more descriptors held than kMaxHeld,
/// closes the inbox (every later Take is empty) and says why.
class ExportInbox {
 public:
  static constexpr size_t kMaxHeld = 256;
  ExportInbox(ScopedFd socket, Clock& clock) : socket_(std::move(socket)), clock_(clock) {}
  /// The descriptor of trial `trial`'s output `output` in `form`, reading frames until
  /// `wait_ms` has passed; invalid when the worker did not send it (problem() may say why).
  ScopedFd Take(int64_t trial, int64_t output, ExportForm form, int64_t wait_ms);
  /// Tells the worker its trial is judged (it frees the memory); exports of that trial and
  /// earlier ones still held here are closed.
  void Judged(int64_t trial);
  const std::string& problem() const { return problem_; }

 private:
  using Key = std::tuple<int64_t, int64_t, int>;
  ScopedFd socket_;
  Clock& clock_;
  std::map<Key, ScopedFd> held_;
  std::set<Key> received_;  ///< every export of a trial not yet judged, taken or not
  std::string problem_;
};

/// The numbers kforge-gpu-judge sends back for one output.
struct DeviceJudgement {
  int64_t unwritten = 0, not_close = 0;  ///< poison-byte elements; elements allclose rejects
  double max_diff = 0, sum_diff = 0, err32 = 0;
  CompareResult compare;
  std::string digest;  ///< "tree:" and the hex SHA-256 over its 64 KiB pieces' SHA-256s
};

class GpuJudge {
 public:
  /// Starts kforge-gpu-judge from beside the running binary; throws EnvironmentError when it
  /// is not there (a build without the CUDA toolkit) or cannot start.
  explicit GpuJudge(Machine& machine);
  ~GpuJudge();
  GpuJudge(const GpuJudge&) = delete;
  GpuJudge& operator=(const GpuJudge&) = delete;

  struct Request {
    int64_t elements = 0;
    std::vector<int64_t> shape;  ///< for the mismatches' coordinates
    bool exact = false;          ///< no float64 form: the float32 reference is exact
    double kernelbench_tol = 1e-4;
    Tolerance tolerance;
    double unavoidable_factor = 4;
  };
  enum class Blame { kNone, kCandidate };
  /// Judges one float32 output: fds are the float32 reference, the float64 one (unless
  /// exact) and the candidate's. Blame::kCandidate (with `error`) when the candidate's memory
  /// cannot be mapped; throws EnvironmentError when the reference's cannot, or the judge fails.
  Blame Judge(const Request& request, std::span<const int> fds, DeviceJudgement* out, std::string* error);
  /// How many of `bytes` bytes differ between the reference's copy of an input (`before`)
  /// and the candidate's input memory after its forward (`after`), in *differing (and the
  /// first's offset in *first). Blame as Judge's.
  Blame SameBytes(int before, int after, int64_t bytes, int64_t* differing, int64_t* first, std::string* error);

 private:
  /// Sends `req` with `fds` and returns the judge's "ok" reply; Blame::kCandidate with *error
  /// when the candidate's memory cannot be mapped; throws EnvironmentError otherwise.
  Blame Ask(const nlohmann::json& req, std::span<const int> fds, nlohmann::json* reply, std::string* error);
  Machine& machine_;
  std::unique_ptr<TempDir> dir_;
  ScopedFd socket_;
  std::unique_ptr<Subprocess> process_;
};

/// Reads the judge's reply (exposed for its test). Throws EnvironmentError on a malformed one.
DeviceJudgement ParseDeviceJudgement(const nlohmann::json& reply, const std::vector<int64_t>& shape);

}  // namespace kforge
