#pragma once
// GPU runner only: counts the kernels that actually ran on the device during one call of
// kforge_run, split by stream, from CUPTI's activity records. This is what the device did,
// not what the source says: a kernel defined but never launched, a launch skipped at run
// time, or work moved to another stream all show up here.
#include <cuda_runtime.h>

#include <string>

namespace kforge {

struct KernelCounts {
  int on_stream = 0;    ///< kernels on the stream kforge_run was given
  int off_stream = 0;   ///< kernels on any other stream (legacy default, private streams)
  int64_t busy_ns = 0;  ///< the kernels' own durations (CUPTI's start to end), every stream, summed
};

/// Starts CUPTI kernel activity recording. Call before the candidate is loaded. Returns
/// false (with the reason) when CUPTI cannot be used; launches are then not counted.
bool StartLaunchCounting(cudaStream_t stream, std::string* error);
/// Drains the activity buffers (after the device was synchronised) and returns the kernels
/// recorded since the previous call.
KernelCounts TakeKernelCounts();
/// Stops recording (the event-timed loop: activity records slow every launch).
void StopLaunchCounting();

}  // namespace kforge
