#include "exec/gpu/launch_counter.h"

#include <cupti.h>

#include <atomic>
#include <cstdlib>

namespace kforge {
namespace {

constexpr size_t kBufferBytes = 1 << 20;
uint32_t g_stream_id = 0;
std::atomic<int> g_on_stream{0};
std::atomic<int> g_off_stream{0};
std::atomic<int64_t> g_busy_ns{0};

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    (kernel->streamId == g_stream_id ? g_on_stream : g_off_stream)++;
    if (kernel->end > kernel->start) g_busy_ns += static_cast<int64_t>(kernel->end - kernel->start);
  }
  std::free(buffer);
}

std::string Describe(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s != nullptr ? s : "unknown CUPTI error";
}

}  // namespace

bool StartLaunchCounting(cudaStream_t stream, std::string* error) {
  CUptiResult r = cuptiGetStreamIdEx(nullptr, stream, 0, &g_stream_id);
  if (r == CUPTI_SUCCESS) r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  // Kernel timestamps from the hardware's event system where there is one (Blackwell);
  // elsewhere CUPTI instruments each kernel, which costs a grid of 262,144 blocks ~6% of its
  // time on an H100 (bench/results/h100_cupti_vs_ncu.md). Not supported: instrumented, as before.
  if (r == CUPTI_SUCCESS) cuptiActivityEnableHWTrace(1);
  if (r == CUPTI_SUCCESS) r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    *error = "CUPTI kernel activity unavailable: " + Describe(r);
    return false;
  }
  return true;
}

KernelCounts TakeKernelCounts() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  return KernelCounts{g_on_stream.exchange(0), g_off_stream.exchange(0), g_busy_ns.exchange(0)};
}

void StopLaunchCounting() {
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

}  // namespace kforge
