// kforge-runner: the sandboxed child. Two modes:
//   kforge-runner exec [limits] -- PROGRAM ARGS...   set resource limits, then exec (compilers)
//   kforge-runner confine [limits] [confinement] --layers-fd FD -- PROGRAM ARGS...
//       the candidate's confinement with child processes allowed, then exec (the PyTorch
//       worker); the layers that held are written to FD as a decimal number first
//   kforge-runner run [limits] --so CANDIDATE.so     load a candidate and serve RunRequests
// Built a second time with KFORGE_GPU_RUNNER as kforge-gpu-runner: tensors are copied to
// device memory (guards and poison included) and back, kforge_run gets a stream, every
// stream is synchronised before anything is read, and a CUDA error ends the process (a
// sticky error poisons the context). It also has a mode `device` that prints the GPU.
// Limits: --as BYTES (address space), --fsize BYTES (largest file written), --nofile N.
// It runs inside bubblewrap when the sandbox is on; the seccomp filter and limits below
// apply in both cases. The candidate is loaded only after the filter is installed, so its
// static constructors are confined too.
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "exec/runner/arena_mapping.h"
#include "exec/runner/confine.h"
#include "exec/runner/quantiles.h"
#include "exec/runner_protocol.h"

#ifdef KFORGE_GPU_RUNNER
#include <cuda_runtime.h>

#include "exec/gpu/calibrate.h"
#include "exec/gpu/device_description.h"
#include "exec/gpu/launch_counter.h"
#include "exec/runner/gpu_bench.h"
#endif

namespace kforge::runner {

using RunFn = int (*)(const DLTensor*, int, DLTensor*, int, void*);

#ifdef KFORGE_GPU_RUNNER
cudaStream_t g_stream = nullptr;
bool g_counting_launches = false;
/// --separate-allocations (runs under compute-sanitizer): one exact-size cudaMalloc per
/// tensor instead of one arena, so that memcheck sees a write past a tensor's end.
bool g_separate_allocations = false;
std::string g_launch_counting_error;
#endif

uint64_t g_current_case = 0;
rlim_t g_as_limit = 0;
WireProbe g_probes[kMaxProbesPerCall];
int g_probe_count = 0;

void SendReply(const RunReply& r) {
  // send() is async-signal-safe; this is also called from signal handlers.
  while (::send(kControlFd, &r, sizeof r, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

void CopyMessage(RunReply* r, const char* msg) {
  size_t n = std::strlen(msg);
  if (n >= sizeof r->message) n = sizeof r->message - 1;
  std::memcpy(r->message, msg, n);
  r->message[n] = '\0';
}

[[noreturn]] void DieWith(FatalKind kind, int sig, int sysno, const char* msg) {
  RunReply r;
  r.kind = ReplyKind::kFatal;
  r.fatal = kind;
  r.case_id = g_current_case;
  r.signal = sig;
  r.syscall_nr = sysno;
  CopyMessage(&r, msg);
  SendReply(r);
  _exit(128 + (sig > 0 ? sig : 0));
}

/// Address-space size in bytes from /proc/self/statm, using only async-signal-safe calls.
uint64_t AddressSpaceBytes() {
  int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  uint64_t pages = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) pages = pages * 10 + (buf[i] - '0');
  return pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

void OnCrash(int sig, siginfo_t* info, void*) {
  if (sig == SIGSYS) {
    DieWith(FatalKind::kForbiddenSyscall, sig, info->si_syscall,
            "the candidate made a system call the sandbox forbids");
  }
  if (sig == SIGXFSZ) DieWith(FatalKind::kFileSizeLimit, sig, -1, "file size limit exceeded");
  // A crash close to the address-space limit is almost always a failed allocation whose
  // null result was used; call it memory exhaustion rather than a plain crash.
  if (g_as_limit != 0 && g_as_limit != RLIM_INFINITY && AddressSpaceBytes() > g_as_limit / 10 * 9)
    DieWith(FatalKind::kOutOfMemory, sig, -1, "crashed at the address-space limit");
  DieWith(FatalKind::kCrashSignal, sig, -1, "the candidate crashed");
}

void OnNewFailure() { DieWith(FatalKind::kOutOfMemory, 0, -1, "operator new failed: out of memory"); }

void InstallCrashHandlers() {
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = OnCrash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGXFSZ}) ::sigaction(sig, &sa, nullptr);
  std::set_new_handler(OnNewFailure);
}

struct Limits {
  rlim_t as = 0, fsize = 0, nofile = 0;
};

void ApplyLimits(const Limits& l) {
  auto set = [](int res, rlim_t v) {
    if (v == 0) return;
    rlimit r{v, v};
    ::setrlimit(res, &r);
  };
  set(RLIMIT_AS, l.as);
  set(RLIMIT_FSIZE, l.fsize);
  set(RLIMIT_NOFILE, l.nofile);
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);
  g_as_limit = l.as;
}

int CountThreads() {
  int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  // Field 20 is num_threads; fields after the ")" that ends the command name.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return -1;
  int field = 2;
  for (; *p && field < 20; ++p)
    if (*p == ' ') ++field;
  return std::atoi(p);
}

[[maybe_unused]] int64_t NowNanos() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

bool ReceiveRequest(RunRequest* req, int* arena_fd) {
  char control[CMSG_SPACE(sizeof(int))];
  iovec iov{req, sizeof *req};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = ::recvmsg(kControlFd, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n == 0) return false;  // engine closed the socket: we are done
  *arena_fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(arena_fd, CMSG_DATA(c), sizeof(int));
  if (n != static_cast<ssize_t>(sizeof *req) || req->magic != kRunnerMagic || req->version != kRunnerProtocolVersion ||
      *arena_fd < 0 || req->num_inputs + req->num_outputs > kMaxWireTensors ||
      (req->op != RunOp::kRun && req->op != RunOp::kBench) || req->warmup > 100000 || req->reps > 100000 ||
      req->samples > kMaxBenchSamples)
    DieWith(FatalKind::kProtocol, 0, -1, "malformed request from the engine");
  if (req->mapped_bytes == 0) req->mapped_bytes = req->arena_bytes;
  if (req->mapped_bytes < req->arena_bytes + uint64_t{req->samples} * req->sample_stride)
    DieWith(FatalKind::kProtocol, 0, -1, "malformed request from the engine: samples outside the arena");
  for (uint32_t k = 0; k < req->samples; ++k)
    if (req->sample_calls[k] >= req->reps) DieWith(FatalKind::kProtocol, 0, -1, "malformed request: sample call");
  return true;
}

void ToDLTensor(const WireTensor& w, char* base, DLTensor* t) {
  t->data = base + w.offset;
#ifdef KFORGE_GPU_RUNNER
  t->device = DLDevice{kDLCUDA, 0};
#else
  t->device = DLDevice{kDLCPU, 0};
#endif
  t->ndim = w.ndim;
  t->dtype = DLDataType{w.code, w.bits, 1};
  t->shape = const_cast<int64_t*>(w.shape);
  t->strides = nullptr;
  t->byte_offset = 0;
}

void SendProbes() {
  for (int i = 0; i < g_probe_count; ++i) {
    RunReply r;
    r.kind = ReplyKind::kProbe;
    r.case_id = g_current_case;
    r.probe = g_probes[i];
    SendReply(r);
  }
  g_probe_count = 0;
}

#ifdef KFORGE_GPU_RUNNER
[[noreturn]] void DieCuda(cudaError_t e, const char* where) {
  char msg[300];
  std::snprintf(msg, sizeof msg, "CUDA error %s: %s (%s)", where, cudaGetErrorName(e), cudaGetErrorString(e));
  DieWith(FatalKind::kDeviceError, 0, -1, msg);
}

/// The persisting-L2 limit and the stream's access-policy window as the runner left them
/// before loading the candidate (the driver's defaults are not always 0).
size_t g_l2_limit_before = 0;
size_t g_window_before = 0;

void RecordL2Persistence(size_t* limit, size_t* window) {
  *limit = *window = 0;
  cudaDeviceGetLimit(limit, cudaLimitPersistingL2CacheSize);
  cudaStreamAttrValue attr{};
  if (cudaStreamGetAttribute(g_stream, cudaStreamAttributeAccessPolicyWindow, &attr) == cudaSuccess)
    *window = attr.accessPolicyWindow.num_bytes;
}

/// Whether the candidate changed the persisting-L2 limit or the stream's access-policy
/// window (see kFlagL2Persistence).
bool L2PersistenceInUse() {
  size_t limit, window;
  RecordL2Persistence(&limit, &window);
  return limit != g_l2_limit_before || window != g_window_before;
}

/// Initialised before the seccomp filter: driver start-up touches more of the system than
/// later calls do.
bool InitGpu(std::string* error) {
  // Precision is pinned: no library may silently use TF32 for fp32 matrix products.
  ::setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    // Without a driver the runtime says "driver version is insufficient": say what is missing.
    if (::access("/proc/driver/nvidia/version", R_OK) != 0)
      *error = "no NVIDIA driver is loaded on this machine (no /proc/driver/nvidia/version)";
    else
      *error = std::string("no usable CUDA device: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return false;
  }
  if ((e = cudaSetDevice(0)) != cudaSuccess || (e = cudaFree(nullptr)) != cudaSuccess ||
      (e = cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking)) != cudaSuccess) {
    *error = std::string("cannot initialise the CUDA device: ") + cudaGetErrorString(e);
    return false;
  }
  g_counting_launches = StartLaunchCounting(g_stream, &g_launch_counting_error);
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  RecordL2Persistence(&g_l2_limit_before, &g_window_before);
  return true;
}

/// One call on the GPU: the whole arena (guards and poison included) goes to the device and
/// comes back, so the engine checks device-side writes exactly as host ones. Returns the
/// kernel time from CUDA events.
size_t WireBytes(const WireTensor& w) {
  size_t n = (w.bits + 7) / 8;
  for (int d = 0; d < w.ndim; ++d) n *= static_cast<size_t>(w.shape[d]);
  return n;
}

/// A host-to-device copy that has landed when it returns. A pageable cudaMemcpy returns once
/// the host buffer is staged, before its DMA completes, and the candidate's stream (created
/// non-blocking) does not wait on the legacy stream that copy used: without the synchronise,
/// calls on a loaded H200 read half-copied inputs and the late copy of the output poison
/// overwrote what the kernel had written.
void CopyToDevice(void* dev, const void* host, size_t bytes, const char* what) {
  cudaError_t e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) DieCuda(e, what);
}

/// One call with every tensor in its own allocation (see g_separate_allocations).
void RunSeparately(RunFn fn, const RunRequest& req, char* host, int* rc) {
  const uint32_t n = req.num_inputs + req.num_outputs;
  DLTensor tensors[kMaxWireTensors];
  void* ptrs[kMaxWireTensors] = {};
  cudaError_t e;
  for (uint32_t i = 0; i < n; ++i) {
    size_t bytes = WireBytes(req.tensors[i]);
    if (cudaMalloc(&ptrs[i], bytes) != cudaSuccess)
      DieWith(FatalKind::kOutOfMemory, 0, -1, "cudaMalloc of a tensor failed");
    CopyToDevice(ptrs[i], host + req.tensors[i].offset, bytes, "copying inputs");
    WireTensor w = req.tensors[i];
    w.offset = 0;
    ToDLTensor(w, static_cast<char*>(ptrs[i]), &tensors[i]);
  }
  *rc = fn(tensors, static_cast<int>(req.num_inputs), tensors + req.num_inputs, static_cast<int>(req.num_outputs),
           g_stream);
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) DieCuda(e, "after kforge_run");
  for (uint32_t i = 0; i < n; ++i) {
    if ((e = cudaMemcpy(host + req.tensors[i].offset, ptrs[i], WireBytes(req.tensors[i]), cudaMemcpyDeviceToHost)) !=
        cudaSuccess)
      DieCuda(e, "copying outputs");
    cudaFree(ptrs[i]);
  }
}

int64_t RunOnGpu(RunFn fn, const RunRequest& req, char* host, int* rc, RunReply* done) {
  if (g_separate_allocations) {
    RunSeparately(fn, req, host, rc);
    return 0;
  }
  void* dev = nullptr;
  cudaError_t e = cudaMalloc(&dev, req.arena_bytes);
  if (e != cudaSuccess) DieWith(FatalKind::kOutOfMemory, 0, -1, "cudaMalloc of the tensor arena failed");
  CopyToDevice(dev, host, req.arena_bytes, "copying inputs");
  DLTensor tensors[kMaxWireTensors];
  for (uint32_t i = 0; i < req.num_inputs + req.num_outputs; ++i)
    ToDLTensor(req.tensors[i], static_cast<char*>(dev), &tensors[i]);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, g_stream);
  *rc = fn(tensors, static_cast<int>(req.num_inputs), tensors + req.num_inputs, static_cast<int>(req.num_outputs),
           g_stream);
  cudaEventRecord(stop, g_stream);
  // Every stream, not just ours: work hidden on another stream must finish before reading.
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) DieCuda(e, "after kforge_run");
  if ((e = cudaGetLastError()) != cudaSuccess) DieCuda(e, "after kforge_run");
  if (L2PersistenceInUse()) done->flags |= kFlagL2Persistence;
  if (g_counting_launches) {
    KernelCounts k = TakeKernelCounts();
    done->kernels_on_stream = k.on_stream;
    done->kernels_off_stream = k.off_stream;
  } else {
    CopyMessage(done, g_launch_counting_error.c_str());
  }
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if ((e = cudaMemcpy(host, dev, req.arena_bytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
    DieCuda(e, "copying outputs");
  cudaFree(dev);
  return static_cast<int64_t>(ms * 1e6);
}

/// Modes `device` and `calibrate`: the GPU's description or its measured ceilings as JSON on
/// stdout; exit 3, with the reason on stderr, without a usable GPU.
int DescribeGpu(bool calibrate, const std::string& cublas) {
  std::string error;
  if (!InitGpu(&error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 3;
  }
  return calibrate ? CalibrateDevice(cublas) : PrintDeviceDescription();
}

#endif

/// Tells the engine the candidate could not be loaded, and why.
int LoadFailed(const char* why) {
  RunReply r;
  r.kind = ReplyKind::kLoadFailed;
  CopyMessage(&r, why);
  SendReply(r);
  return 1;
}

int Serve(const char* so_arg, ConfineOptions confine) {
  std::string error;
  // Scratch and the candidate are reached now, as the engine's user: after a change of user
  // their paths may lead through directories only the engine can enter (a private TMPDIR).
  if (!confine.scratch.empty() && ::chdir(confine.scratch.c_str()) != 0)
    return LoadFailed("cannot enter the scratch directory");
  int so_fd = ::open(so_arg, O_RDONLY | O_CLOEXEC);
  if (so_fd < 0) return LoadFailed((std::string("cannot open the candidate: ") + std::strerror(errno)).c_str());
  const std::string so = "/proc/self/fd/" + std::to_string(so_fd);
  std::replace(confine.read_only.begin(), confine.read_only.end(), std::string(so_arg), so);
  const char* so_path = so.c_str();
  uint32_t layers = ConfineEarly(confine);
#ifdef KFORGE_GPU_RUNNER
  if (!InitGpu(&error)) return LoadFailed(error.c_str());
#endif
  if (!ConfineLate(confine, &layers, &error)) return LoadFailed(error.c_str());
  // Confinement is in place and no candidate code has run: this report cannot be forged.
  RunReply hello;
  hello.kind = ReplyKind::kHello;
  hello.layers = layers;
  SendReply(hello);
  // Threads alive before the candidate's static constructors run: the baseline every later
  // count is compared with, so a thread started at load time is never part of it.
  const int baseline_threads = CountThreads();
  void* handle = ::dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  RunFn fn = handle ? reinterpret_cast<RunFn>(::dlsym(handle, "kforge_run")) : nullptr;
  if (fn == nullptr) {
    const char* why = ::dlerror();
    return LoadFailed(handle == nullptr ? (why ? why : "dlopen failed")
                                        : "the candidate does not export extern \"C\" kforge_run");
  }
  RunReply ready;
  ready.kind = ReplyKind::kReady;
  int loaded_threads = CountThreads();
  ready.threads_after = 1 + (loaded_threads > baseline_threads ? loaded_threads - baseline_threads : 0);
  SendReply(ready);

  RunRequest req;
  int arena_fd = -1;
  ArenaMapping arena;
  while (ReceiveRequest(&req, &arena_fd)) {
    g_current_case = req.case_id;
    char* base = arena.Map(arena_fd, req.mapped_bytes, req.keep_arena_id);
    if (base == nullptr) DieWith(FatalKind::kOutOfMemory, 0, -1, "cannot map the tensor arena");
    int rc = 0;
#ifdef KFORGE_GPU_RUNNER
    // The CUDA runtime starts helper threads of its own on first use: count per call.
    int threads_before = CountThreads();
#else
    int threads_before = baseline_threads;
#endif
    RunReply done;
#ifdef KFORGE_GPU_RUNNER
    int64_t elapsed = 0;
    if (req.op == RunOp::kBench)
      BenchOnGpu(fn, req, base, &rc, &done);
    else
      elapsed = RunOnGpu(fn, req, base, &rc, &done);
#else
    if (req.op != RunOp::kRun) DieWith(FatalKind::kProtocol, 0, -1, "timing runs need the GPU runner");
    DLTensor tensors[kMaxWireTensors];
    for (uint32_t i = 0; i < req.num_inputs + req.num_outputs; ++i) ToDLTensor(req.tensors[i], base, &tensors[i]);
    int64_t start = NowNanos();
    rc = fn(tensors, static_cast<int>(req.num_inputs), tensors + req.num_inputs, static_cast<int>(req.num_outputs),
            nullptr);
    int64_t elapsed = NowNanos() - start;
#endif
    SendProbes();
    done.kind = ReplyKind::kDone;
    done.case_id = req.case_id;
    done.rc = rc;
    done.elapsed_ns = elapsed;
    // Reported as 1 + the threads this call left behind. The CUDA runtime starts helper
    // threads of its own on first use, so on the GPU runner the first call only sets the
    // baseline; a candidate that leaks a thread per call is caught on the next one (every
    // light case runs twice). A joined thread can still be counted for a moment while the
    // kernel tears it down: only threads that survive a short grace period count.
    [[maybe_unused]] static bool first_call = true;
    int after = CountThreads();
    for (int i = 0; i < 50 && after > threads_before; ++i) {
      ::usleep(1000);
      after = CountThreads();
    }
#ifdef KFORGE_GPU_RUNNER
    if (first_call) after = threads_before;
#endif
    first_call = false;
    done.threads_after = 1 + (after > threads_before ? after - threads_before : 0);
    arena.EndCall();
    SendReply(done);
  }
  return 0;
}

#ifndef KFORGE_GPU_RUNNER
/// CPU runner: runs itself once more under glibc's checking allocator (libc_malloc_debug,
/// malloc.check=3), so that a candidate writing past its own heap buffers aborts when the
/// buffer is freed instead of corrupting memory silently. A no-op where the library is
/// missing or this already is the checked run.
void RestartWithCheckedMalloc(int argc, char** argv) {
  for (const char* lib :
       {"/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0", "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0",
        "/usr/lib/aarch64-linux-gnu/libc_malloc_debug.so.0", "/usr/lib64/libc_malloc_debug.so.0"}) {
    if (::access(lib, R_OK) != 0) continue;
    ::setenv("LD_PRELOAD", lib, 1);
    ::setenv("GLIBC_TUNABLES", "glibc.malloc.check=3", 1);
    // The same arguments with --malloc-checked after the mode, so the next run stops here.
    std::vector<char*> args(argv, argv + argc);
    args.insert(args.begin() + 2, const_cast<char*>("--malloc-checked"));
    args.push_back(nullptr);
    ::execv("/proc/self/exe", args.data());
    return;  // exec failed: go on unchecked
  }
}
#endif

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: kforge-runner exec [--as B] [--fsize B] [--nofile N] -- PROGRAM ARGS...\n"
               "       kforge-runner confine [limits] [--scratch DIR] [--read PATH]... [--uid U] [--tasks N]\n"
               "                             [--allow-processes] [--gpu] [--layers-fd FD] [--without LAYER]...\n"
               "                             [--landlock-allow PATH]... [--landlock-unscoped] -- PROGRAM ARGS...\n"
               "       kforge-runner run [--as B] [--fsize B] [--nofile N] [--tasks N] [--cgroup-fd FD] [--uid U]\n"
               "                         [--scratch DIR] [--read PATH]... [--in-jail] --so CANDIDATE.so\n"
               "kforge-runner is started by kforge; it is not meant to be run by hand.\n");
  std::exit(2);
}

}  // namespace kforge::runner

/// Called by candidates through KFORGE_PROBE (include/kforge/probe.h), resolved against
/// this executable (linked with --export-dynamic). Candidate code calls it, so it only
/// summarises what it is given and never trusts `count` beyond a sanity bound.
extern "C" __attribute__((visibility("default"))) void kforge_probe_record(const char* name, const float* data,
                                                                           long count) {
  using namespace kforge;          // NOLINT
  using namespace kforge::runner;  // NOLINT
  if (g_probe_count >= kMaxProbesPerCall || data == nullptr || count < 0 || count > (1L << 31)) return;
  WireProbe& p = g_probes[g_probe_count++];
  p = WireProbe{};
  std::strncpy(p.name, name ? name : "?", sizeof p.name - 1);
  p.count = count;
  double sum = 0, sum_sq = 0;
  int64_t finite = 0;
  p.min = INFINITY;
  p.max = -INFINITY;
  for (long i = 0; i < count; ++i) {
    float v = data[i];
    if (i < kProbeSample) p.sample[i] = v;
    if (std::isnan(v)) {
      ++p.nan_count;
      continue;
    }
    if (std::isinf(v)) {
      ++p.inf_count;
      continue;
    }
    ++finite;
    sum += v;
    sum_sq += static_cast<double>(v) * v;
    p.min = std::min<double>(p.min, v);
    p.max = std::max<double>(p.max, v);
  }
  if (finite > 0) {
    p.mean = sum / finite;
    p.stddev = std::sqrt(std::max(0.0, sum_sq / finite - p.mean * p.mean));
  } else {
    p.min = p.max = 0;
  }
}

int main(int argc, char** argv) {
  using namespace kforge;          // NOLINT: the entry point only
  using namespace kforge::runner;  // NOLINT
  if (argc < 2) Usage();
  std::string mode = argv[1];
  Limits limits;
  ConfineOptions confine;
  const char* so = nullptr;
  [[maybe_unused]] bool malloc_checked = false;
  std::string cublas;
  int layers_fd = -1;
  int i = 2;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> rlim_t {
      if (i + 1 >= argc) Usage();
      return std::strtoull(argv[++i], nullptr, 10);
    };
    if (a == "--as")
      limits.as = value();
    else if (a == "--fsize")
      limits.fsize = value();
    else if (a == "--nofile")
      limits.nofile = value();
    else if (a == "--so" && i + 1 < argc)
      so = argv[++i];
    else if (a == "--scratch" && i + 1 < argc)
      confine.scratch = argv[++i];
    else if (a == "--read" && i + 1 < argc)
      confine.read_only.push_back(argv[++i]);
    else if (a == "--tasks")
      confine.max_tasks = value();
    else if (a == "--in-jail")
      confine.in_jail = true;
    else if (a == "--uid")
      confine.uid = static_cast<unsigned>(value());
    else if (a == "--cgroup-fd")
      confine.cgroup_procs_fd = static_cast<int>(value());
    else if (a == "--allow-processes")
      confine.allow_processes = true;
    else if (a == "--gpu")
      confine.gpu = true;
    else if (a == "--landlock-allow" && i + 1 < argc)
      confine.landlock_allow.push_back(argv[++i]);
    else if (a == "--landlock-unscoped")
      confine.landlock_unscoped = true;
    else if (a == "--without" && i + 1 < argc) {
      std::string layer = argv[++i];
      confine.without |= layer == "landlock"          ? kLayerLandlock
                         : layer == "seccomp"         ? kLayerSeccomp
                         : layer == "user_namespace"  ? kLayerUserNamespace
                         : layer == "no_capabilities" ? kLayerNoCapabilities
                                                      : 0u;
    } else if (a == "--layers-fd")
      layers_fd = static_cast<int>(value());
    else if (a == "--malloc-checked")
      malloc_checked = true;
    else if (a == "--cublas" && i + 1 < argc)
      cublas = argv[++i];
#ifdef KFORGE_GPU_RUNNER
    else if (a == "--separate-allocations")
      g_separate_allocations = true;
#endif
    else if (a == "--") {
      ++i;
      break;
    } else
      Usage();
  }
#ifdef KFORGE_GPU_RUNNER
  if (mode == "device" || mode == "calibrate") return DescribeGpu(mode == "calibrate", cublas);
#endif
  ApplyLimits(limits);
  if (mode == "exec") {
    if (i >= argc) Usage();
    ::execvp(argv[i], argv + i);
    std::fprintf(stderr, "kforge-runner: cannot run %s: %s\n", argv[i], std::strerror(errno));
    return 127;
  }
  if (mode == "confine") {
    if (i >= argc) Usage();
    return ConfineAndExec(confine, layers_fd, argv + i);
  }
  if (mode == "run" && so != nullptr) {
#ifndef KFORGE_GPU_RUNNER
    if (!malloc_checked) RestartWithCheckedMalloc(argc, argv);
#endif
    InstallCrashHandlers();
#ifdef KFORGE_GPU_RUNNER
    confine.gpu = true;
#endif
    return Serve(so, confine);
  }
  Usage();
}
