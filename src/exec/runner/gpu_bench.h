#pragma once
// The GPU runner's timed loop (RunOp::kBench, see WireTiming in exec/runner_protocol.h): the
// candidate's calls on rotating copies of the arena with the L2 flushed before each, the
// CUPTI kernel-time pass, the engine's go, the event-timed loop. kforge-gpu-runner only; what
// it uses of the runner around it (exec/runner_main.cc) is declared here.
#include <cuda_runtime.h>
#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>

#include "exec/runner_protocol.h"

namespace kforge::runner {

using RunFn = int (*)(const DLTensor*, int, DLTensor*, int, void*);

/// L3 timing of `fn` on the request's arena (`host`, its inputs; the outputs come back there);
/// `rc` is the candidate's last return code, `done` gets the timing.
void BenchOnGpu(RunFn fn, const RunRequest& req, char* host, int* rc, RunReply* done);

// Defined in exec/runner_main.cc.
extern cudaStream_t g_stream;
extern bool g_counting_launches;
void SendReply(const RunReply& r);
[[noreturn]] void DieWith(FatalKind kind, int sig, int sysno, const char* msg);
[[noreturn]] void DieCuda(cudaError_t e, const char* where);
void CopyToDevice(void* dev, const void* host, size_t bytes, const char* what);
void ToDLTensor(const WireTensor& w, char* base, DLTensor* t);
bool L2PersistenceInUse();
int64_t NowNanos();

}  // namespace kforge::runner
