#pragma once
// Wire protocol between the engine and kforge-runner, the sandboxed child that loads a
// candidate and calls kforge_run.
//
// Design note:
//  - Messages travel on a SOCK_SEQPACKET socket the runner inherits as descriptor
//    kControlFd; the candidate's stdout and stderr go to a log file. Nothing the candidate
//    prints can be mistaken for a protocol message.
//  - Tensor data lives in one memfd per case, passed with SCM_RIGHTS and mapped shared. The
//    engine lays out inputs, poisoned outputs and guard regions in it, and keeps private
//    copies of the inputs to detect mutation. Reference results never enter the arena.
//  - Every message starts with kRunnerMagic and kRunnerProtocolVersion; a mismatch is a
//    protocol error, never a pass.
//  - The candidate shares the runner's address space, so the runner's replies are evidence,
//    not verdicts: the engine recomputes everything it can (outputs, guards, inputs).
#include <cstdint>

namespace kforge {

inline constexpr uint32_t kRunnerMagic = 0x6b666f72;  // "kfor"
inline constexpr uint32_t kRunnerProtocolVersion = 6;
inline constexpr int kControlFd = 3;
inline constexpr int kCgroupFd = 4;  ///< optional: cgroup.procs of the pids cgroup to join
inline constexpr int kMaxWireTensors = 16;
inline constexpr int kMaxWireDims = 8;
inline constexpr int kMaxBenchSamples = 8;

struct WireTensor {
  uint8_t code = 0;  ///< DLDataTypeCode
  uint8_t bits = 0;
  uint16_t ndim = 0;
  uint32_t reserved = 0;
  int64_t shape[kMaxWireDims] = {};
  uint64_t offset = 0;  ///< byte offset of the first element in the arena
};

enum class RunOp : uint32_t {
  kRun = 0,    ///< one call of kforge_run on the arena; outputs come back in it
  kBench = 1,  ///< GPU runner: warm-up calls, kTimingReady, the engine's RunGo, then `reps` timed calls
};

struct RunRequest {
  uint32_t magic = kRunnerMagic;
  uint32_t version = kRunnerProtocolVersion;
  uint64_t case_id = 0;
  RunOp op = RunOp::kRun;
  uint32_t warmup = 0;       ///< kBench: untimed calls first
  uint32_t reps = 0;         ///< kBench: timed calls
  uint64_t arena_bytes = 0;  ///< the region of copy 0, which every call but the sampled ones uses
  uint32_t num_inputs = 0;
  uint32_t num_outputs = 0;
  /// kBench: timed calls whose outputs are checked. Sample k's inputs (fresh, never seen by
  /// the candidate) and poisoned outputs lie at (k + 1) * sample_stride in the mapped file;
  /// before timed call sample_calls[k] they are copied into the device arena that call uses
  /// (same pointers as ever), and after it that arena comes back to the sample's region.
  uint32_t samples = 0;
  uint32_t sample_calls[kMaxBenchSamples] = {};
  uint64_t sample_stride = 0;
  uint64_t mapped_bytes = 0;  ///< size of the arena file (0: arena_bytes)
  /// Non-zero: the engine's name for an arena it sends again and again to this process alone
  /// (a speed measurement): the runner keeps its mapping between calls while the name stays
  /// the same. Zero: mapped for this call and unmapped after it.
  uint64_t keep_arena_id = 0;
  WireTensor tensors[kMaxWireTensors];  ///< inputs first, then outputs
};

enum class ReplyKind : uint32_t {
  kReady = 1,        ///< candidate loaded, kforge_run found
  kLoadFailed = 2,   ///< dlopen or dlsym failed; message says why
  kDone = 3,         ///< kforge_run returned; rc holds its return value
  kFatal = 4,        ///< the runner is dying; fatal says why
  kProbe = 5,        ///< statistics of one KFORGE_PROBE, sent before the call's kDone
  kHello = 6,        ///< confinement in place, candidate not loaded yet; `layers` says which held
  kTimingReady = 7,  ///< kBench: set up and warmed up, device idle; the timed loop waits for RunGo
};

/// The engine's answer to kTimingReady: the timed loop may start. The engine's clock runs
/// from sending this to receiving the kDone, a span the candidate can lengthen but not
/// shorten: the loop cannot start before the go arrives, and the kDone comes after the last
/// call's outputs are back. Whatever the candidate does to the runner's own clocks (the
/// CUDA events, the loop's wall clock), this one is out of its reach.
struct RunGo {
  uint32_t magic = kRunnerMagic;
  uint32_t version = kRunnerProtocolVersion;
  uint64_t case_id = 0;
};

/// Confinement layers the runner put in place before loading the candidate (RunReply.layers
/// of kHello). Sent before any candidate code runs, so the candidate cannot forge it.
enum SandboxLayer : uint32_t {
  kLayerSeccomp = 1u << 0,         ///< system call filter (no network, processes, ptrace, ...)
  kLayerNoNewPrivs = 1u << 1,      ///< PR_SET_NO_NEW_PRIVS
  kLayerNoCapabilities = 1u << 2,  ///< every capability dropped, bounding set included
  kLayerUserNamespace = 1u << 3,   ///< runs in a user namespace of its own
  kLayerLandlock = 1u << 4,        ///< file system restricted to scratch + read-only system paths
  kLayerSignalScope = 1u << 5,     ///< Landlock: no signals to processes outside the sandbox
  kLayerTaskLimit = 1u << 6,       ///< RLIMIT_NPROC in force (it only binds in a user namespace)
  kLayerPidsCgroup = 1u << 7,      ///< joined the pids cgroup the engine made for it
  kLayerOtherUid = 1u << 8,        ///< runs as a user other than the engine's (it was root)
};

inline constexpr int kMaxProbesPerCall = 32;
inline constexpr int kProbeSample = 8;

/// Statistics of one probed buffer (see include/kforge/probe.h). Travels in RunReply.probe.
struct WireProbe {
  char name[48] = {};
  int64_t count = 0;
  int64_t nan_count = 0;
  int64_t inf_count = 0;
  double min = 0, max = 0, mean = 0, stddev = 0;  ///< over finite values
  float sample[kProbeSample] = {};
};

enum class FatalKind : uint32_t {
  kNone = 0,
  kCrashSignal = 1,       ///< SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT
  kOutOfMemory = 2,       ///< allocation failed at the address-space limit
  kForbiddenSyscall = 3,  ///< seccomp trapped a system call the policy forbids
  kFileSizeLimit = 4,     ///< wrote more than the output-size limit
  kProtocol = 5,          ///< bad request from the engine
  kDeviceError = 6,       ///< a CUDA error (illegal address, launch failure): the context is lost
};

/// kBench results: CUDA-event times of each timed call on the given stream, L2 flushed
/// before every call and inputs rotated through copies of the arena, every stream
/// synchronised after every call. Outputs of the last call on copy 0 come back in the arena.
struct WireTiming {
  uint32_t reps = 0;
  uint32_t rotations = 0;    ///< arena copies cycled through (inputs not hot in L2)
  uint64_t flush_bytes = 0;  ///< written before each call to evict L2
  double median_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0, p10_ns = 0, p90_ns = 0;
  int64_t loop_wall_ns = 0;  ///< host wall clock over the timed loop (a plausibility bound)
  /// The kernel-time pass (GPU, before the event-timed loop): its calls, the kernels CUPTI
  /// recorded in them (0: not recorded) and each call's kernel time: its kernels' own
  /// durations summed, on every stream.
  uint32_t kernel_calls = 0;
  uint32_t kernels = 0;
  double kernel_median_ns = 0, kernel_mean_ns = 0, kernel_min_ns = 0, kernel_max_ns = 0, kernel_p10_ns = 0,
         kernel_p90_ns = 0;
};

/// What the GPU runner saw after a call (RunReply.flags).
enum RunFlag : uint32_t {
  /// The persisting-L2 limit is not 0, or the stream has an access-policy window: data can
  /// stay in L2 across the timer's flush.
  kFlagL2Persistence = 1u << 0,
};

struct RunReply {
  uint32_t magic = kRunnerMagic;
  uint32_t version = kRunnerProtocolVersion;
  ReplyKind kind = ReplyKind::kDone;
  FatalKind fatal = FatalKind::kNone;
  uint64_t case_id = 0;
  int32_t rc = 0;
  int32_t signal = 0;
  int32_t syscall_nr = -1;
  int32_t threads_after = 0;  ///< threads alive in the runner after kforge_run returned
  uint32_t layers = 0;        ///< kHello: SandboxLayer bits
  uint32_t flags = 0;         ///< kDone: RunFlag bits
  /// GPU runner: kernels that ran during the call (CUPTI activity records), on the stream
  /// kforge_run was given and on any other stream. -1 when launches are not counted (the
  /// CPU runner, or CUPTI unavailable: `message` then says why).
  int32_t kernels_on_stream = -1;
  int32_t kernels_off_stream = -1;
  int64_t elapsed_ns = 0;
  char message[448] = {};
  WireProbe probe;    ///< valid when kind == kProbe
  WireTiming timing;  ///< valid for a kBench request's kDone
};

}  // namespace kforge
