#include "exec/runner/gpu_bench.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <tuple>
#include <vector>

#include "exec/gpu/launch_counter.h"
#include "exec/runner/quantiles.h"

namespace kforge::runner {
namespace {

/// kBench: tells the engine the timed loop is ready and waits for its go (see RunGo).
void AwaitGo(uint64_t case_id) {
  RunReply ready;
  ready.kind = ReplyKind::kTimingReady;
  ready.case_id = case_id;
  SendReply(ready);
  RunGo go;
  ssize_t n;
  while ((n = ::recv(kControlFd, &go, sizeof go, 0)) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof go) || go.magic != kRunnerMagic || go.version != kRunnerProtocolVersion ||
      go.case_id != case_id)
    DieWith(FatalKind::kProtocol, 0, -1, "malformed go from the engine");
}

/// Calls of the kernel-time pass (BenchOnGpu), at most.
constexpr uint32_t kKernelTimeCalls = 20;

/// The device memory of the timed loop (BenchOnGpu): `rotations` copies of the arena, so a
/// call's inputs are not the ones the call before it left in L2, and a buffer twice the L2's
/// size that a memset between calls flushes it with.
struct BenchMemory {
  size_t flush_bytes = 0;
  void* flush = nullptr;
  uint32_t rotations = 1;
  std::vector<void*> arenas;
  std::vector<DLTensor> tensors;  // kMaxWireTensors a rotation
  BenchMemory() = default;
  BenchMemory(const BenchMemory&) = delete;
  BenchMemory& operator=(const BenchMemory&) = delete;
  ~BenchMemory() {
    for (void* a : arenas) cudaFree(a);
    cudaFree(flush);
  }
};

void AllocateBenchMemory(const RunRequest& req, const char* host, BenchMemory* m) {
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  size_t l2 = prop.l2CacheSize > 0 ? static_cast<size_t>(prop.l2CacheSize) : (64u << 20);
  m->flush_bytes = 2 * l2;
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  m->rotations = static_cast<uint32_t>(std::clamp<size_t>((4 * l2 + req.arena_bytes - 1) / req.arena_bytes, 1, 32));
  while (m->rotations > 1 && m->rotations * req.arena_bytes > free_bytes / 2) --m->rotations;
  if (cudaMalloc(&m->flush, m->flush_bytes) != cudaSuccess)
    DieWith(FatalKind::kOutOfMemory, 0, -1, "cudaMalloc of the L2 flush buffer failed");
  m->arenas.assign(m->rotations, nullptr);
  m->tensors.resize(static_cast<size_t>(m->rotations) * kMaxWireTensors);
  for (uint32_t r = 0; r < m->rotations; ++r) {
    if (cudaMalloc(&m->arenas[r], req.arena_bytes) != cudaSuccess)
      DieWith(FatalKind::kOutOfMemory, 0, -1, "cudaMalloc of a rotating tensor arena failed");
    CopyToDevice(m->arenas[r], host, req.arena_bytes, "copying inputs");
    for (uint32_t i = 0; i < req.num_inputs + req.num_outputs; ++i)
      ToDLTensor(req.tensors[i], static_cast<char*>(m->arenas[r]), &m->tensors[r * kMaxWireTensors + i]);
  }
}

/// Empties the L2 before a timed call: persisting lines survive a plain memset, so they are
/// reset first.
void FlushL2(const BenchMemory& m, uint32_t call) {
  cudaCtxResetPersistingL2Cache();
  cudaMemsetAsync(m.flush, static_cast<int>(call & 0xff), m.flush_bytes, g_stream);
}

/// The kernel-time pass: each call's kernels' own durations on every stream, summed (CUPTI's
/// records). Returns one figure a call; `kernels` counts the kernels they cover.
template <typename Call>
std::vector<double> TimeKernels(const Call& call, const RunRequest& req, const BenchMemory& m, int* rc,
                                uint32_t* kernels) {
  std::vector<double> kernel_ns;
  TakeKernelCounts();  // the warm-up's records
  const uint32_t calls = std::min(req.reps, kKernelTimeCalls);
  for (uint32_t i = 0; i < calls && *rc == 0; ++i) {
    FlushL2(m, i);
    *rc = call(i % m.rotations);
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) DieCuda(e, "while timing kernels");
    KernelCounts k = TakeKernelCounts();
    kernel_ns.push_back(static_cast<double>(k.busy_ns));
    *kernels += static_cast<uint32_t>(k.on_stream + k.off_stream);
  }
  return kernel_ns;
}

/// The event-timed loop: `req.reps` calls, each bracketed by CUDA events and followed by a
/// device-wide synchronise. A sampled call gets fresh inputs and poisoned outputs in the
/// arena it uses (same pointers), whose outputs go back to the sample's region of `host`
/// before the arena's inputs are restored. The last call lands on copy 0, whose outputs the
/// caller returns.
template <typename Call>
std::vector<double> TimeCalls(const Call& call, const RunRequest& req, char* host, const BenchMemory& m, int* rc,
                              RunReply* done) {
  std::vector<double> event_ns;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (uint32_t i = 0; i < req.reps && *rc == 0; ++i) {
    uint32_t r = i + 1 == req.reps ? 0 : (i + 1) % m.rotations;
    int sample = -1;
    for (uint32_t k = 0; k < req.samples; ++k)
      if (req.sample_calls[k] == i) sample = static_cast<int>(k);
    char* sample_host = sample < 0 ? nullptr : host + (sample + 1) * req.sample_stride;
    if (sample_host) CopyToDevice(m.arenas[r], sample_host, req.arena_bytes, "copying sample inputs");
    FlushL2(m, i);
    cudaEventRecord(start, g_stream);
    *rc = call(r);
    cudaEventRecord(stop, g_stream);
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) DieCuda(e, "during timing");
    if (L2PersistenceInUse()) done->flags |= kFlagL2Persistence;
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    event_ns.push_back(1e6 * ms);
    if (sample_host) {
      if (cudaError_t e = cudaMemcpy(sample_host, m.arenas[r], req.arena_bytes, cudaMemcpyDeviceToHost);
          e != cudaSuccess)
        DieCuda(e, "copying sample outputs");
      CopyToDevice(m.arenas[r], host, req.arena_bytes, "restoring the inputs after a sample");
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return event_ns;
}

}  // namespace

/// L3 timing (RunOp::kBench), see WireTiming. Inputs are the arena's; every timed call is
/// bracketed by CUDA events on the given stream and followed by a device-wide synchronise,
/// so no call overlaps the next one's timing and no stream is left running. Before it, where
/// CUPTI records kernel activity, a pass of its own (after the warm-up, before the engine's
/// go, with the same L2 thrash and synchronise a call) sums each call's kernels' own
/// durations on every stream: the kernel time, without launch overhead or gaps. Not in the
/// event-timed loop: CUPTI's records slow every launch (on an H100, relu's event median went
/// from ~235 us to 420-610 us with recording on, its spread from <1% to ~50%).
void BenchOnGpu(RunFn fn, const RunRequest& req, char* host, int* rc, RunReply* done) {
  BenchMemory m;
  AllocateBenchMemory(req, host, &m);
  auto call = [&](uint32_t r) {
    DLTensor* t = &m.tensors[r * kMaxWireTensors];
    return fn(t, static_cast<int>(req.num_inputs), t + req.num_inputs, static_cast<int>(req.num_outputs), g_stream);
  };
  *rc = 0;
  for (uint32_t w = 0; w < req.warmup && *rc == 0; ++w) *rc = call(w % m.rotations);
  cudaError_t e;
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) DieCuda(e, "during warm-up");
  std::vector<double> kernel_ns;
  uint32_t kernels = 0;
  if (g_counting_launches) kernel_ns = TimeKernels(call, req, m, rc, &kernels);
  StopLaunchCounting();
  AwaitGo(req.case_id);
  int64_t loop_start = NowNanos();
  std::vector<double> event_ns = TimeCalls(call, req, host, m, rc, done);
  int64_t loop_wall = NowNanos() - loop_start;
  if ((e = cudaGetLastError()) != cudaSuccess) DieCuda(e, "after timing");
  if ((e = cudaMemcpy(host, m.arenas[0], req.arena_bytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
    DieCuda(e, "copying outputs");
  WireTiming& t = done->timing;
  t.reps = static_cast<uint32_t>(event_ns.size());
  t.rotations = m.rotations;
  t.flush_bytes = m.flush_bytes;
  t.loop_wall_ns = loop_wall;
  const LoopQuantiles ev = QuantilesOf(event_ns);
  std::tie(t.median_ns, t.mean_ns, t.min_ns, t.max_ns, t.p10_ns, t.p90_ns) =
      std::tie(ev.median, ev.mean, ev.min, ev.max, ev.p10, ev.p90);
  if (kernels == 0) return;  // CUPTI recorded none: no kernel time
  const LoopQuantiles k = QuantilesOf(kernel_ns);
  t.kernels = kernels;
  t.kernel_calls = static_cast<uint32_t>(kernel_ns.size());
  std::tie(t.kernel_median_ns, t.kernel_mean_ns, t.kernel_min_ns, t.kernel_max_ns, t.kernel_p10_ns, t.kernel_p90_ns) =
      std::tie(k.median, k.mean, k.min, k.max, k.p10, k.p90);
}

}  // namespace kforge::runner
