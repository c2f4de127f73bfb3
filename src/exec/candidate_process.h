#pragma once
// Engine side of the runner protocol (runner_protocol.h): starts kforge-runner in the
// sandbox on a compiled candidate and runs cases in it, turning every way the child can end
// (crash, hang, memory exhaustion, forbidden system call) into a value.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/subprocess.h"
#include "exec/probe_stats.h"
#include "exec/sandbox.h"

namespace kforge {

class CancellationToken;
class Clock;
class Machine;
class TensorArena;
class PidsCgroup;
class CandidateUid;
class ProcessTreeCpuClock;
enum class RunOp : uint32_t;

/// Timing of a bench call (see WireTiming in runner_protocol.h).
struct CaseTiming {
  int reps = 0;
  int rotations = 0;
  uint64_t flush_bytes = 0;
  double median_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0, p10_ns = 0, p90_ns = 0;
  int64_t loop_wall_ns = 0;
  /// GPU: the kernel-time pass's calls, the kernels CUPTI recorded in them (0: none) and the
  /// calls' kernel times (each call's kernels' own durations, summed).
  int kernel_calls = 0;
  int kernels = 0;
  double kernel_median_ns = 0, kernel_mean_ns = 0, kernel_min_ns = 0, kernel_max_ns = 0, kernel_p10_ns = 0,
         kernel_p90_ns = 0;
};

/// Bench(): timed calls whose outputs come back for checking, with fresh inputs. The arena
/// then holds 1 + calls.size() copies of the case's layout, `tensors_per_copy` tensors each:
/// copy 0 is timed as usual, copy k + 1 is what timed call calls[k] gets and gives back.
struct BenchSamples {
  size_t tensors_per_copy = 0;
  std::vector<uint32_t> calls;
};

struct CaseRun {
  enum class Outcome {
    kReturned,           ///< kforge_run returned (rc may still be non-zero)
    kCrashed,            ///< fatal signal in the candidate
    kTimedOut,           ///< wall-clock limit; the process group was killed
    kOutOfMemory,        ///< address-space limit reached
    kForbiddenSyscall,   ///< seccomp trapped a forbidden system call
    kFileSizeLimit,      ///< wrote past the file-size limit
    kRunnerLost,         ///< the child vanished without saying why
    kDeviceError,        ///< a CUDA error (illegal address, launch failure, ...)
    kProtocolViolation,  ///< a malformed or unexpected message on the control channel
  };
  Outcome outcome = Outcome::kRunnerLost;
  int rc = 0;
  int signal = 0;
  int syscall_nr = -1;
  int threads_after = 0;
  int kernels_on_stream = -1;   ///< GPU: kernels that ran on the given stream; -1 = not counted
  int kernels_off_stream = -1;  ///< GPU: kernels that ran on any other stream
  int64_t elapsed_ns = 0;
  /// Wall time of the whole call measured by the engine, outside the candidate's reach.
  int64_t engine_wall_ns = 0;
  /// CPU time the candidate's processes used during the call, read by the engine from the
  /// kernel's per-process clocks (core/process_cpu_clock.h); -1 when not asked for
  /// (CandidateProcess::set_measure_cpu) or it could not be read.
  int64_t engine_cpu_ns = -1;
  /// Bench() only: the engine's clock from its go (RunGo) to the kDone, i.e. the timed loop
  /// and the copy of the outputs back, as a clock outside the candidate's reach sees it.
  int64_t paced_wall_ns = 0;
  bool l2_persistence = false;  ///< GPU: persisting L2 was set up (RunFlag kFlagL2Persistence)
  std::string message;
  std::vector<ProbeStats> probes;
  CaseTiming timing;  ///< Bench() only
};

std::string_view OutcomeName(CaseRun::Outcome o);
/// Name of a system call number on this architecture ("socket"), or the number.
std::string SyscallName(int nr);

struct LoadResult {
  bool ok = false;
  bool timed_out = false;
  int threads_started = 0;  ///< threads the candidate's static constructors left running
  std::string message;
};

/// Names of the confinement layers in `layers` (runner_protocol.h's kLayer bits), bubblewrap first.
std::vector<std::string> SandboxLayerNames(SandboxMode mode, uint32_t layers);

class CandidateProcess {
 public:
  /// `so_path` is a compiled candidate. `arena_bytes` is the largest arena any case will
  /// map; it is added to the address-space limit so the limit applies to the candidate's own
  /// allocations.
  /// The sandbox mode is the machine's (Machine::Sandbox()).
  CandidateProcess(Machine& machine, std::string so_path, SandboxLimits limits, size_t arena_bytes, bool gpu = false);
  ~CandidateProcess();

  /// Runs the runner under a tool (e.g. {"compute-sanitizer", "--tool", "memcheck"}); its
  /// report lands in the candidate's output (OutputTail). Call before Start().
  void set_tool(std::vector<std::string> tool) { tool_ = std::move(tool); }
  /// When `cancel` is cancelled, a call in progress ends at once: the child is killed and the
  /// call fails (the caller discards it). Not owned; may be null.
  void set_cancel(const CancellationToken* cancel) { cancel_ = cancel; }
  /// Each call's CPU time (CaseRun::engine_cpu_ns), for a speed measurement. Call before Start().
  void set_measure_cpu(bool measure) { measure_cpu_ = measure; }
  /// Starts the child and waits for it to load the candidate.
  LoadResult Start(int64_t timeout_ms);
  /// Runs one case; the arena holds num_inputs inputs, then the outputs. After any outcome but kReturned the process is
  /// gone.
  CaseRun Run(uint64_t case_id, const TensorArena& arena, size_t num_inputs, int64_t timeout_ms);
  /// GPU runner: `warmup` untimed then `reps` timed calls (L3); outputs of the last come
  /// back in the arena. Same outcomes as Run().
  CaseRun Bench(uint64_t case_id, const TensorArena& arena, size_t num_inputs, int warmup, int reps, int64_t timeout_ms,
                const BenchSamples& samples = {});
  bool alive() const { return child_ != nullptr && !child_->finished(); }
  /// The runner's process id (-1 before Start()): a trace-layer value the verdict records.
  int64_t pid() const { return child_ != nullptr ? child_->pid() : -1; }
  /// The user the runner was started as when it has one of its own (no bubblewrap, a root
  /// engine); 0 otherwise.
  unsigned uid() const;
  /// The confinement layers that held for this process ("bubblewrap", "seccomp",
  /// "landlock", "pids_cgroup", ...), as the runner reported them before loading the
  /// candidate. Empty before Start().
  std::vector<std::string> Layers() const;
  /// Files the child created outside its scratch directory (see SandboxSpec::ScanJail).
  EscapeScan EscapedWrites(int64_t deadline_ns) const;
  /// Ends the child (if still running) and removes its directories. "" on success, else
  /// what could not be removed.
  std::string Cleanup();
  /// Closes the control socket and waits up to `timeout_ms` for the runner to exit (a tool
  /// wrapping it writes its summary then). Returns the output's tail.
  std::string Finish(int64_t timeout_ms, size_t max_bytes = 16384);
  /// Last bytes the candidate wrote to stdout/stderr.
  std::string OutputTail(size_t max_bytes = 4096) const;

 private:
  CaseRun Call(uint64_t case_id, const TensorArena& arena, size_t num_inputs, int64_t timeout_ms, RunOp op, int warmup,
               int reps, const BenchSamples& samples);
  /// The runner's hello and its word that the candidate loaded (or why not), within `timeout_ms`.
  LoadResult AwaitLoad(int64_t timeout_ms);
  /// `run` for a runner that stopped reading its control socket: how it ended.
  CaseRun Gone(CaseRun* run);
  /// Kills the runner and returns `run` as a protocol violation saying `why`.
  CaseRun Violation(CaseRun* run, std::string why);
  bool Receive(struct ParsedReply* reply, int64_t deadline_ns, uint64_t expected_case, CaseRun* failure);
  /// Without bubblewrap, a root engine gives the scratch directory to `uid` and copies the
  /// candidate into a file that user may read (`*so` becomes the copy). False, changing
  /// nothing the runner needs, when this process cannot give files away.
  bool HandOverToUser(unsigned uid, const std::string& scratch, std::string* so);

  Machine& machine_;
  Clock& clock_;
  std::string so_path_;
  SandboxMode mode_;
  SandboxLimits limits_;
  size_t arena_bytes_;
  bool gpu_ = false;
  std::vector<std::string> tool_;
  const CancellationToken* cancel_ = nullptr;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<SandboxSpec> spec_;
  std::unique_ptr<CandidateUid> uid_;  ///< declared after dir_: released before it is removed
  ScopedFd control_;
  std::unique_ptr<Subprocess> child_;
  std::unique_ptr<PidsCgroup> pids_;
  bool measure_cpu_ = false;
  std::unique_ptr<ProcessTreeCpuClock> cpu_clock_;  ///< made once the candidate is loaded, when asked
  uint32_t layers_ = 0;
};

}  // namespace kforge
