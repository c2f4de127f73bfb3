#include "exec/candidate_process.h"

#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/cancel.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/process_cpu_clock.h"
#include "core/text.h"
#include "exec/arena.h"
#include "exec/candidate_uid.h"
#include "exec/machine.h"
#include "exec/pids_cgroup.h"
#include "exec/runner_protocol.h"
#include "exec/runner_reply.h"

namespace kforge {

/// How often a wait with a cancellation token looks at it.
constexpr int64_t kCancelPollMillis = 100;

std::string_view OutcomeName(CaseRun::Outcome o) {
  switch (o) {
    case CaseRun::Outcome::kReturned:
      return "returned";
    case CaseRun::Outcome::kCrashed:
      return "crashed";
    case CaseRun::Outcome::kTimedOut:
      return "timed_out";
    case CaseRun::Outcome::kOutOfMemory:
      return "out_of_memory";
    case CaseRun::Outcome::kForbiddenSyscall:
      return "forbidden_syscall";
    case CaseRun::Outcome::kFileSizeLimit:
      return "file_size_limit";
    case CaseRun::Outcome::kRunnerLost:
      return "runner_lost";
    case CaseRun::Outcome::kDeviceError:
      return "device_error";
    case CaseRun::Outcome::kProtocolViolation:
      return "protocol_violation";
  }
  return "?";
}

std::string SyscallName(int nr) {
  if (nr < 0) return "?";
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  if (name == nullptr) return std::to_string(nr);
  std::string out = name;
  std::free(name);
  return out;
}

CandidateProcess::CandidateProcess(Machine& machine, std::string so_path, SandboxLimits limits, size_t arena_bytes,
                                   bool gpu)
    : machine_(machine),
      clock_(machine.env().clock()),
      so_path_(std::move(so_path)),
      mode_(machine.Sandbox()),
      limits_(limits),
      arena_bytes_(arena_bytes),
      gpu_(gpu) {}

CandidateProcess::~CandidateProcess() {
  control_.Reset();  // the runner exits when the socket closes
  if (child_ && !child_->finished()) child_->Wait(2000);
}

EscapeScan CandidateProcess::EscapedWrites(int64_t deadline_ns) const {
  return spec_ ? spec_->ScanJail(deadline_ns, clock_) : EscapeScan{};
}

std::string CandidateProcess::Cleanup() {
  control_.Reset();
  if (child_ && !child_->finished()) {
    child_->Wait(2000);
    if (!child_->finished()) child_->Kill();
  }
  uid_.reset();  // after the runner: what it left running as its uid is killed
  pids_.reset();
  return dir_ ? dir_->Remove() : "";
}

unsigned CandidateProcess::uid() const { return uid_ ? uid_->uid() : 0; }

std::vector<std::string> SandboxLayerNames(SandboxMode mode, uint32_t layers) {
  std::vector<std::string> out;
  if (mode == SandboxMode::kBubblewrap) out.push_back("bubblewrap");
  static const std::pair<uint32_t, const char*> kNames[] = {{kLayerSeccomp, "seccomp"},
                                                            {kLayerNoNewPrivs, "no_new_privs"},
                                                            {kLayerNoCapabilities, "no_capabilities"},
                                                            {kLayerUserNamespace, "user_namespace"},
                                                            {kLayerLandlock, "landlock"},
                                                            {kLayerSignalScope, "landlock_signal_scope"},
                                                            {kLayerPidsCgroup, "pids_cgroup"},
                                                            {kLayerTaskLimit, "rlimit_nproc"},
                                                            {kLayerOtherUid, "other_uid"}};
  for (const auto& [bit, name] : kNames)
    if (layers & bit) out.push_back(name);
  return out;
}

std::vector<std::string> CandidateProcess::Layers() const { return SandboxLayerNames(mode_, layers_); }

std::string CandidateProcess::Finish(int64_t timeout_ms, size_t max_bytes) {
  control_.Reset();
  if (child_ && !child_->finished()) child_->Wait(timeout_ms);
  return OutputTail(max_bytes);
}

std::string CandidateProcess::OutputTail(size_t max_bytes) const {
  return dir_ ? ReadTextTail(dir_->path() + "/candidate.log", max_bytes) : "";
}

bool CandidateProcess::HandOverToUser(unsigned uid, const std::string& scratch, std::string* so) {
  // Only root can give a directory away; for anyone else the runner stays the engine's user.
  if (::chown(scratch.c_str(), uid, uid) != 0) return false;
  // The runner opens the candidate before it changes user, but dlopen reopens it through
  // /proc/self/fd, as that user: a copy readable by everyone, whatever the umask made of the
  // compiler's output. (Its directory is root's and private; the open descriptor is the way in.)
  std::string copy = dir_->path() + "/candidate.so";
  std::error_code ec;
  std::filesystem::copy_file(*so, copy, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec || ::chmod(copy.c_str(), 0644) != 0) return false;
  *so = copy;
  return true;
}

LoadResult CandidateProcess::Start(int64_t timeout_ms) {
  dir_ = std::make_unique<TempDir>("kforge-run", machine_.config().temp_dir);
  std::string scratch = dir_->path() + "/scratch", jail = dir_->path() + "/jail";
  MakeDirs(scratch);
  MakeDirs(jail);
  spec_ = std::make_unique<SandboxSpec>(mode_, jail, scratch);
  std::string runner = machine_.RunnerPath(gpu_);
  bool bwrap = mode_ == SandboxMode::kBubblewrap;
  spec_->AddReadOnly(runner, "/kforge/kforge-runner");
  spec_->AddReadOnly(so_path_, "/kforge/candidate.so");
  SandboxLimits limits = limits_;
  limits.address_space_bytes += static_cast<int64_t>(arena_bytes_);
  // libcudart, found through the runner's rpath: the toolkit under both its own and its
  // resolved path (/usr/local/cuda is usually a link to /usr/local/cuda-X.Y). Mounted by
  // bubblewrap and readable through Landlock.
  std::vector<std::string> toolkit;
  if (gpu_) {
    spec_->AllowGpu();
#ifdef KFORGE_CUDA_ROOT
    std::error_code ec;
    std::string root = KFORGE_CUDA_ROOT, real = std::filesystem::canonical(root, ec).string();
    if (FileExists(root)) toolkit.push_back(root);
    if (!ec && real != root) toolkit.push_back(real);
#endif
    for (const auto& path : toolkit) spec_->AddReadOnly(path, path);
    // The CUDA driver reserves large virtual ranges: an address-space limit would break it.
    limits.address_space_bytes = 0;
  }
  std::string so = so_path_;
  // Under a tool (compute-sanitizer) the runner stays the tool's user: the tool's injected
  // library talks to its front end through files that user owns.
  unsigned uid = 0;
  const Config& config = machine_.config();
  if (!bwrap && tool_.empty() && config.candidate_uid != 0 && ::geteuid() == 0) {
    std::string why_not;
    uid_ = CandidateUid::Acquire(config.candidate_uid_locks, config.candidate_uid, config.candidate_uids, &why_not);
    if (!uid_)
      throw EnvironmentError("cannot run the candidate as a user of its own: " + why_not +
                             " (KFORGE_CANDIDATE_UID=0 runs candidates as the engine's user, with no task limit)");
    if (HandOverToUser(uid_->uid(), scratch, &so))
      uid = uid_->uid();
    else
      uid_.reset();
  }
  std::vector<std::string> cmd = tool_;
  cmd.insert(cmd.end(), {bwrap ? "/kforge/kforge-runner" : runner, "run"});
  for (const auto& a : LimitArgs(limits)) cmd.push_back(a);
  cmd.insert(cmd.end(), {"--so", bwrap ? "/kforge/candidate.so" : so});
  cmd.insert(cmd.end(), {"--scratch", bwrap ? "/scratch" : scratch, "--read", bwrap ? "/kforge" : so});
  if (uid != 0) cmd.insert(cmd.end(), {"--uid", std::to_string(uid)});
  if (bwrap) cmd.push_back("--in-jail");
  for (const auto& path : toolkit) cmd.insert(cmd.end(), {"--read", path});
  if (gpu_ && !tool_.empty()) cmd.push_back("--separate-allocations");
  std::string no_cgroup;
  if (limits_.max_tasks > 0) {
    cmd.insert(cmd.end(), {"--tasks", std::to_string(limits_.max_tasks)});
    // Named after this process's run directory, which is unique on the machine.
    pids_ = PidsCgroup::Create(std::filesystem::path(dir_->path()).filename().string(), limits_.max_tasks, &no_cgroup);
    if (pids_) cmd.insert(cmd.end(), {"--cgroup-fd", std::to_string(kCgroupFd)});
  }

  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    throw EnvironmentError(std::string("cannot create a socket pair: ") + std::strerror(errno));
  control_.Reset(fds[0]);
  ScopedFd theirs(fds[1]);
  SpawnOptions opts;
  opts.argv = spec_->Wrap(cmd);
  opts.output_path = dir_->path() + "/candidate.log";
  opts.inherit_fds = {{theirs.get(), kControlFd}};
  if (pids_) opts.inherit_fds.push_back({pids_->procs_fd(), kCgroupFd});
  child_ = machine_.env().processes().Start(opts);
  theirs.Reset();

  return AwaitLoad(timeout_ms);
}

LoadResult CandidateProcess::AwaitLoad(int64_t timeout_ms) {
  ParsedReply parsed;
  CaseRun failure;
  LoadResult load;
  int64_t deadline = clock_.MonotonicNanos() + timeout_ms * 1000000;
  bool received = Receive(&parsed, deadline, 0, &failure);
  if (received && parsed.reply.kind == ReplyKind::kHello) {
    layers_ = parsed.reply.layers;
    received = Receive(&parsed, deadline, 0, &failure);
  }
  if (!received) {
    load.timed_out = failure.outcome == CaseRun::Outcome::kTimedOut;
    load.message = "the runner did not load the candidate: " + failure.message;
    std::string tail = OutputTail(2048);
    if (!tail.empty()) load.message += "\n" + tail;
    return load;
  }
  const RunReply& reply = parsed.reply;
  if (reply.kind == ReplyKind::kReady) {
    load.ok = true;
    load.threads_started = reply.threads_after - 1;
    if (measure_cpu_) cpu_clock_ = std::make_unique<ProcessTreeCpuClock>(child_->pid());
  } else if (reply.kind == ReplyKind::kFatal) {
    load.message = "the candidate died while loading (static initialisers): " + parsed.message;
  } else if (reply.kind == ReplyKind::kLoadFailed) {
    load.message = parsed.message;
  } else {
    child_->Kill();
    load.message = "the candidate's process sent an unexpected message while loading";
  }
  return load;
}

bool CandidateProcess::Receive(ParsedReply* reply, int64_t deadline_ns, uint64_t expected_case, CaseRun* failure) {
  Clock& clock = clock_;
  RunReply buf;
  auto take = [&](ssize_t got) {
    *reply = ParseReply(&buf, static_cast<size_t>(got), expected_case);
    if (reply->valid) return true;
    child_->Kill();
    failure->outcome = CaseRun::Outcome::kProtocolViolation;
    failure->message = "the candidate's process sent a malformed message on the control channel: " + reply->why;
    return false;
  };
  for (;;) {
    int64_t left_ms = (deadline_ns - clock.MonotonicNanos()) / 1000000;
    if (cancel_ != nullptr && cancel_->cancelled()) {  // the signal interrupts poll below
      child_->Kill();
      failure->outcome = CaseRun::Outcome::kRunnerLost;
      failure->message = "stopped: " + cancel_->reason();
      return false;
    }
    if (left_ms <= 0) {
      child_->Kill();
      failure->outcome = CaseRun::Outcome::kTimedOut;
      failure->message = "no answer within the time limit; killed";
      return false;
    }
    pollfd pfds[2] = {{control_.get(), POLLIN, 0}, {child_->exit_fd(), POLLIN, 0}};
    // With a token, wake at least every 100 ms: a token cancelled from another thread (an
    // MCP client, a service caller) sends no signal to interrupt the poll.
    const int64_t slice_ms = cancel_ != nullptr ? std::min<int64_t>(left_ms, kCancelPollMillis) : left_ms;
    int n = ::poll(pfds, 2, static_cast<int>(std::min<int64_t>(slice_ms, 1 << 30)));
    if (n < 0 && errno == EINTR) continue;
    if (pfds[0].revents & POLLIN) {
      ssize_t got = ::recv(control_.get(), &buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
      if (got > 0) return take(got);
    }
    if ((pfds[1].revents & POLLIN) || (pfds[0].revents & (POLLHUP | POLLERR))) {
      // Drain a reply sent just before exit, if any.
      ssize_t got = ::recv(control_.get(), &buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
      if (got > 0) return take(got);
      ExitStatus st = child_->Wait(2000);
      // bubblewrap reports a child killed by signal N as exit code 128 + N.
      int sig = st.kind == ExitStatus::Kind::kSignaled ? st.signal
                : st.code > 128 && st.code < 128 + 65  ? st.code - 128
                                                       : 0;
      failure->signal = sig;
      if (sig == SIGSYS) {
        // The seccomp trap fired while signals were blocked (as inside posix_spawn), so
        // the kernel killed the process before the runner could name the call.
        failure->outcome = CaseRun::Outcome::kForbiddenSyscall;
        failure->message =
            "the candidate made a system call the sandbox forbids "
            "(process creation, with signals blocked)";
      } else {
        failure->outcome = sig == SIGXFSZ ? CaseRun::Outcome::kFileSizeLimit : CaseRun::Outcome::kRunnerLost;
        failure->message = "the candidate's process " + st.Describe() + " without a report";
      }
      return false;
    }
  }
}

CaseRun CandidateProcess::Run(uint64_t case_id, const TensorArena& arena, size_t num_inputs, int64_t timeout_ms) {
  return Call(case_id, arena, num_inputs, timeout_ms, RunOp::kRun, 0, 0, {});
}

CaseRun CandidateProcess::Gone(CaseRun* run) {
  ExitStatus st = child_->Wait(2000);
  run->message = "the candidate's process " + st.Describe();
  return *run;
}

CaseRun CandidateProcess::Violation(CaseRun* run, std::string why) {
  child_->Kill();
  run->outcome = CaseRun::Outcome::kProtocolViolation;
  run->message = std::move(why);
  return *run;
}

CaseRun CandidateProcess::Bench(uint64_t case_id, const TensorArena& arena, size_t num_inputs, int warmup, int reps,
                                int64_t timeout_ms, const BenchSamples& samples) {
  return Call(case_id, arena, num_inputs, timeout_ms, RunOp::kBench, warmup, reps, samples);
}

namespace {

/// The request for one call of the case laid out in `arena`.
RunRequest MakeRequest(uint64_t case_id, const TensorArena& arena, size_t num_inputs, RunOp op, int warmup, int reps,
                       const BenchSamples& samples) {
  RunRequest req;
  req.case_id = case_id;
  req.op = op;
  req.warmup = static_cast<uint32_t>(warmup);
  req.reps = static_cast<uint32_t>(reps);
  const size_t per_copy = samples.calls.empty() ? arena.size() : samples.tensors_per_copy;
  req.arena_bytes = arena.total_bytes();
  req.mapped_bytes = arena.total_bytes();
  req.keep_arena_id = arena.keep_mapped() ? arena.id() : 0;
  if (!samples.calls.empty()) {
    KF_CHECK(samples.calls.size() <= kMaxBenchSamples && arena.size() == per_copy * (1 + samples.calls.size()));
    req.arena_bytes = arena.tensor(per_copy).offset;  // copy 0 and its guards
    req.sample_stride = arena.tensor(per_copy).offset - arena.tensor(0).offset;
    req.samples = static_cast<uint32_t>(samples.calls.size());
    for (size_t k = 0; k < samples.calls.size(); ++k) req.sample_calls[k] = samples.calls[k];
  }
  req.num_inputs = static_cast<uint32_t>(num_inputs);
  req.num_outputs = static_cast<uint32_t>(per_copy - num_inputs);
  for (size_t i = 0; i < per_copy; ++i) {
    const ArenaTensor& t = arena.tensor(i);
    WireTensor& w = req.tensors[i];
    DLDataType dt = ToDLDataType(t.dtype);
    w.code = dt.code;
    w.bits = dt.bits;
    w.ndim = static_cast<uint16_t>(t.shape.size());
    for (size_t d = 0; d < t.shape.size(); ++d) w.shape[d] = t.shape[d];
    w.offset = t.offset;
  }
  return req;
}

/// Sends `req` with the arena's descriptor; false when the runner no longer reads.
bool SendRequest(int socket_fd, const RunRequest& req, int fd) {
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{const_cast<RunRequest*>(&req), sizeof req};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return ::sendmsg(socket_fd, &msg, MSG_NOSIGNAL) >= 0;
}

ProbeStats ProbeOf(const ParsedReply& parsed) {
  const WireProbe& w = parsed.reply.probe;
  ProbeStats p;
  p.name = parsed.probe_name;
  p.count = w.count;
  p.nan_count = w.nan_count;
  p.inf_count = w.inf_count;
  p.min = w.min;
  p.max = w.max;
  p.mean = w.mean;
  p.stddev = w.stddev;
  p.sample.assign(w.sample, w.sample + std::min<int64_t>(w.count, kProbeSample));
  return p;
}

/// What the runner reported of the call: its outcome's details, its own timing.
void CopyReply(const RunReply& reply, CaseRun* out) {
  out->rc = reply.rc;
  out->signal = reply.signal;
  out->syscall_nr = reply.syscall_nr;
  out->elapsed_ns = reply.elapsed_ns;
  out->threads_after = reply.threads_after;
  out->kernels_on_stream = reply.kernels_on_stream;
  out->kernels_off_stream = reply.kernels_off_stream;
  out->l2_persistence = (reply.flags & kFlagL2Persistence) != 0;
  const WireTiming& t = reply.timing;
  out->timing = CaseTiming{static_cast<int>(t.reps),
                           static_cast<int>(t.rotations),
                           t.flush_bytes,
                           t.median_ns,
                           t.mean_ns,
                           t.min_ns,
                           t.max_ns,
                           t.p10_ns,
                           t.p90_ns,
                           t.loop_wall_ns,
                           static_cast<int>(t.kernel_calls),
                           static_cast<int>(t.kernels),
                           t.kernel_median_ns,
                           t.kernel_mean_ns,
                           t.kernel_min_ns,
                           t.kernel_max_ns,
                           t.kernel_p10_ns,
                           t.kernel_p90_ns};
}

CaseRun::Outcome OutcomeOf(FatalKind fatal) {
  switch (fatal) {
    case FatalKind::kCrashSignal:
      return CaseRun::Outcome::kCrashed;
    case FatalKind::kOutOfMemory:
      return CaseRun::Outcome::kOutOfMemory;
    case FatalKind::kForbiddenSyscall:
      return CaseRun::Outcome::kForbiddenSyscall;
    case FatalKind::kFileSizeLimit:
      return CaseRun::Outcome::kFileSizeLimit;
    case FatalKind::kDeviceError:
      return CaseRun::Outcome::kDeviceError;
    default:
      return CaseRun::Outcome::kRunnerLost;
  }
}

}  // namespace

CaseRun CandidateProcess::Call(uint64_t case_id, const TensorArena& arena, size_t num_inputs, int64_t timeout_ms,
                               RunOp op, int warmup, int reps, const BenchSamples& samples) {
  CaseRun run;
  if (!alive()) {
    run.message = "the candidate's process is no longer running";
    return run;
  }
  const RunRequest req = MakeRequest(case_id, arena, num_inputs, op, warmup, reps, samples);
  const int64_t cpu_before = cpu_clock_ != nullptr ? cpu_clock_->Nanos() : 0;
  // The call's time starts before the request is sent: the runner, woken by it, may take this
  // CPU and run the whole call before the send returns.
  const int64_t started = clock_.MonotonicNanos();
  if (!SendRequest(control_.get(), req, arena.fd())) return Gone(&run);
  // One deadline for the whole call: probe messages and other chatter do not extend it.
  int64_t deadline = started + timeout_ms * 1000000;
  ParsedReply parsed;
  int64_t go_sent = 0;
  for (;;) {
    if (!Receive(&parsed, deadline, case_id, &run)) return run;
    if (parsed.reply.kind == ReplyKind::kTimingReady) {
      if (op != RunOp::kBench || go_sent != 0)
        return Violation(&run, "the candidate's process asked to start a timed loop twice, or outside a timing run");
      RunGo go;
      go.case_id = case_id;
      go_sent = clock_.MonotonicNanos();
      if (::send(control_.get(), &go, sizeof go, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof go)) return Gone(&run);
      continue;
    }
    if (parsed.reply.kind != ReplyKind::kProbe) break;
    if (run.probes.size() < kMaxProbesPerCall) run.probes.push_back(ProbeOf(parsed));
  }
  const RunReply& reply = parsed.reply;
  CopyReply(reply, &run);
  run.engine_wall_ns = clock_.MonotonicNanos() - started;
  if (cpu_clock_ != nullptr && cpu_clock_->processes() > 0) run.engine_cpu_ns = cpu_clock_->Nanos() - cpu_before;
  if (go_sent != 0) run.paced_wall_ns = clock_.MonotonicNanos() - go_sent;
  run.message = parsed.message;
  if (reply.kind == ReplyKind::kDone && op == RunOp::kBench && go_sent == 0)
    return Violation(&run, "the candidate's process finished a timing run without waiting for the engine's go");
  if (reply.kind == ReplyKind::kDone) {
    run.outcome = CaseRun::Outcome::kReturned;
    return run;
  }
  if (reply.kind != ReplyKind::kFatal)
    return Violation(&run,
                     "the candidate's process sent an unexpected message on the control channel while a case ran");
  run.outcome = OutcomeOf(reply.fatal);
  if (run.outcome == CaseRun::Outcome::kForbiddenSyscall) run.message += ": " + SyscallName(run.syscall_nr);
  if (run.outcome == CaseRun::Outcome::kCrashed && run.signal > 0)
    run.message += " (" + DescribeSignal(run.signal) + ")";
  child_->Wait(2000);
  return run;
}

}  // namespace kforge
